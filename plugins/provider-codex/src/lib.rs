//! The `codex` provider (harness `codex_exec`, mode `workspace`): Codex
//! works on each repo case in a fresh copy of the workspace, through the
//! host's `process` import, and is observed from its `exec --json` events.
//!
//! The host grants the `codex` program only, passes the variables Codex
//! reads its login and endpoint from (`CODEX_HOME`, `OPENAI_API_KEY`, …)
//! without showing them to this component (an isolated `CODEX_HOME` when
//! the fixture asks), and runs it in the sample's own copy of the
//! workspace. The command and the reading of its events are in
//! `cautilus_providers_core::codex_agent`.

use cautilus_providers_core::cli::Cli;
use cautilus_providers_core::codex_agent::{self, NAME, PROGRAM};
use cautilus_sdk::provider::{Invocation, Needs, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct Codex;

const CLI: Cli = Cli {
    name: NAME,
    mode: "workspace",
    program: PROGRAM,
    command: codex_agent::command,
    observation: codex_agent::observation,
    install: codex_agent::INSTALL,
};

impl Provider for Codex {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(Capability::Process(vec![PROGRAM.into()])),
            harness: codex_agent::HARNESS.into(),
            modes: vec!["workspace".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::codex(true)
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        CLI.invoke(&request)
    }
}

export_provider!(Codex);
