//! The sandboxed WebAssembly component runtime.
//!
//! Module map:
//! - [`engine`]: the one `Engine` and the epoch ticker behind deadlines;
//! - [`cache`]: the on-disk compiled-component cache;
//! - `describe`: calling a component's `describe` once when it loads;
//! - `described`: what each component said about itself, kept beside it;
//! - [`notice`]: the stderr notice of a long first compile;
//! - [`runtime`]: loading components, world/version detection, stores;
//! - `prepared`: a component made ready to instantiate (at load or on first use), the linkers;
//! - [`limits`]: per-store limits;
//! - [`store_state`]: a store's data (WASI without authority, one context per host interface);
//! - [`capability`]: one policy per capability (requested ∩ pack ceiling ∩ run grant);
//! - [`imports`]: host imports (`log`, `model`, `http`, `process`), each seeing its own context;
//! - [`io`]: the tokio runtime that drives provider calls and their I/O;
//! - [`scorer`]: scorer configurations and sessions (prepare once, score many, negation);
//! - [`scorer_instance`]: one instance of a scorer plugin serving many configurations;
//! - [`oneshot`]: single provider calls, and guest errors to typed errors;
//! - `live`: one live instance serving many calls (preset and provider sessions);
//! - [`preset`]: preset sessions (one store serving a run's batches);
//! - [`provider`]: provider sessions (one store serving a run's cases);
//! - `provider_pre`: a provider ready to instantiate, and its declared needs;
//! - [`builtin`]: the components compiled into this binary;
//! - [`registry`]: resolving `<id|pack/id|path>` references;
//! - [`packs`]: a pack's components, checked against its manifest;
//! - [`error`]: typed errors.

pub mod bindings;
pub mod builtin;
pub mod cache;
pub mod capability;
mod capture;
mod describe;
mod described;
pub mod engine;
pub mod error;
pub mod grants;
mod guest_call;
pub mod imports;
pub mod io;
pub mod limits;
mod live;
pub mod net;
pub mod notice;
pub mod oneshot;
pub mod packs;
mod prepared;
pub mod preset;
mod preset_pre;
pub mod provider;
mod provider_pre;
pub mod registry;
pub mod runtime;
pub mod scorer;
pub mod scorer_instance;
pub mod scorer_session;
pub mod store_state;
mod world;

pub use bindings::types::{CaseView, Observation, Score, Usage};
pub use cache::CacheStatus;
pub use error::PluginError;
pub use grants::{Grants, ModelBackend};
pub use limits::Limits;
pub use provider_pre::ProviderDescription;
/// What a provider that declares nothing needs (tests build on it).
#[cfg(test)]
pub(crate) use provider_pre::nothing as declares_nothing;
pub use registry::{Registry, reference_in, split_path_reference};
pub use runtime::{Plugin, PluginSource, Runtime, RuntimeConfig};
pub use scorer::{GraderSpec, ScoreInput};
pub use scorer_instance::ScorerInstance;
pub use scorer_session::ScorerSession;

pub use crate::contract::{WIT_PACKAGE, WIT_VERSION};

/// The three plugin worlds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PluginKind {
    Scorer,
    Preset,
    Provider,
}

impl PluginKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scorer => "scorer",
            Self::Preset => "preset",
            Self::Provider => "provider",
        }
    }
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a plugin said about itself in `describe`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Description {
    Scorer(bindings::scorer_api::ScorerPack),
    Preset(Box<preset::PresetDescription>),
    Provider(Box<provider_pre::ProviderDescription>),
}

impl Description {
    /// The world whose `describe` this is.
    pub fn kind(&self) -> PluginKind {
        match self {
            Self::Scorer(_) => PluginKind::Scorer,
            Self::Preset(_) => PluginKind::Preset,
            Self::Provider(_) => PluginKind::Provider,
        }
    }

    /// A preset's `describe`, or `None` for other worlds.
    pub fn preset_info(&self) -> Option<&bindings::preset_api::PresetInfo> {
        match self {
            Self::Preset(preset) => Some(&preset.info),
            _ => None,
        }
    }

    pub fn plugin_info(&self) -> &bindings::types::PluginInfo {
        match self {
            Self::Scorer(pack) => &pack.plugin,
            Self::Preset(preset) => &preset.info.plugin,
            Self::Provider(info) => &info.plugin,
        }
    }
}

/// The first `max` characters of `text`, with an ellipsis when cut;
/// scrubbed of every granted secret before it is cut (a cut secret would
/// no longer be recognized).
pub fn excerpt(text: &str, max: usize) -> String {
    let text = crate::secrets::scrub_granted(text);
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}
