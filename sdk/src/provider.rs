//! The provider trait and the `export_provider!` macro.
//!
//! A provider turns one case into an observation: a model API call, a
//! coding-agent CLI run, or a deterministic fixture answer. Network and
//! processes are available only through [`http`] and [`process`], which the
//! host allows per capability grant. A provider may also give embeddings
//! ([`Provider::embedder`], [`Provider::embed`]) for the run's judge.

use std::marker::PhantomData;

use crate::bindings::{provider_api, provider_embed, provider_needs};
use crate::types::{Observation, PluginError};

pub use crate::bindings::{http, process};
pub use provider_api::{Invocation, ProviderInfo};
pub use provider_embed::{EmbedRequest, EmbedResponse, Embedder};
pub use provider_needs::{Endpoint, HomeSetting, Needs, PriceFamily, Program, ProgramHome};

/// A provider plugin.
pub trait Provider: 'static {
    fn info() -> ProviderInfo;
    fn invoke(request: Invocation) -> Result<Observation, PluginError>;

    /// What it needs from the machine (the model API it calls, the program
    /// it runs, its price family, the generation settings it applies); the
    /// host grants a built-in provider exactly that. Nothing by default: a
    /// provider then gets what the user grants (`--grant-http`, …).
    fn needs() -> Needs {
        Needs::default()
    }

    /// Whether it gives embeddings, and the model a request that names
    /// none gets. `None` by default: the host then refuses a judge's
    /// `embed` naming this provider, and never calls [`Self::embed`].
    fn embedder() -> Option<Embedder> {
        None
    }

    /// Vectors for `request.inputs`, one per input in order; called only
    /// when [`Self::embedder`] gives one. `request.options` are the
    /// provider's options as [`Self::invoke`] gets them (an API
    /// provider's endpoint and the name of the secret holding its key).
    fn embed(request: EmbedRequest) -> Result<EmbedResponse, PluginError> {
        let _ = request;
        Err(PluginError::failed(
            "this provider gives no embeddings (its `embeddings` are none)",
        ))
    }
}

impl Default for Needs {
    /// Nothing needed, nothing said about generation settings.
    fn default() -> Self {
        Self {
            endpoint: None,
            program: None,
            prices: None,
            settings_applied: None,
            stands_in_for: None,
            setup_hint: None,
            runs_suite_program: false,
            calls_suite_service: false,
        }
    }
}

#[doc(hidden)]
pub struct ProviderExport<P>(PhantomData<P>);

impl<P: Provider> provider_api::Guest for ProviderExport<P> {
    fn describe() -> ProviderInfo {
        P::info()
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        P::invoke(request)
    }
}

impl<P: Provider> provider_embed::Guest for ProviderExport<P> {
    fn embeddings() -> Option<Embedder> {
        P::embedder()
    }

    fn embed(request: EmbedRequest) -> Result<EmbedResponse, PluginError> {
        P::embed(request)
    }
}

impl<P: Provider> provider_needs::Guest for ProviderExport<P> {
    fn declare() -> Needs {
        P::needs()
    }
}

/// Exports a [`Provider`] as this component's provider world.
#[macro_export]
macro_rules! export_provider {
    ($provider:ty) => {
        const _: () = {
            type __CautilusProviderExport = $crate::__private::ProviderExport<$provider>;
            $crate::__private::__export_provider_world!(
                __CautilusProviderExport with_types_in $crate::__private::provider_bindings
            );
        };
    };
}
