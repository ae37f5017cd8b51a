//! `cautilus plugin new scorer` writes a crate that builds with one cargo
//! command and loads with `cautilus score --scorer path/to/it.wasm`.

use std::path::Path;
use std::process::Command;

use crate::support::run;

/// The toolchain this repository pins (it has the wasm32-wasip2 target).
fn pinned_toolchain() -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rust-toolchain.toml");
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("channel = "))
        .map(|v| v.trim_matches('"').to_string())
        .expect("channel in rust-toolchain.toml")
}

#[test]
fn scaffolded_scorer_builds_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("mentions-probe");
    let (code, stdout, stderr) = run(&[
        "plugin",
        "new",
        "scorer",
        "mentions-probe",
        "--path",
        crate_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("cargo build --release --target wasm32-wasip2"),
        "{stdout}"
    );

    // Share the wasm target dir with the build scripts so dependencies are reused.
    let target_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/wasm-plugins");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&crate_dir)
        .env("RUSTUP_TOOLCHAIN", pinned_toolchain())
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .unwrap();
    assert!(status.success(), "the scaffolded crate builds");

    let wasm = target_dir.join("wasm32-wasip2/release/mentions_probe.wasm");
    let (code, stdout, stderr) = run(&[
        "score",
        "--scorer",
        wasm.to_str().unwrap(),
        "--output",
        "hello world",
        "--config",
        r#"{"value": "world"}"#,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with("PASS mentions-probe"), "{stdout}");
    let (code, _, _) = run(&[
        "score",
        "--scorer",
        wasm.to_str().unwrap(),
        "--output",
        "hello",
        "--expected",
        "world",
    ]);
    assert_eq!(code, 1);

    let (code, _, stderr) = run(&[
        "plugin",
        "new",
        "scorer",
        "mentions-probe",
        "--path",
        crate_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "refuses to overwrite");
    assert!(stderr.contains("already exists"), "{stderr}");
}
