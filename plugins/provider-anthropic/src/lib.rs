//! The `anthropic` provider (harness `anthropic-api`): one Messages API
//! call per case, through the host's `http` import.
//!
//! The host passes the base URL (`ANTHROPIC_BASE_URL`, default
//! `https://api.anthropic.com`) and the name of the secret it sends as
//! `x-api-key` (`ANTHROPIC_API_KEY`, required by the API). The suite's
//! `system` is the request's top-level `system`; a `system` message inside
//! the case's messages is added to it (the Messages API has no system
//! role); the other messages go as they are. `max_tokens`, which the API
//! requires, defaults to 1024. Usage counts cache writes and reads as
//! input (`cachedInputTokens` = cache reads); the model recorded is the
//! one the response names. The API does not report cost.
//!
//! The request and the observation are built in
//! `cautilus_providers_core::anthropic` (plain Rust, unit-tested natively).

use cautilus_providers_core::Api;
use cautilus_providers_core::anthropic::{self, NAME};
use cautilus_sdk::provider::{Invocation, Needs, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct Anthropic;

const API: Api = Api {
    name: NAME,
    key_variable: "ANTHROPIC_API_KEY",
    url_variable: "ANTHROPIC_BASE_URL",
    path: "v1/messages",
    headers: &[(
        "anthropic-version",
        cautilus_providers_core::anthropic::API_VERSION,
    )],
    key_header: ("x-api-key", false),
    request_body: anthropic::request_body,
    observation: anthropic::observation,
    fold_stream: None,
};

impl Provider for Anthropic {
    fn info() -> ProviderInfo {
        ProviderInfo {
            // `*`: the host grants the base URL's host only.
            plugin: plugin_info!(Capability::Http(vec!["*".into()])),
            harness: "anthropic-api".into(),
            modes: vec!["messaging".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::anthropic()
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        API.invoke(&request)
    }
}

export_provider!(Anthropic);
