//! What the CLI providers share: the time limit the host passes, and one
//! run of the CLI through the `process` import with its errors worded for
//! users. Messaging-mode CLIs (`claude-cli`, `codex-cli`) answer messaging
//! cases; coding agents (`claude-code`, `codex`) work on workspace cases.

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::process::{self, Command, Output};
use cautilus_sdk::{Observation, PluginError};
use serde_json::Value;

/// One CLI provider.
pub struct Cli {
    pub name: &'static str,
    /// The mode it serves: `messaging` or `workspace`.
    pub mode: &'static str,
    pub program: &'static str,
    /// The command of an invocation, given the time limit.
    pub command: fn(&Invocation, u32) -> Result<Command, PluginError>,
    pub observation: fn(&Invocation, &Output) -> Result<Observation, PluginError>,
    /// What to do when the program is not installed.
    pub install: &'static str,
}

/// The call's time limit from the host's options (`timeoutMs`).
fn timeout_ms(options: Option<&str>) -> u32 {
    options
        .and_then(|o| serde_json::from_str::<Value>(o).ok())
        .and_then(|o| o.get("timeoutMs").and_then(Value::as_u64))
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(600_000)
}

impl Cli {
    /// Runs one case with the CLI.
    pub fn invoke(&self, request: &Invocation) -> Result<Observation, PluginError> {
        if request.mode != self.mode {
            let hint = if self.mode == "messaging" {
                "a workspace case needs a coding-agent provider (claude-code, codex)"
            } else {
                "a messaging case needs a model provider (anthropic, openai, claude-cli, codex-cli)"
            };
            return Err(PluginError::failed(format!(
                "{}: serves {} cases only; {hint}",
                self.name, self.mode
            )));
        }
        let command = (self.command)(request, timeout_ms(request.options.as_deref()))?;
        let output = process::run(&command).map_err(|error| match error {
            process::ProcessError::NotFound(_) => PluginError::failed(format!(
                "{}: `{}` is not on PATH; {}",
                self.name, self.program, self.install
            )),
            process::ProcessError::Denied(why) => {
                PluginError::failed(format!("{}: {why}", self.name))
            }
            process::ProcessError::Failed(why) => PluginError::failed(format!(
                "{}: cannot run `{}`: {why}",
                self.name, self.program
            )),
        })?;
        if output.timed_out {
            return Err(PluginError::failed(format!(
                "{}: `{}` did not finish in time (raise --timeout-ms)",
                self.name, self.program
            )));
        }
        (self.observation)(request, &output)
    }
}

/// Whether `text` mentions any of `words` (lower-case), ignoring case: how
/// a CLI's words for "no usable credentials" are recognized.
pub fn mentions_any(text: &str, words: &[&str]) -> bool {
    let text = text.to_ascii_lowercase();
    words.iter().any(|w| text.contains(w))
}
