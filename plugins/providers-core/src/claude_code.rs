//! Claude Code as a coding agent in the workspace (the `claude-code`
//! provider, harness `claude_code`, mode `workspace`).
//!
//! Command: `claude -p --output-format stream-json --verbose
//! --no-session-persistence --permission-mode <mode> [--model <model>]`,
//! the case's prompt on stdin, run by the host in a fresh copy of the
//! workspace. The operator's setup is used as it is (settings, CLAUDE.md,
//! skills, login); the model is pinned only when the fixture's `agent.model`
//! (or the case) names one. Permissions (`agent.permissions`): `read-only`
//! (default) is Claude Code's `default` mode, in which print mode denies
//! every tool that would ask (edits, writes, commands that change things);
//! `edit` is `acceptEdits`; `full` is `bypassPermissions`.
//!
//! Observed from the event stream: the ordered tool calls of the session
//! (with their outcome from the matching `tool_result`), the files read
//! (`Read`, and shell reads in `Bash`), instruction files (read, or
//! `CLAUDE.md`/`CLAUDE.local.md` at the root, which Claude Code loads
//! itself), skills (`Skill`, or a read `SKILL.md`), subagents (`Task` /
//! `Agent`; their own tool calls are in the run's calls, after the call
//! that started them), turns, session id, cost (`total_cost_usd`) and
//! usage from the result event, and the model that answered (the API's
//! `model` on the session's last turn, which names the exact version where
//! the request used an alias or the operator's default).

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::process::{Command, Output};
use cautilus_sdk::{Observation, PluginError};
use serde_json::Value;

use crate::agent_trace::{
    TOOL_OUTPUT_CHARS, TraceBuilder, clip, last_json_object, relative_arguments, tool_call,
};

pub const NAME: &str = "claude-code";
pub const HARNESS: &str = "claude_code";
pub const PROGRAM: &str = "claude";

/// The agent settings a fixture gives (`agent`) and what the host adds.
#[derive(Debug, Default)]
pub struct AgentOptions {
    pub permissions: Option<String>,
    pub model: Option<String>,
    pub codex_home: Option<String>,
    /// Names of the entries at the workspace root.
    pub root_entries: Vec<String>,
    /// The workspace copy the agent runs in (absolute), to make paths
    /// relative to.
    pub root: Option<String>,
}

impl AgentOptions {
    pub fn of(request: &Invocation) -> Self {
        let options: Value = request
            .options
            .as_deref()
            .and_then(|o| serde_json::from_str(o).ok())
            .unwrap_or(Value::Null);
        let agent = options.get("agent");
        let text = |key: &str| {
            agent
                .and_then(|a| a.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Self {
            permissions: text("permissions"),
            model: text("model"),
            codex_home: text("codexHome"),
            root: options
                .get("workspaceDir")
                .and_then(Value::as_str)
                .map(str::to_string),
            root_entries: options
                .get("workspaceRoot")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        }
    }
}

impl AgentOptions {
    /// The harness's setting for `agent.permissions` (read-only, edit,
    /// full: `modes` in that order).
    pub fn permission_mode(
        &self,
        name: &str,
        modes: [&'static str; 3],
    ) -> Result<&'static str, PluginError> {
        match self.permissions.as_deref().unwrap_or("read-only") {
            "read-only" => Ok(modes[0]),
            "edit" => Ok(modes[1]),
            "full" => Ok(modes[2]),
            other => Err(PluginError::failed(format!(
                "{name}: unknown agent.permissions `{other}`; use read-only, edit or full"
            ))),
        }
    }

    /// The model to pin: the fixture's `agent.model`, else the case's;
    /// none rides the operator's default.
    pub fn pinned_model(&self, request: &Invocation) -> Option<String> {
        self.model
            .clone()
            .or_else(|| request.model.clone())
            .filter(|m| !m.is_empty())
    }
}

/// The prompt of a workspace case: its last user message.
pub fn prompt(name: &str, request: &Invocation) -> Result<String, PluginError> {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.content.clone())
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| {
            PluginError::input(
                format!("{}.prompt", request.case_id),
                format!("{name}: the case has no prompt to give the agent"),
            )
        })
}

/// The command of one invocation.
pub fn command(request: &Invocation, timeout_ms: u32) -> Result<Command, PluginError> {
    let agent = AgentOptions::of(request);
    let mode = agent.permission_mode(NAME, ["default", "acceptEdits", "bypassPermissions"])?;
    let mut args: Vec<String> = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--no-session-persistence",
        "--permission-mode",
        mode,
    ]
    .map(String::from)
    .to_vec();
    if let Some(model) = agent.pinned_model(request) {
        args.extend(["--model".into(), model]);
    }
    Ok(Command {
        program: PROGRAM.into(),
        args,
        stdin: Some(prompt(NAME, request)?.into_bytes()),
        cwd: None,
        env: [
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec(),
        timeout_ms: Some(timeout_ms),
    })
}

/// Instruction files Claude Code loads itself from the working directory.
const LOADS: &[&str] = &["CLAUDE.md", "CLAUDE.local.md"];

/// The text of a `tool_result`'s content (a string or text blocks).
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The observation of a finished `claude -p --output-format stream-json`.
pub fn observation(request: &Invocation, output: &Output) -> Result<Observation, PluginError> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.truncated {
        return Err(PluginError::failed(format!(
            "{NAME}: the agent's event stream outgrew the host's output limit; the run cannot be observed whole"
        )));
    }
    let agent = AgentOptions::of(request);
    let mut trace = TraceBuilder::new();
    let mut calls = Vec::new();
    // tool_use id → index in `calls`.
    let mut call_ids: Vec<(String, usize)> = Vec::new();
    let mut init_model = None;
    // The model the API said answered the session's last turn.
    let mut answered_by = None;
    let mut result = None;
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("system") if event.get("subtype").and_then(Value::as_str) == Some("init") => {
                trace.root = event.get("cwd").and_then(Value::as_str).map(str::to_string);
                init_model = event
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                trace.trace.session_id = event
                    .get("session_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                trace.harness_loads(LOADS, &agent.root_entries);
            }
            Some("assistant") => {
                let top_level = event.get("parent_tool_use_id").is_none_or(Value::is_null);
                if top_level
                    && let Some(model) = event.pointer("/message/model").and_then(Value::as_str)
                {
                    answered_by = Some(model.to_string());
                }
                let blocks = event.pointer("/message/content").and_then(Value::as_array);
                for block in blocks.into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                        continue;
                    }
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                    let input = block.get("input").cloned().unwrap_or(Value::Null);
                    let field = |key: &str| input.get(key).and_then(Value::as_str);
                    match name {
                        "Read" => field("file_path").into_iter().for_each(|p| trace.read(p)),
                        "Bash" => field("command").into_iter().for_each(|c| trace.command(c)),
                        "Skill" => field("skill")
                            .or_else(|| field("command"))
                            .or_else(|| field("name"))
                            .into_iter()
                            .for_each(|s| trace.skill(s)),
                        "Task" | "Agent" => field("subagent_type")
                            .or_else(|| field("description"))
                            .into_iter()
                            .for_each(|s| trace.subagent(s)),
                        _ => {}
                    }
                    // A subagent's calls are the run's calls too: an agent
                    // that delegates a Write has written.
                    if let Some(id) = block.get("id").and_then(Value::as_str) {
                        call_ids.push((id.to_string(), calls.len()));
                    }
                    let input = relative_arguments(input, trace.root.as_deref());
                    calls.push(tool_call(name, &input));
                }
            }
            Some("user") => {
                let blocks = event.pointer("/message/content").and_then(Value::as_array);
                for block in blocks.into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                        continue;
                    }
                    let id = block.get("tool_use_id").and_then(Value::as_str);
                    let Some(&(_, index)) = call_ids.iter().find(|(i, _)| Some(i.as_str()) == id)
                    else {
                        continue;
                    };
                    let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                    calls[index].succeeded = Some(!failed);
                    calls[index].output =
                        Some(clip(&result_text(block.get("content")), TOOL_OUTPUT_CHARS));
                }
            }
            Some("result") => result = Some(event),
            _ => {}
        }
    }
    let Some(result) = result else {
        let said = if stderr.trim().is_empty() {
            stdout.lines().last().unwrap_or_default().trim()
        } else {
            stderr.trim()
        };
        if crate::claude_cli::auth_missing(said) {
            return Err(crate::claude_cli::auth_error(said));
        }
        let why = if output.timed_out {
            "did not finish in time (raise --timeout-ms)".to_string()
        } else {
            format!(
                "exited with {} before its result",
                output
                    .status
                    .map_or("a signal".into(), |s| format!("status {s}"))
            )
        };
        return Err(PluginError::failed(format!(
            "{NAME}: `claude` {why}: {}",
            clip(said, 400)
        )));
    };
    let text = result
        .get("result")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if result.get("is_error").and_then(Value::as_bool) == Some(true) {
        if crate::claude_cli::auth_missing(text)
            || result.get("api_error_status").and_then(Value::as_u64) == Some(401)
        {
            return Err(crate::claude_cli::auth_error(text));
        }
        return Err(PluginError::failed(format!(
            "{NAME}: claude reported an error: {}",
            clip(text, 400)
        )));
    }
    trace.trace.turns = result
        .get("num_turns")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    if let Some(id) = result.get("session_id").and_then(Value::as_str) {
        trace.trace.session_id = Some(id.to_string());
    }
    trace.trace.transcript = Some(stdout.into_owned());
    let usage = crate::claude_cli::usage(&result);
    let mut messages = request.messages.clone();
    messages.push(cautilus_sdk::Message {
        role: "assistant".into(),
        content: text.to_string(),
    });
    Ok(Observation {
        final_text: Some(text.to_string()),
        messages,
        tool_calls: Some(calls),
        usage,
        cost_usd: result.get("total_cost_usd").and_then(Value::as_f64),
        cost_source: Some("reported".into()),
        retries: None,
        duration_ms: result.get("duration_ms").and_then(Value::as_u64),
        provider: Some("anthropic".into()),
        model: answered_by
            .or_else(|| crate::claude_cli::answering_model(&result))
            .or(init_model)
            .or_else(|| agent.model.clone()),
        harness: Some(HARNESS.into()),
        mode: Some("workspace".into()),
        structured: last_json_object(text),
        trace: Some(trace.trace),
    })
}

/// What to do when `claude` is not installed.
pub const INSTALL: &str =
    "install Claude Code (`npm install -g @anthropic-ai/claude-code`) and log in";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::output;

    fn invocation(options: &str) -> Invocation {
        crate::test_support::invocation("route", "workspace", "Add a host import.", Some(options))
    }

    /// A real `claude -p --output-format stream-json --verbose` run (Claude
    /// Code 2.1.197 against a scripted loopback model, trimmed): it read
    /// AGENTS.md, ran `cat wit/README.md | head -3`, was denied a Write,
    /// and answered.
    const STREAM: &str = include_str!("testdata/claude-code-stream.jsonl");

    #[test]
    fn the_command_rides_the_operators_setup_and_maps_permissions() {
        let read_only = command(&invocation("{}"), 1000).unwrap();
        assert_eq!(
            read_only.args,
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--no-session-persistence",
                "--permission-mode",
                "default"
            ]
        );
        assert_eq!(
            read_only.stdin.as_deref(),
            Some(b"Add a host import.".as_slice())
        );
        let edit = command(
            &invocation(r#"{"agent": {"permissions": "edit", "model": "claude-opus-4-1"}}"#),
            1000,
        )
        .unwrap();
        assert_eq!(
            edit.args[6..],
            ["acceptEdits", "--model", "claude-opus-4-1"]
        );
        assert!(command(&invocation(r#"{"agent": {"permissions": "root"}}"#), 1).is_err());
    }

    #[test]
    fn the_event_stream_gives_calls_files_cost_and_the_answer() {
        let observed = observation(
            &invocation(r#"{"workspaceRoot": ["AGENTS.md", "CLAUDE.md", "wit"]}"#),
            &output(STREAM),
        )
        .unwrap();
        let calls = observed.tool_calls.as_ref().unwrap();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Read", "Bash", "Write"]);
        assert_eq!(
            calls.iter().map(|c| c.succeeded).collect::<Vec<_>>(),
            [Some(true), Some(true), Some(false)]
        );
        assert!(calls[0].output.as_deref().unwrap().contains("AGENTS.md"));
        assert_eq!(
            calls[0].arguments.as_deref(),
            Some(r#"{"file_path":"AGENTS.md"}"#),
            "paths in the workspace are recorded relative to it"
        );
        let trace = observed.trace.as_ref().unwrap();
        assert_eq!(trace.files_read, ["AGENTS.md", "wit/README.md"]);
        assert_eq!(trace.instruction_files, ["CLAUDE.md", "AGENTS.md"]);
        assert_eq!(trace.commands, ["cat wit/README.md | head -3"]);
        assert_eq!(trace.turns, Some(4));
        assert_eq!(
            trace.session_id.as_deref(),
            Some("ba7b9477-62bd-423c-95ca-02aa1905eab2")
        );
        assert!(
            trace
                .transcript
                .as_deref()
                .unwrap()
                .contains("\"type\":\"result\"")
        );
        assert_eq!(observed.cost_usd, Some(0.000564));
        assert_eq!(observed.model.as_deref(), Some("claude-sonnet-4-6"));
        assert_eq!(observed.duration_ms, Some(513));
        assert_eq!(
            observed.structured.as_deref(),
            Some(r#"{"selectedSkill":"wit-contract"}"#)
        );
    }

    #[test]
    fn skills_and_subagents_are_observed_with_a_subagents_own_calls() {
        let events = [
            r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","model":"m"}"#,
            r#"{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m","content":[{"type":"tool_use","id":"t1","name":"Skill","input":{"skill":"release-notes"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"loaded"}]}]}}"#,
            r#"{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m","content":[{"type":"tool_use","id":"t2","name":"Task","input":{"subagent_type":"Explore","description":"find the tags","prompt":"…"}}]}}"#,
            r#"{"type":"assistant","parent_tool_use_id":"t2","message":{"model":"m","content":[{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"cat CHANGELOG.md"}}]}}"#,
            r#"{"type":"user","parent_tool_use_id":"t2","message":{"content":[{"type":"tool_result","tool_use_id":"t3","content":"…"}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","is_error":false,"content":"v1.2.0"}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","num_turns":3,"session_id":"s1"}"#,
        ]
        .join("\n");
        let observed = observation(&invocation("{}"), &output(&events)).unwrap();
        let calls = observed.tool_calls.as_ref().unwrap();
        assert_eq!(
            calls
                .iter()
                .map(|c| (c.name.as_str(), c.succeeded))
                .collect::<Vec<_>>(),
            [
                ("Skill", Some(true)),
                ("Task", Some(true)),
                ("Bash", Some(true))
            ],
            "the subagent's Bash is one of the run's calls"
        );
        assert_eq!(calls[0].output.as_deref(), Some("loaded"));
        let trace = observed.trace.as_ref().unwrap();
        assert_eq!(trace.skills, ["release-notes"]);
        assert_eq!(trace.subagents, ["Explore"]);
        assert_eq!(
            trace.commands,
            ["cat CHANGELOG.md"],
            "a subagent's commands count"
        );
        assert_eq!(trace.files_read, ["CHANGELOG.md"]);
        assert!(observed.structured.is_none());
    }

    #[test]
    fn no_result_is_an_error_naming_why() {
        let mut out = output("{\"type\":\"system\",\"subtype\":\"init\"}\n");
        out.timed_out = true;
        let error = observation(&invocation("{}"), &out).unwrap_err();
        assert!(
            format!("{error:?}").contains("did not finish in time"),
            "{error:?}"
        );
        let mut out = output("");
        out.stderr = b"Invalid API key \xc2\xb7 Please run /login".to_vec();
        let error = observation(&invocation("{}"), &out).unwrap_err();
        assert!(
            format!("{error:?}").contains("runner_auth_missing"),
            "{error:?}"
        );
        let mut out = output(STREAM);
        out.truncated = true;
        assert!(observation(&invocation("{}"), &out).is_err());
    }
}
