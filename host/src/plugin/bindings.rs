//! Host-side bindings generated from `wit/` for the three plugin worlds.
//!
//! The `types` and `log` interfaces are generated once (in `scorer`) and
//! shared by the other worlds through `with`, so one `Host` impl serves all.

#![allow(clippy::too_many_arguments)]

pub mod scorer {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "scorer",
    });
}

pub mod preset {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "preset",
        with: {
            "cautilus:plugin/types": super::scorer::cautilus::plugin::types,
            "cautilus:plugin/log": super::scorer::cautilus::plugin::log,
        },
    });
}

pub mod provider {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "provider",
        with: {
            "cautilus:plugin/types": super::scorer::cautilus::plugin::types,
            "cautilus:plugin/log": super::scorer::cautilus::plugin::log,
        },
    });
}

pub use scorer::cautilus::plugin::types;
