//! What both Codex providers (`codex-cli`, `codex`) read from `codex exec
//! --json` besides the items: tokens summed over `turn.completed`, the
//! failure a `turn.failed` or `error` event reports, the cost derived from
//! [`crate::prices`], and the error of a run that gave no answer.

use cautilus_sdk::PluginError;
use cautilus_sdk::Usage;
use cautilus_sdk::provider::process::Output;
use serde_json::Value;

use crate::prices;

/// The turn events of one `codex exec --json` run.
#[derive(Debug, Default)]
pub struct CodexTurns {
    input: u64,
    cached: u64,
    output: u64,
    reasoning: u64,
    pub turns: u32,
    saw_usage: bool,
    failure: Option<String>,
    /// Whether the last turn event was `turn.completed` (not `turn.failed`).
    completed: bool,
}

impl CodexTurns {
    /// Takes a turn or error event (any other event is left alone).
    pub fn take(&mut self, event: &Value) {
        let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str) {
            Some("turn.completed") => {
                self.completed = true;
                let usage = &event["usage"];
                self.saw_usage = true;
                self.turns = self.turns.saturating_add(1);
                self.input = self.input.saturating_add(field(usage, "input_tokens"));
                self.cached = self
                    .cached
                    .saturating_add(field(usage, "cached_input_tokens"));
                self.output = self.output.saturating_add(field(usage, "output_tokens"));
                self.reasoning = self
                    .reasoning
                    .saturating_add(field(usage, "reasoning_output_tokens"));
            }
            Some("turn.failed") => {
                self.completed = false;
                self.failure = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            Some("error") if self.failure.is_none() => {
                self.failure = event
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            _ => {}
        }
    }

    /// Whether the run ended with a completed turn: an answer written
    /// before a failed turn or a timeout is not the run's answer.
    pub fn completed(&self, output: &Output) -> bool {
        self.completed && !output.timed_out
    }

    /// Tokens over every turn, when Codex reported any.
    pub fn usage(&self) -> Option<Usage> {
        self.saw_usage.then_some(Usage {
            input_tokens: Some(self.input),
            output_tokens: Some(self.output),
            cached_input_tokens: Some(self.cached),
            reasoning_tokens: Some(self.reasoning),
            llm_calls: Some(self.turns),
        })
    }

    /// The cost of `model` at the checked-in prices, and where it comes from.
    pub fn cost(&self, model: &str) -> (Option<f64>, Option<String>) {
        let cost = self
            .saw_usage
            .then(|| prices::cost(model, self.input, self.cached, self.output))
            .flatten();
        (cost, cost.map(|_| format!("derived:{}", prices::TABLE)))
    }

    /// The error of a run that gave no answer: `runner_auth_missing` when
    /// Codex has no usable login, else what it said.
    pub fn no_answer(self, name: &str, output: &Output) -> PluginError {
        let said = self.failure.unwrap_or_else(|| {
            let stdout = String::from_utf8_lossy(&output.stdout);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let said = if stderr.trim().is_empty() {
                stdout.trim().to_string()
            } else {
                stderr.trim().to_string()
            };
            crate::agent_trace::clip(&said, 400)
        });
        if auth_missing(&said) {
            return PluginError::failed(format!(
                "runner_auth_missing: `codex` is not logged in ({}); run `codex login`, or set OPENAI_API_KEY",
                crate::agent_trace::clip(&said, 200)
            ));
        }
        let why = if output.timed_out {
            "did not finish in time (raise --timeout-ms)".to_string()
        } else {
            format!(
                "gave no answer (exit {})",
                output
                    .status
                    .map_or("by a signal".into(), |s| s.to_string())
            )
        };
        PluginError::failed(format!("{name}: `codex exec` {why}: {said}"))
    }
}

/// Whether what `codex` said means it is not logged in.
pub(crate) fn auth_missing(text: &str) -> bool {
    crate::cli::mentions_any(
        text,
        &[
            "401",
            "unauthorized",
            "not logged in",
            "codex login",
            "api key",
            "authentication",
            "missing environment variable",
        ],
    )
}
