//! Builds the test components in `tests/components/` for wasm32-wasip2 and
//! tells the helpers where they are.

include!("../builtins/wasm_build.rs");
include!("../builtins/watch_tree.rs");

fn main() {
    let here = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    rerun_if_tree_changed(&here.join("components"));
    rerun_if_tree_changed(&here.join("../sdk"));
    rerun_if_tree_changed(&here.join("../wit"));
    rerun_if_tree_changed(&here.join("../schemas/presets"));
    // preset-exact includes the preset template `plugin new preset` writes.
    rerun_if_tree_changed(&here.join("../templates/preset-rust"));
    let dir = build_wasm_workspace(
        &here.join("components/Cargo.toml"),
        &[
            "test-hostile",
            "test-judge-probe",
            "test-preset-probe",
            "test-preset-outside",
            "test-preset-exact",
            "test-preset-v010",
            "test-provider-v010",
            "test-preset-bad-contract",
            "test-provider-probe",
            "test-wit-v2",
            "test-wit-next-patch",
        ],
    );
    println!(
        "cargo:rustc-env=CAUTILUS_TEST_COMPONENTS_DIR={}",
        dir.display()
    );
}
