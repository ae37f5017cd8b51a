//! The `claude-cli` provider (harness `claude_code`): each case answered by
//! `claude -p` in messaging mode, through the host's `process` import.
//!
//! The host grants the `claude` program only, passes the variables Claude
//! Code reads its login and endpoint from (`HOME`, `ANTHROPIC_API_KEY`,
//! `ANTHROPIC_BASE_URL`, …) without showing them to this component, and
//! runs it in an empty directory. The command and the parsing of its
//! result are in `cautilus_providers_core::claude_cli`.

use cautilus_providers_core::claude_cli::{self, NAME, PROGRAM};
use cautilus_providers_core::cli::Cli;
use cautilus_sdk::provider::{Invocation, Needs, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct ClaudeCli;

const CLI: Cli = Cli {
    name: NAME,
    mode: "messaging",
    program: PROGRAM,
    command: claude_cli::command,
    observation: claude_cli::observation,
    install: claude_cli::INSTALL,
};

impl Provider for ClaudeCli {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(Capability::Process(vec![PROGRAM.into()])),
            harness: claude_cli::HARNESS.into(),
            modes: vec!["messaging".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::claude(false)
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        CLI.invoke(&request)
    }
}

export_provider!(ClaudeCli);
