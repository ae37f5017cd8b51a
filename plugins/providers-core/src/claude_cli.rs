//! `claude -p` in messaging mode (the `claude-cli` provider, harness
//! `claude_code`).
//!
//! Command: `claude -p --output-format json --no-session-persistence
//! --tools "" --strict-mcp-config --setting-sources= [--system-prompt
//! <system>] [--model <model>]`, the prompt on stdin ([`crate::prompt`]),
//! run in an empty directory: no tools, MCP servers, settings or CLAUDE.md
//! memory (the user's or a project's) reach the model. The model is pinned when the
//! fixture names one; the one recorded is the `modelUsage` entry that cost
//! most (the one that answered). `total_cost_usd` and usage come from the
//! result envelope; cache writes and reads count as input tokens. A CLI
//! that is not logged in answers `runner_auth_missing: …` (the case is
//! blocked, with the fix).

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::process::{Command, Output};
use cautilus_sdk::{Observation, PluginError, Usage};
use serde_json::Value;

use crate::api::count;
use crate::prompt;

pub const NAME: &str = "claude-cli";
pub const HARNESS: &str = "claude_code";
pub const PROGRAM: &str = "claude";

/// The command of one invocation.
pub fn command(request: &Invocation, timeout_ms: u32) -> Result<Command, PluginError> {
    let input = prompt::of_case(NAME, request)?;
    let mut args: Vec<String> = [
        "-p",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--tools",
        "",
        // The model, not the user's agent setup: no MCP servers, and no
        // user/project settings or CLAUDE.md memory in the prompt.
        "--strict-mcp-config",
        "--setting-sources=",
    ]
    .map(String::from)
    .to_vec();
    if let Some(system) = prompt::system(request.system.as_deref(), &request.messages) {
        args.extend(["--system-prompt".into(), system]);
    }
    if let Some(model) = request.model.as_deref().filter(|m| !m.is_empty()) {
        args.extend(["--model".into(), model.into()]);
    }
    Ok(Command {
        program: PROGRAM.into(),
        args,
        stdin: Some(input.into_bytes()),
        cwd: None,
        env: [
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec(),
        timeout_ms: Some(timeout_ms),
    })
}

/// Words of a result that mean the CLI has no usable credentials.
pub(crate) fn auth_missing(text: &str) -> bool {
    crate::cli::mentions_any(
        text,
        &[
            "not logged in",
            "/login",
            "invalid api key",
            "authentication",
            "oauth token",
            "401",
        ],
    )
}

/// The observation of a finished `claude -p`.
pub fn observation(request: &Invocation, output: &Output) -> Result<Observation, PluginError> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The envelope is the whole output; tolerate lines printed before it.
    let envelope: Option<Value> = serde_json::from_str::<Value>(stdout.trim())
        .ok()
        .or_else(|| {
            stdout
                .lines()
                .rev()
                .find_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        })
        .filter(|v| v.get("type").and_then(Value::as_str) == Some("result"));
    let Some(envelope) = envelope else {
        let said = if stderr.trim().is_empty() {
            stdout.trim()
        } else {
            stderr.trim()
        };
        if auth_missing(said) {
            return Err(auth_error(said));
        }
        return Err(PluginError::failed(format!(
            "{NAME}: `claude -p` exited with {} and no result: {}",
            output
                .status
                .map_or("a signal".into(), |s| format!("status {s}")),
            said.chars().take(400).collect::<String>()
        )));
    };
    let result = envelope
        .get("result")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if envelope.get("is_error").and_then(Value::as_bool) == Some(true) {
        if auth_missing(result)
            || envelope.get("api_error_status").and_then(Value::as_u64) == Some(401)
        {
            return Err(auth_error(result));
        }
        return Err(PluginError::failed(format!(
            "{NAME}: claude reported an error: {}",
            result.chars().take(400).collect::<String>()
        )));
    }
    let messages = crate::prompt::with_answer(&request.messages, result);
    let usage = usage(&envelope);
    Ok(Observation {
        final_text: Some(result.to_string()),
        messages,
        tool_calls: None,
        usage,
        cost_usd: envelope.get("total_cost_usd").and_then(Value::as_f64),
        cost_source: Some("reported".into()),
        retries: None,
        duration_ms: None,
        provider: Some("anthropic".into()),
        model: answering_model(&envelope).or_else(|| request.model.clone()),
        harness: Some(HARNESS.into()),
        mode: Some("messaging".into()),
        structured: None,
        trace: None,
    })
}

/// The tokens of a result envelope (cache writes and reads count as input;
/// each turn is a model call).
pub(crate) fn usage(envelope: &Value) -> Option<Usage> {
    let u = envelope.get("usage")?;
    let parts = [
        count(u.get("input_tokens")),
        count(u.get("cache_creation_input_tokens")),
        count(u.get("cache_read_input_tokens")),
    ];
    Some(Usage {
        input_tokens: parts.iter().any(Option::is_some).then(|| {
            parts
                .iter()
                .flatten()
                .fold(0u64, |a, b| a.saturating_add(*b))
        }),
        output_tokens: count(u.get("output_tokens")),
        cached_input_tokens: parts[2],
        reasoning_tokens: None,
        llm_calls: envelope
            .get("num_turns")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
    })
}

/// The `modelUsage` entry that cost most (ties: the most output tokens).
pub(crate) fn answering_model(envelope: &Value) -> Option<String> {
    let usage = envelope.get("modelUsage")?.as_object()?;
    usage
        .iter()
        .max_by(|(_, a), (_, b)| {
            let key = |v: &Value| {
                (
                    v.get("costUSD").and_then(Value::as_f64).unwrap_or(0.0),
                    v.get("outputTokens").and_then(Value::as_f64).unwrap_or(0.0),
                )
            };
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|(model, _)| model.clone())
}

pub(crate) fn auth_error(said: &str) -> PluginError {
    PluginError::failed(format!(
        "runner_auth_missing: `claude` is not logged in ({}); run `claude` once and log in, or set ANTHROPIC_API_KEY",
        said.trim().chars().take(200).collect::<String>()
    ))
}

/// What to do when `claude` is not installed.
pub const INSTALL: &str = "install Claude Code (`npm install -g @anthropic-ai/claude-code`) or use `--provider anthropic`";

#[cfg(test)]
mod tests {
    use super::*;
    use cautilus_sdk::Message;

    fn invocation() -> Invocation {
        Invocation {
            case_id: "c1".into(),
            mode: "messaging".into(),
            model: Some("claude-sonnet-4-5".into()),
            system: Some("Be brief.".into()),
            messages: vec![Message {
                role: "user".into(),
                content: "Hi".into(),
            }],
            input: None,
            expected: None,
            options: None,
        }
    }

    fn output(stdout: &str, status: i32) -> Output {
        Output {
            status: Some(status),
            stdout: stdout.as_bytes().to_vec(),
            stderr: Vec::new(),
            timed_out: false,
            truncated: false,
        }
    }

    #[test]
    fn the_command_pins_the_model_and_overrides_the_system_prompt() {
        let command = command(&invocation(), 5000).unwrap();
        assert_eq!(command.program, "claude");
        assert_eq!(
            command.args,
            [
                "-p",
                "--output-format",
                "json",
                "--no-session-persistence",
                "--tools",
                "",
                "--strict-mcp-config",
                "--setting-sources=",
                "--system-prompt",
                "Be brief.",
                "--model",
                "claude-sonnet-4-5"
            ]
        );
        assert_eq!(command.stdin.as_deref(), Some(b"Hi".as_slice()));
    }

    #[test]
    fn the_envelope_gives_text_cost_usage_and_the_answering_model() {
        let stdout = r#"{"type":"result","subtype":"success","is_error":false,"result":"Hello","num_turns":1,"total_cost_usd":0.0123,
            "usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":20,"output_tokens":3},
            "modelUsage":{"claude-haiku-4-5":{"costUSD":0.0001,"outputTokens":1},"claude-sonnet-4-5-20250929":{"costUSD":0.0122,"outputTokens":3}}}"#;
        let observed = observation(&invocation(), &output(stdout, 0)).unwrap();
        assert_eq!(observed.final_text.as_deref(), Some("Hello"));
        assert_eq!(observed.cost_usd, Some(0.0123));
        assert_eq!(
            observed.model.as_deref(),
            Some("claude-sonnet-4-5-20250929")
        );
        assert_eq!(observed.harness.as_deref(), Some("claude_code"));
        let usage = observed.usage.unwrap();
        assert_eq!(
            (
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.output_tokens
            ),
            (Some(35), Some(20), Some(3))
        );
    }

    #[test]
    fn a_cli_without_credentials_is_runner_auth_missing() {
        let stdout = r#"{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}"#;
        let error = observation(&invocation(), &output(stdout, 1)).unwrap_err();
        assert!(
            format!("{error:?}").contains("runner_auth_missing"),
            "{error:?}"
        );
        let error = observation(&invocation(), &output("", 1)).unwrap_err();
        assert!(format!("{error:?}").contains("no result"), "{error:?}");
    }
}
