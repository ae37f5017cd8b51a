//! Codex as a coding agent in the workspace (the `codex` provider, harness
//! `codex_exec`, mode `workspace`).
//!
//! Command: `codex exec --json --skip-git-repo-check --sandbox <sandbox>
//! [--model <model>] -`, the case's prompt on stdin, run by the host in a
//! fresh copy of the workspace with the operator's `CODEX_HOME` (or, with
//! `agent.codexHome: isolated`, a temporary one holding only its
//! `auth.json` and `config.toml`). Permissions (`agent.permissions`):
//! `read-only` (default) is `--sandbox read-only`, `edit`
//! `workspace-write`, `full` `danger-full-access`.
//!
//! Observed from the `--json` events: every `command_execution` (as the
//! tool call `exec_command {cmd}`, succeeded when it completed with exit
//! code 0), `file_change` (`apply_patch {changes}`), `mcp_tool_call`
//! (`<server>.<tool>`) and `web_search`, in order; files read by shell
//! commands; instruction files (read, or `AGENTS.md` /
//! `AGENTS.override.md` at the root, which Codex loads itself); skills (a
//! `SKILL.md` read); turns; the thread id; tokens from `turn.completed`,
//! and the cost derived from [`crate::prices`]. Codex does not say which
//! model answered: the one recorded is the pinned one, or `codex-default`.
//! A command Codex's sandbox refused may be missing from its events.

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::process::{Command, Output};
use cautilus_sdk::{Observation, PluginError};
use serde_json::{Value, json};

use crate::agent_trace::{
    TOOL_OUTPUT_CHARS, TraceBuilder, clip, last_json_object, relative, tool_call,
};
use crate::claude_code::{AgentOptions, prompt};
use crate::codex_turns::CodexTurns;

pub const NAME: &str = "codex";
pub const HARNESS: &str = "codex_exec";
pub const PROGRAM: &str = "codex";

/// The command of one invocation.
pub fn command(request: &Invocation, timeout_ms: u32) -> Result<Command, PluginError> {
    let agent = AgentOptions::of(request);
    let sandbox =
        agent.permission_mode(NAME, ["read-only", "workspace-write", "danger-full-access"])?;
    let mut args: Vec<String> = [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        sandbox,
    ]
    .map(String::from)
    .to_vec();
    if let Some(model) = agent.pinned_model(request) {
        args.extend(["--model".into(), model]);
    }
    args.push("-".into());
    Ok(Command {
        program: PROGRAM.into(),
        args,
        stdin: Some(prompt(NAME, request)?.into_bytes()),
        cwd: None,
        env: vec![("NO_COLOR".into(), "1".into())],
        timeout_ms: Some(timeout_ms),
    })
}

/// Instruction files Codex loads itself from the working directory.
const LOADS: &[&str] = &["AGENTS.override.md", "AGENTS.md"];

/// The command inside `bash -lc '<command>'` (how Codex reports a shell
/// command), or the command as it is.
fn inner_command(command: &str) -> String {
    let trimmed = command.trim();
    for shell in [
        "/bin/bash -lc ",
        "bash -lc ",
        "/bin/sh -c ",
        "sh -c ",
        "/bin/zsh -lc ",
    ] {
        if let Some(rest) = trimmed.strip_prefix(shell) {
            let rest = rest.trim();
            if rest.len() >= 2
                && ((rest.starts_with('\'') && rest.ends_with('\''))
                    || (rest.starts_with('"') && rest.ends_with('"')))
            {
                return rest[1..rest.len() - 1].replace("'\\''", "'");
            }
            return rest.to_string();
        }
    }
    trimmed.to_string()
}

/// The observation of a finished `codex exec --json` in a workspace.
pub fn observation(request: &Invocation, output: &Output) -> Result<Observation, PluginError> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.truncated {
        return Err(PluginError::failed(format!(
            "{NAME}: the agent's event stream outgrew the host's output limit; the run cannot be observed whole"
        )));
    }
    let agent = AgentOptions::of(request);
    let mut trace = TraceBuilder::new();
    trace.root = agent.root.clone();
    trace.harness_loads(LOADS, &agent.root_entries);
    let mut calls = Vec::new();
    let mut text: Option<String> = None;
    let mut turns = CodexTurns::default();
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        turns.take(&event);
        match event.get("type").and_then(Value::as_str) {
            Some("thread.started") => {
                trace.trace.session_id = event
                    .get("thread_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            Some("item.completed") => {
                let item = &event["item"];
                let status = item.get("status").and_then(Value::as_str);
                match item.get("type").and_then(Value::as_str) {
                    Some("agent_message") => {
                        text = item.get("text").and_then(Value::as_str).map(str::to_string);
                    }
                    Some("command_execution") => {
                        let command = inner_command(
                            item.get("command").and_then(Value::as_str).unwrap_or(""),
                        );
                        trace.command(&command);
                        let mut call = tool_call("exec_command", &json!({"cmd": command}));
                        call.succeeded = Some(
                            status == Some("completed")
                                && item.get("exit_code").and_then(Value::as_i64) == Some(0),
                        );
                        call.output = item
                            .get("aggregated_output")
                            .and_then(Value::as_str)
                            .map(|o| clip(o, TOOL_OUTPUT_CHARS));
                        calls.push(call);
                    }
                    Some("file_change") => {
                        let changes: Vec<Value> = item
                            .get("changes")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(|c| {
                                json!({
                                    "path": relative(c.get("path").and_then(Value::as_str).unwrap_or(""), trace.root.as_deref()),
                                    "kind": c.get("kind"),
                                })
                            })
                            .collect();
                        let mut call = tool_call("apply_patch", &json!({"changes": changes}));
                        call.succeeded = Some(status == Some("completed"));
                        calls.push(call);
                    }
                    Some("mcp_tool_call") => {
                        let server = item.get("server").and_then(Value::as_str).unwrap_or("mcp");
                        let tool = item.get("tool").and_then(Value::as_str).unwrap_or("tool");
                        let arguments = item.get("arguments").cloned().unwrap_or(Value::Null);
                        let mut call = tool_call(&format!("{server}.{tool}"), &arguments);
                        call.succeeded = Some(status == Some("completed"));
                        calls.push(call);
                    }
                    Some("web_search") => {
                        let query = item.get("query").cloned().unwrap_or(Value::Null);
                        calls.push(tool_call("web_search", &json!({"query": query})));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let Some(text) = text.filter(|_| turns.completed(output)) else {
        return Err(turns.no_answer(NAME, output));
    };
    trace.trace.turns = Some(turns.turns);
    trace.trace.transcript = Some(stdout.into_owned());
    let model = agent
        .pinned_model(request)
        .unwrap_or_else(|| "codex-default".into());
    let (cost_usd, cost_source) = turns.cost(&model);
    let mut messages = request.messages.clone();
    messages.push(cautilus_sdk::Message {
        role: "assistant".into(),
        content: text.clone(),
    });
    Ok(Observation {
        structured: last_json_object(&text),
        final_text: Some(text),
        messages,
        tool_calls: Some(calls),
        usage: turns.usage(),
        cost_usd,
        cost_source,
        retries: None,
        duration_ms: None,
        provider: Some("openai".into()),
        model: Some(model),
        harness: Some(HARNESS.into()),
        mode: Some("workspace".into()),
        trace: Some(trace.trace),
    })
}

/// What to do when `codex` is not installed.
pub const INSTALL: &str =
    "install Codex (`npm install -g @openai/codex`) and log in (`codex login`)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::output;

    fn invocation(options: &str) -> Invocation {
        crate::test_support::invocation(
            "q",
            "workspace",
            "Which command runs the tests?",
            Some(options),
        )
    }

    /// A real `codex exec --json` run (Codex 0.169.0 against a scripted
    /// loopback model): `cat AGENTS.md | head -3`, `ls -la`, then the answer.
    const STREAM: &str = include_str!("testdata/codex-exec-stream.jsonl");

    #[test]
    fn the_command_maps_permissions_to_the_sandbox() {
        let read_only = command(&invocation("{}"), 1000).unwrap();
        assert_eq!(
            read_only.args,
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "-"
            ]
        );
        let edit = command(
            &invocation(r#"{"agent": {"permissions": "edit", "model": "gpt-5-mini"}}"#),
            1,
        )
        .unwrap();
        assert_eq!(
            edit.args[4..],
            ["workspace-write", "--model", "gpt-5-mini", "-"]
        );
    }

    #[test]
    fn bash_wrappers_are_taken_off_commands() {
        assert_eq!(
            inner_command("/bin/bash -lc 'cat AGENTS.md | head -3'"),
            "cat AGENTS.md | head -3"
        );
        assert_eq!(
            inner_command("/bin/bash -lc 'echo '\\''hi'\\'''"),
            "echo 'hi'"
        );
        assert_eq!(inner_command("ls -la"), "ls -la");
    }

    #[test]
    fn the_event_stream_gives_commands_files_tokens_and_the_answer() {
        let observed = observation(
            &invocation(r#"{"workspaceRoot": ["AGENTS.md"], "agent": {"model": "gpt-5-mini"}}"#),
            &output(STREAM),
        )
        .unwrap();
        let calls = observed.tool_calls.as_ref().unwrap();
        assert_eq!(
            calls
                .iter()
                .map(|c| c.arguments.as_deref().unwrap())
                .collect::<Vec<_>>(),
            [
                r#"{"cmd":"cat AGENTS.md | head -3"}"#,
                r#"{"cmd":"ls -la"}"#
            ]
        );
        assert!(
            calls
                .iter()
                .all(|c| c.name == "exec_command" && c.succeeded == Some(true))
        );
        let trace = observed.trace.as_ref().unwrap();
        assert_eq!(trace.files_read, ["AGENTS.md"]);
        assert_eq!(trace.instruction_files, ["AGENTS.md"]);
        assert_eq!(trace.turns, Some(1));
        assert!(trace.session_id.is_some());
        assert_eq!(
            observed.final_text.as_deref(),
            Some("Done. {\"selectedSkill\": \"none\"}")
        );
        assert_eq!(
            observed.structured.as_deref(),
            Some(r#"{"selectedSkill":"none"}"#)
        );
        assert_eq!(observed.model.as_deref(), Some("gpt-5-mini"));
        assert!(observed.cost_usd.is_some());
        assert_eq!(observed.usage.unwrap().input_tokens, Some(3000));
    }

    #[test]
    fn no_answer_is_an_error_naming_why() {
        let out = output(
            r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}"#,
        );
        let error = observation(&invocation("{}"), &out).unwrap_err();
        assert!(
            format!("{error:?}").contains("runner_auth_missing"),
            "{error:?}"
        );
        let mut out = output("{\"type\":\"turn.started\"}\n");
        out.timed_out = true;
        let error = observation(&invocation("{}"), &out).unwrap_err();
        assert!(
            format!("{error:?}").contains("did not finish in time"),
            "{error:?}"
        );
    }
}
