// Shared by builtins/build.rs and tests/build.rs through `include!`: builds a
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
    // The target directory. A `--target <triple>` build (cargo-dist) has a
    // second CACHEDIR.TAG in `target/<triple>/`: it uses the one above, to
    // share the components the plain builds made.
    let tagged = |dir: &std::path::Path| dir.join("CACHEDIR.TAG").is_file();
    let target_dir = out_dir
        .ancestors()
        .find(|dir| tagged(dir))
        .map(|dir| match dir.parent() {
            Some(parent) if tagged(parent) => parent,
            _ => dir,
        })
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| out_dir.clone())
        .join("wasm-plugins");
    ensure_wasm_target();
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
        "building {} for wasm32-wasip2 failed: see the compiler's messages above",
        manifest.display()
    );
    target_dir.join("wasm32-wasip2").join("release")
}

/// The guest target. rust-toolchain.toml lists it, but rustup adds listed
/// targets only when it installs the toolchain: a machine that already had
/// the pinned toolchain lacks it, and the nested build would fail with
/// "can't find crate for `std`". Install it through rustup, saying so, or
/// stop with the exact command to run.
const WASM_TARGET: &str = "wasm32-wasip2";

fn ensure_wasm_target() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let installed = || {
        std::process::Command::new(&rustc)
            .args(["--print", "target-libdir", "--target", WASM_TARGET])
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .and_then(|dir| std::fs::read_dir(dir).ok())
            .is_some_and(|entries| {
                entries.flatten().any(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("libstd-") && name.ends_with(".rlib")
                })
            })
    };
    if installed() {
        return;
    }
    // The toolchain rustup chose for this build (from rust-toolchain.toml).
    let toolchain = std::env::var("RUSTUP_TOOLCHAIN").ok();
    let mut args = vec!["target", "add", WASM_TARGET];
    if let Some(toolchain) = toolchain.as_deref() {
        args.extend(["--toolchain", toolchain]);
    }
    let command = format!("rustup {}", args.join(" "));
    println!(
        "cargo:warning=the {WASM_TARGET} target (needed for the built-in plugins) is not installed; running `{command}`"
    );
    let status = std::process::Command::new("rustup").args(&args).status();
    match status {
        Ok(status) if status.success() && installed() => {}
        Ok(status) => panic!(
            "`{command}` failed ({status}); the built-in plugins are built for {WASM_TARGET}. \
             Run `{command}` yourself, then build again."
        ),
        Err(error) => panic!(
            "the {WASM_TARGET} target is not installed and rustup could not be run ({error}). \
             Install it with `{command}` (or your toolchain manager's equivalent), then build again."
        ),
    }
}
