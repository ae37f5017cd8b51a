//! Host-side bindings generated from `wit/` for the three plugin worlds,
//! and the one facade over them: the generated modules are private here,
//! and the rest of the host names the contract's types, interfaces and
//! worlds only through the re-exports below (the model is Zed's
//! `wasm_host/wit.rs`). A new contract version changes this file: its
//! bindings are generated beside these and the re-exports say which one
//! the host speaks (`latest`), older ones forwarding to it.
//!
//! Every generated record, variant and enum is also `serde`-serializable:
//! what a component says about itself is kept beside its compiled artifact
//! ([`super::described`]), so a later process need not instantiate it to
//! know it.
//!
//! The `types` and `log` interfaces are generated once (in `scorer`) and
//! shared by the other worlds through `with`, so one `Host` impl serves all.
//!
//! The preset world's `preset-contract` export is optional (presets built
//! against 0.1.0 lack it), so presets are instantiated through the
//! per-interface indices ([`super::preset::PresetPre`]) rather than the
//! world's all-or-nothing `PresetPre`; providers likewise, for their
//! optional `provider-needs` and `provider-embed`
//! ([`super::provider_pre::ProviderPre`]).
//!
//! The provider world is async on the host side: its `http` and `process`
//! imports wait on I/O without holding a thread, and its exports are called
//! with `call_async`, so many provider calls can be in flight at once.

#![allow(clippy::too_many_arguments)]

mod scorer {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "scorer",
        additional_derives: [serde::Serialize, serde::Deserialize],
    });
}

mod preset {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "preset",
        additional_derives: [serde::Serialize, serde::Deserialize],
        with: {
            "cautilus:plugin/types": super::scorer::cautilus::plugin::types,
            "cautilus:plugin/log": super::scorer::cautilus::plugin::log,
        },
    });
}

mod provider {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "provider",
        additional_derives: [serde::Serialize, serde::Deserialize],
        imports: {
            "cautilus:plugin/http.send": async,
            "cautilus:plugin/process.run": async,
        },
        exports: { default: async },
        with: {
            "cautilus:plugin/types": super::scorer::cautilus::plugin::types,
            "cautilus:plugin/log": super::scorer::cautilus::plugin::log,
        },
    });
}

/// The contract version the host speaks; every name below is of it.
pub mod latest {
    /// The shared records (`observation`, `case-view`, `capability`, …).
    pub use super::scorer::cautilus::plugin::types;

    /// Host interfaces: what a plugin may import (each behind a grant).
    pub use super::provider::cautilus::plugin::{http, process};
    pub use super::scorer::cautilus::plugin::{log, model};

    /// Plugin interfaces: what each world exports.
    pub use super::preset::exports::cautilus::plugin::{preset_api, preset_contract};
    pub use super::provider::exports::cautilus::plugin::{
        provider_api, provider_embed, provider_needs,
    };
    pub use super::scorer::exports::cautilus::plugin::scorer_api;

    /// The worlds, to link and instantiate.
    pub use super::preset::Preset;
    pub use super::scorer::{Scorer, ScorerPre};
}

pub use latest::*;
