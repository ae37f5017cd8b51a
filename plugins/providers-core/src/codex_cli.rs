//! `codex exec --json` in messaging mode (the `codex-cli` provider, harness
//! `codex_exec`).
//!
//! Command: `codex exec --json --skip-git-repo-check --sandbox read-only
//! [-c instructions=<system>] [--model <model>] -`, the prompt on stdin
//! ([`crate::prompt`]), in an empty directory. `instructions` replaces
//! Codex's own base instructions with the suite's system prompt. The final
//! text is the last `agent_message` item; tokens are summed over
//! `turn.completed` usages; Codex reports no cost, so it is derived from
//! [`crate::prices`] and marked `costSource: derived:<table>` (none for a
//! model not in the table). Codex does not say which model answered, so
//! the one recorded is the pinned `--model` (or `codex-default`). A Codex
//! that is not logged in answers `runner_auth_missing: …`.

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::process::{Command, Output};
use cautilus_sdk::{Observation, PluginError};
use serde_json::Value;

use crate::codex_turns::CodexTurns;
use crate::prompt;

pub const NAME: &str = "codex-cli";
pub const HARNESS: &str = "codex_exec";
pub const PROGRAM: &str = "codex";

/// `text` as a TOML basic string (the value of a `-c key=value`).
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The command of one invocation.
pub fn command(request: &Invocation, timeout_ms: u32) -> Result<Command, PluginError> {
    let input = prompt::of_case(NAME, request)?;
    let mut args: Vec<String> = [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        "read-only",
    ]
    .map(String::from)
    .to_vec();
    if let Some(system) = prompt::system(request.system.as_deref(), &request.messages) {
        args.extend([
            "-c".into(),
            format!("instructions={}", toml_string(&system)),
        ]);
    }
    if let Some(model) = request.model.as_deref().filter(|m| !m.is_empty()) {
        args.extend(["--model".into(), model.into()]);
    }
    args.push("-".into());
    Ok(Command {
        program: PROGRAM.into(),
        args,
        stdin: Some(input.into_bytes()),
        cwd: None,
        env: vec![("NO_COLOR".into(), "1".into())],
        timeout_ms: Some(timeout_ms),
    })
}

/// The observation of a finished `codex exec --json`.
pub fn observation(request: &Invocation, output: &Output) -> Result<Observation, PluginError> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut text: Option<String> = None;
    let mut turns = CodexTurns::default();
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let item = &event["item"];
        if event.get("type").and_then(Value::as_str) == Some("item.completed")
            && item.get("type").and_then(Value::as_str) == Some("agent_message")
            && let Some(t) = item.get("text").and_then(Value::as_str)
        {
            text = Some(t.to_string());
        }
        turns.take(&event);
    }
    let Some(text) = text.filter(|_| turns.completed(output)) else {
        return Err(turns.no_answer(NAME, output));
    };
    let model = request
        .model
        .clone()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "codex-default".into());
    let (cost_usd, cost_source) = turns.cost(&model);
    let messages = crate::prompt::with_answer(&request.messages, &text);
    Ok(Observation {
        final_text: Some(text),
        messages,
        tool_calls: None,
        usage: turns.usage(),
        cost_usd,
        cost_source,
        retries: None,
        duration_ms: None,
        provider: Some("openai".into()),
        model: Some(model),
        harness: Some(HARNESS.into()),
        mode: Some("messaging".into()),
        structured: None,
        trace: None,
    })
}

/// What to do when `codex` is not installed.
pub const INSTALL: &str =
    "install Codex (`npm install -g @openai/codex`) or use `--provider openai`";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::output;
    use cautilus_sdk::Message;

    fn invocation(model: Option<&str>) -> Invocation {
        Invocation {
            case_id: "c1".into(),
            mode: "messaging".into(),
            model: model.map(str::to_string),
            system: Some("Be \"brief\".\nReally.".into()),
            messages: vec![Message {
                role: "user".into(),
                content: "Hi".into(),
            }],
            input: None,
            expected: None,
            options: None,
        }
    }

    #[test]
    fn the_system_prompt_replaces_codexs_instructions_as_a_toml_string() {
        let command = command(&invocation(Some("gpt-5-mini")), 5000).unwrap();
        assert_eq!(
            command.args,
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "-c",
                "instructions=\"Be \\\"brief\\\".\\nReally.\"",
                "--model",
                "gpt-5-mini",
                "-"
            ]
        );
        assert_eq!(command.stdin.as_deref(), Some(b"Hi".as_slice()));
    }

    #[test]
    fn events_give_the_answer_tokens_and_a_derived_cost() {
        let stdout = concat!(
            r#"{"type":"thread.started","thread_id":"t"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata not found"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Hello"}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":200,"output_tokens":100,"reasoning_output_tokens":40}}"#,
            "\n",
        );
        let observed = observation(&invocation(Some("gpt-5-mini")), &output(stdout)).unwrap();
        assert_eq!(observed.final_text.as_deref(), Some("Hello"));
        assert_eq!(observed.model.as_deref(), Some("gpt-5-mini"));
        let usage = observed.usage.unwrap();
        assert_eq!(
            (
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.output_tokens
            ),
            (Some(1000), Some(200), Some(100))
        );
        let expected = (800.0 * 0.25 + 200.0 * 0.025 + 100.0 * 2.0) / 1e6;
        assert!((observed.cost_usd.unwrap() - expected).abs() < 1e-12);
        assert_eq!(
            observed.cost_source.as_deref(),
            Some("derived:openai-api-prices@2025-08")
        );

        let unpriced = observation(&invocation(Some("local-model")), &output(stdout)).unwrap();
        assert_eq!((unpriced.cost_usd, unpriced.cost_source), (None, None));
    }

    #[test]
    fn a_codex_without_credentials_is_runner_auth_missing() {
        let stdout = r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Missing bearer"}}"#;
        let error = observation(&invocation(None), &output(stdout)).unwrap_err();
        assert!(
            format!("{error:?}").contains("runner_auth_missing"),
            "{error:?}"
        );
        let stdout =
            r#"{"type":"error","message":"Missing environment variable: `OPENAI_API_KEY`."}"#;
        let error = observation(&invocation(None), &output(stdout)).unwrap_err();
        assert!(
            format!("{error:?}").contains("runner_auth_missing"),
            "{error:?}"
        );
    }
}
