//! The `claude-code` provider (harness `claude_code`, mode `workspace`):
//! Claude Code works on each repo case in a fresh copy of the workspace,
//! through the host's `process` import, and is observed from its
//! `stream-json` events.
//!
//! The host grants the `claude` program only, passes the variables Claude
//! Code reads its login and endpoint from without showing them to this
//! component, and runs it in the sample's own copy of the workspace. The
//! command and the reading of its event stream are in
//! `cautilus_providers_core::claude_code`.

use cautilus_providers_core::claude_code::{self, NAME, PROGRAM};
use cautilus_providers_core::cli::Cli;
use cautilus_sdk::provider::{Invocation, Needs, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct ClaudeCode;

const CLI: Cli = Cli {
    name: NAME,
    mode: "workspace",
    program: PROGRAM,
    command: claude_code::command,
    observation: claude_code::observation,
    install: claude_code::INSTALL,
};

impl Provider for ClaudeCode {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(Capability::Process(vec![PROGRAM.into()])),
            harness: claude_code::HARNESS.into(),
            modes: vec!["workspace".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::claude(true)
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        CLI.invoke(&request)
    }
}

export_provider!(ClaudeCode);
