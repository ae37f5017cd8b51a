//! The `openai` provider (harness `openai-api`): one OpenAI-compatible
//! Chat Completions call per case, through the host's `http` import.
//!
//! Works against any compatible server (OpenAI, llama.cpp server, vLLM,
//! Ollama): the host passes the base URL (`OPENAI_BASE_URL`, default
//! `https://api.openai.com/v1`) and, when `OPENAI_API_KEY` is set, the
//! name of the secret the host sends as `Authorization: Bearer …`. The
//! suite's `system` goes first as a `system` message, then the case's
//! messages as they are. Usage comes from the response's `usage`; the
//! model recorded is the one the response names (the one that answered).
//! OpenAI's API does not report cost, so `costUsd` is left out.
//!
//! It gives embeddings too (for the run's judge: the
//! `embedding-similarity` scorer): one `<baseUrl>/embeddings` call, the key
//! sent by the host as for chat calls; default model
//! `text-embedding-3-small`.
//!
//! The request and the observation are built in
//! `cautilus_providers_core::openai` and `::openai_embed` (plain Rust,
//! unit-tested natively).

use cautilus_providers_core::Api;
use cautilus_providers_core::openai::{self, NAME};
use cautilus_providers_core::openai_embed;
use cautilus_sdk::provider::{
    EmbedRequest, EmbedResponse, Embedder, Invocation, Needs, Provider, ProviderInfo,
};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};

struct OpenAi;

const API: Api = Api {
    name: NAME,
    key_variable: "OPENAI_API_KEY",
    url_variable: "OPENAI_BASE_URL",
    path: "chat/completions",
    headers: &[],
    key_header: ("authorization", true),
    request_body: openai::request_body,
    observation: openai::observation,
    fold_stream: Some(openai::fold_stream),
};

impl Provider for OpenAi {
    fn info() -> ProviderInfo {
        ProviderInfo {
            // `*`: the host grants the base URL's host only.
            plugin: plugin_info!(Capability::Http(vec!["*".into()])),
            harness: "openai-api".into(),
            modes: vec!["messaging".into()],
        }
    }

    fn needs() -> Needs {
        cautilus_providers_core::needs::openai()
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        API.invoke(&request)
    }

    fn embedder() -> Option<Embedder> {
        Some(Embedder {
            default_model: openai_embed::DEFAULT_MODEL.into(),
        })
    }

    fn embed(request: EmbedRequest) -> Result<EmbedResponse, PluginError> {
        openai_embed::embed(&request)
    }
}

export_provider!(OpenAi);
