//! The `claude-cli` provider (harness `claude_code`): each case answered by
//! `claude -p` in messaging mode, through the host's `process` import.
//!
//! The host grants the `claude` program only, passes the variables Claude
//! Code reads its login and endpoint from (`HOME`, `ANTHROPIC_API_KEY`,
//! `ANTHROPIC_BASE_URL`, …) without showing them to this component, and
//! runs it in an empty directory. The command and the parsing of its
//! result are in `cautilus_providers_core::claude_cli`.

use cautilus_providers_core::claude_cli::{self, NAME, PROGRAM};
use cautilus_sdk::provider::{Invocation, Provider, ProviderInfo, process};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};
use serde_json::Value;

struct ClaudeCli;

/// The call's time limit from the host's options (it also bounds the call).
fn timeout_ms(options: Option<&str>) -> u32 {
    options
        .and_then(|o| serde_json::from_str::<Value>(o).ok())
        .and_then(|o| o.get("timeoutMs").and_then(Value::as_u64))
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(600_000)
}

impl Provider for ClaudeCli {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(Capability::Process(vec![PROGRAM.into()])),
            harness: claude_cli::HARNESS.into(),
            modes: vec!["messaging".into()],
        }
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        if request.mode != "messaging" {
            return Err(PluginError::failed(format!(
                "{NAME}: answers messaging cases only; a workspace case needs `--provider claude-code`"
            )));
        }
        let command = claude_cli::command(&request, timeout_ms(request.options.as_deref()))?;
        let output = process::run(&command).map_err(|error| match error {
            process::ProcessError::NotFound(_) => claude_cli::not_found(),
            process::ProcessError::Denied(why) => PluginError::failed(format!("{NAME}: {why}")),
            process::ProcessError::Failed(why) => {
                PluginError::failed(format!("{NAME}: cannot run `claude`: {why}"))
            }
        })?;
        claude_cli::observation(&request, &output)
    }
}

export_provider!(ClaudeCli);
