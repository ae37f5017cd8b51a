// Shared by host/build.rs and tests/build.rs through `include!`: builds a
// wasm32-wasip2 workspace with a nested cargo.
//
// The nested cargo uses its own target directory (`<target>/wasm-plugins`)
// so it never waits on the outer build's lock, and shares the outer
// jobserver so it respects `-j`. The outer build's flags are for the host,
// not for wasm guests, so they are removed.

/// Builds `packages` of the workspace at `manifest` in release mode for
/// wasm32-wasip2; returns the directory holding the `.wasm` files.
fn build_wasm_workspace(manifest: &std::path::Path, packages: &[&str]) -> std::path::PathBuf {
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let target_dir = out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| out_dir.clone())
        .join("wasm-plugins");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = std::process::Command::new(&cargo);
    // Run in the workspace so its .cargo/config.toml (target features) applies.
    command
        .current_dir(manifest.parent().expect("a manifest lives in a directory"))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(&target_dir);
    for package in packages {
        command.args(["-p", package]);
    }
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        command.env_remove(var);
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run `{cargo}` to build {}: {e}", manifest.display()));
    assert!(
        status.success(),
        "building {} for wasm32-wasip2 failed (see above). The target comes with \
         rust-toolchain.toml; otherwise run `rustup target add wasm32-wasip2`.",
        manifest.display()
    );
    target_dir.join("wasm32-wasip2").join("release")
}

/// Cargo watches only a directory's own mtime; list its files so edits rebuild.
fn rerun_if_tree_changed(path: &std::path::Path) {
    println!("cargo:rerun-if-changed={}", path.display());
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|name| name == "target") {
            continue;
        }
        if path.is_dir() {
            rerun_if_tree_changed(&path);
        } else {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
