//! The `exec` provider (harness `exec`): each case answered by the user's
//! own program, through the host's `process` import.
//!
//! The program comes from the fixture's `exec` field: the host resolves it
//! (a file next to the fixture, inside its root, or a program the user
//! granted with `--grant-program`), grants it to this provider only, and
//! runs it in a new empty directory with only `PATH` and the granted
//! secrets. Its describe requests no program by name: the host adds the
//! one it resolved. The case on stdin and the parsing of the answer are in
//! `cautilus_providers_core::exec`.

use cautilus_providers_core::exec;
use cautilus_sdk::provider::{Invocation, Needs, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct Exec;

impl Provider for Exec {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(Capability::Process(Vec::new())),
            harness: exec::HARNESS.into(),
            modes: vec!["messaging".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::exec()
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        exec::invoke(&request)
    }
}

export_provider!(Exec);
