//! The built-in components' plain-Rust logic (scorers-core, providers-core,
//! presets-app)
//! lives in the `plugins/` workspace, which `cargo test --workspace` does
//! not reach; this runs its unit tests natively so they gate every run.

use std::process::Command;

#[test]
fn the_built_in_components_logic_passes_its_unit_tests() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let plugins = crate::support::repo().join("plugins");
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-units");
    let mut command = Command::new(&cargo);
    command
        .current_dir(&plugins)
        .args(["test", "--quiet", "--manifest-path"])
        .arg(plugins.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .args([
            "-p",
            "cautilus-scorers-core",
            "-p",
            "cautilus-providers-core",
            "-p",
            "cautilus-presets-app",
        ]);
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        command.env_remove(var);
    }
    let output = command.output().expect("run cargo test in plugins/");
    assert!(
        output.status.success(),
        "unit tests of plugins/ failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
