//! Host-side bindings generated from `wit/` for the three plugin worlds.
//!
//! The `types` and `log` interfaces are generated once (in `scorer`) and
//! shared by the other worlds through `with`, so one `Host` impl serves all.
//!
//! The preset world's `preset-contract` export is optional (presets built
//! against 0.1.0 lack it), so presets are instantiated through the
//! per-interface indices ([`super::preset::PresetPre`]) rather than the
//! world's all-or-nothing `PresetPre`.
//!
//! The provider world is async on the host side: its `http` and `process`
//! imports wait on I/O without holding a thread, and its exports are called
//! with `call_async`, so many provider calls can be in flight at once.

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

pub use preset::exports::cautilus::plugin::{preset_api, preset_contract};
pub use scorer::cautilus::plugin::types;
