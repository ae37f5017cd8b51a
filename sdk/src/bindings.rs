//! wit-bindgen output for the three worlds. Hidden from plugin authors: they
//! see the SDK's traits and the types re-exported at the crate root.

#![allow(missing_docs, clippy::all)]

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
