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

use cautilus_providers_core::anthropic::{NAME, observation, request_body};
use cautilus_providers_core::{ApiOptions, Call};
use cautilus_sdk::provider::{Invocation, Provider, ProviderInfo};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct Anthropic;

impl Provider for Anthropic {
    fn info() -> ProviderInfo {
        ProviderInfo {
            // `*`: the host grants the base URL's host only.
            plugin: plugin_info!(Capability::Http(vec!["*".into()])),
            harness: "anthropic-api".into(),
            modes: vec!["messaging".into()],
        }
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        if request.mode != "messaging" {
            return Err(PluginError::failed(format!(
                "{NAME}: answers messaging cases only; a workspace case needs a coding agent (`--provider claude-code` or `codex`)"
            )));
        }
        let options = ApiOptions::of(request.options.as_deref(), NAME)?;
        let body = request_body(&request, &options)?;
        let call = Call {
            provider: NAME,
            key_variable: "ANTHROPIC_API_KEY",
            url_variable: "ANTHROPIC_BASE_URL",
            options: &options,
            url: options.url("v1/messages"),
            headers: vec![(
                "anthropic-version",
                cautilus_providers_core::anthropic::API_VERSION.into(),
            )],
            key_header: ("x-api-key", false),
        };
        let answer = call.send(&body)?;
        observation(&request, &answer.body)
    }
}

export_provider!(Anthropic);
