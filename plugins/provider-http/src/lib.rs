//! The `http` provider (harness `http`): each case sent to the user's own
//! service over the host's `http` import.
//!
//! The service comes from the fixture's `http` field: the host checks it,
//! grants this provider the host of its URL alone (it requests `*`:
//! whichever hosts the run grants), and fills in the secrets its headers
//! name, only for hosts the user granted. The request template, the
//! retries and the reading of the answer are in
//! `cautilus_providers_core::http_service`.

use cautilus_providers_core::http_service;
use cautilus_sdk::provider::{Invocation, Needs, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct Http;

impl Provider for Http {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(Capability::Http(vec!["*".into()])),
            harness: http_service::HARNESS.into(),
            modes: vec!["messaging".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::http()
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        cautilus_providers_core::http_call::invoke(&request)
    }
}

export_provider!(Http);
