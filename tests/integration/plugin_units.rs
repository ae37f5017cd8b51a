//! The built-in components' plain-Rust logic gates every run: scorers-core
//! and providers-core live in the `plugins/` workspace, which `cargo test
//! --workspace` does not reach, and the SDK's `app` module (the app
//! presets' logic) is behind a feature the workspace build leaves off. This
//! runs their unit tests natively.

use std::path::Path;
use std::process::Command;

/// Runs `cargo test --quiet <args>` on the workspace at `manifest` with its
/// own target directory `name` (the outer build holds its own), failing with
/// cargo's output.
fn cargo_test(manifest: &Path, name: &str, args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut command = Command::new(&cargo);
    command
        .current_dir(manifest.parent().unwrap())
        .args(["test", "--quiet", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(&target)
        .args(args);
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        command.env_remove(var);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("run cargo test on {}: {e}", manifest.display()));
    assert!(
        output.status.success(),
        "unit tests of {} failed:\n{}\n{}",
        manifest.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_built_in_components_logic_passes_its_unit_tests() {
    cargo_test(
        &crate::support::repo().join("plugins/Cargo.toml"),
        "plugin-units",
        &[
            "-p",
            "cautilus-scorers-core",
            "-p",
            "cautilus-providers-core",
        ],
    );
}

#[test]
fn the_sdk_app_module_passes_its_unit_tests() {
    cargo_test(
        &crate::support::repo().join("Cargo.toml"),
        "sdk-app-units",
        &["-p", "cautilus-sdk", "--features", "app"],
    );
}
