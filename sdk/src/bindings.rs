//! wit-bindgen output for the three worlds, and the one facade over it.
//! Hidden from plugin authors: they see the SDK's traits and the types
//! re-exported at the crate root.
//!
//! The rest of the SDK names the contract's types and interfaces only
//! through the re-exports below (the model is the host's
//! `plugin/bindings.rs`, after Zed's `wasm_host/wit.rs`): a new contract
//! version changes this file. The generated world modules are public only
//! for the export macros (`export_scorers!`, `export_preset!`,
//! `export_provider!`), which expand in the plugin's crate and reach them
//! through `cautilus_sdk::__private` ([`macro_support`]).
//!
//! The `types` and `log` interfaces are generated once (in `scorer`) and
//! shared by the other worlds through `with`.

#![allow(missing_docs, clippy::all)]

#[doc(hidden)]
pub mod scorer {
    wit_bindgen::generate!({
        path: "wit",
        world: "scorer",
        pub_export_macro: true,
        export_macro_name: "__export_scorer_world",
        default_bindings_module: "cautilus_sdk::__private::scorer_bindings",
        runtime_path: "cautilus_sdk::__private::wit_bindgen::rt",
    });
}

#[doc(hidden)]
pub mod preset {
    wit_bindgen::generate!({
        path: "wit",
        world: "preset",
        pub_export_macro: true,
        export_macro_name: "__export_preset_world",
        default_bindings_module: "cautilus_sdk::__private::preset_bindings",
        runtime_path: "cautilus_sdk::__private::wit_bindgen::rt",
        with: {
            "cautilus:plugin/types@0.1.1": crate::bindings::scorer::cautilus::plugin::types,
            "cautilus:plugin/log@0.1.1": crate::bindings::scorer::cautilus::plugin::log,
        },
    });
}

#[doc(hidden)]
pub mod provider {
    wit_bindgen::generate!({
        path: "wit",
        world: "provider",
        pub_export_macro: true,
        export_macro_name: "__export_provider_world",
        default_bindings_module: "cautilus_sdk::__private::provider_bindings",
        runtime_path: "cautilus_sdk::__private::wit_bindgen::rt",
        with: {
            "cautilus:plugin/types@0.1.1": crate::bindings::scorer::cautilus::plugin::types,
            "cautilus:plugin/log@0.1.1": crate::bindings::scorer::cautilus::plugin::log,
        },
    });
}

/// The contract version the SDK speaks; every name below is of it.
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
}

pub use latest::*;

/// What the export macros expand to in a plugin's crate, re-exported by
/// `cautilus_sdk::__private`: each world's generated module (the
/// `default_bindings_module` above) and its export macro.
pub mod macro_support {
    pub use super::preset as preset_bindings;
    pub use super::preset::__export_preset_world;
    pub use super::provider as provider_bindings;
    pub use super::provider::__export_provider_world;
    pub use super::scorer as scorer_bindings;
    pub use super::scorer::__export_scorer_world;
}
