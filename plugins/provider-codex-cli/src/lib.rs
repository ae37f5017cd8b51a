//! The `codex-cli` provider (harness `codex_exec`): each case answered by
//! `codex exec --json` in messaging mode, through the host's `process`
//! import.
//!
//! The host grants the `codex` program only, passes the variables Codex
//! reads its home, login and endpoint from (`HOME`, `CODEX_HOME`,
//! `OPENAI_API_KEY`, …) without showing them to this component, and runs it
//! in an empty directory. The command, the parsing of its events and the
//! derived cost are in `cautilus_providers_core::codex_cli`.

use cautilus_providers_core::cli::Cli;
use cautilus_providers_core::codex_cli::{self, NAME, PROGRAM};
use cautilus_sdk::provider::{Invocation, Needs, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct CodexCli;

const CLI: Cli = Cli {
    name: NAME,
    mode: "messaging",
    program: PROGRAM,
    command: codex_cli::command,
    observation: codex_cli::observation,
    install: codex_cli::INSTALL,
};

impl Provider for CodexCli {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(Capability::Process(vec![PROGRAM.into()])),
            harness: codex_cli::HARNESS.into(),
            modes: vec!["messaging".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::codex(false)
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        CLI.invoke(&request)
    }
}

export_provider!(CodexCli);
