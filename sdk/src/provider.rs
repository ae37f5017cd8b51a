//! The provider trait and the `export_provider!` macro.
//!
//! A provider turns one case into an observation: a model API call, a
//! coding-agent CLI run, or a deterministic fixture answer. Network and
//! processes are available only through [`http`] and [`process`], which the
//! host allows per capability grant.

use std::marker::PhantomData;

use crate::bindings::{provider_api, provider_needs};
use crate::types::{Observation, PluginError};

pub use crate::bindings::{http, process};
pub use provider_api::{Invocation, ProviderInfo};
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
