//! Builds the built-in plugin pack (`plugins/`) for `wasm32-wasip2` and
//! generates the table that embeds it, so the `cautilus` binary is
//! self-contained.
//!
//! The nested cargo uses its own target directory (`<target>/wasm-plugins`)
//! so it never waits on the outer build's lock, and shares the outer
//! jobserver so it respects `-j`.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// (short name, crate name) of every built-in component.
const COMPONENTS: &[(&str, &str)] = &[("scorers", "cautilus-builtin-scorers")];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest_dir
        .parent()
        .expect("host/ has a parent")
        .to_path_buf();
    let plugins = repo.join("plugins");
    for watched in ["plugins", "wit", "sdk/src", "sdk/Cargo.toml"] {
        emit_rerun_tree(&repo.join(watched));
    }

    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let target_dir = outer_target_dir(&out_dir).join("wasm-plugins");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());

    let mut command = Command::new(&cargo);
    command
        .arg("build")
        .arg("--release")
        .args(["--target", "wasm32-wasip2"])
        .arg("--manifest-path")
        .arg(plugins.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    for (_, krate) in COMPONENTS {
        command.args(["-p", krate]);
    }
    // The outer build's settings are for the host, not for wasm guests.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        command.env_remove(var);
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run `{cargo}` to build the built-in plugins: {e}"));
    if !status.success() {
        panic!(
            "building the built-in plugins failed (see the output above). The wasm target is \
             installed automatically through rust-toolchain.toml; if not, run \
             `rustup target add wasm32-wasip2`."
        );
    }

    let mut table = String::from(
        "/// Every component compiled into this binary.\npub static BUILTIN_COMPONENTS: &[BuiltinComponent] = &[\n",
    );
    for (name, krate) in COMPONENTS {
        let wasm = target_dir
            .join("wasm32-wasip2/release")
            .join(format!("{}.wasm", krate.replace('-', "_")));
        let bytes = std::fs::read(&wasm)
            .unwrap_or_else(|e| panic!("built component {} is missing: {e}", wasm.display()));
        let embedded = out_dir.join(format!("{name}.wasm"));
        std::fs::write(&embedded, &bytes).expect("writing the embedded component");
        let sha = hex::encode(Sha256::digest(&bytes));
        table.push_str(&format!(
            "    BuiltinComponent {{ name: {name:?}, bytes: include_bytes!({:?}), sha256: {sha:?} }},\n",
            embedded.display().to_string()
        ));
    }
    table.push_str("];\n");
    std::fs::write(out_dir.join("builtin_components.rs"), table)
        .expect("writing the component table");
}

/// The outer target directory (the one holding `CACHEDIR.TAG`), else OUT_DIR.
fn outer_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.to_path_buf())
}

/// Cargo only watches a directory's own mtime; list files so edits rebuild.
fn emit_rerun_tree(path: &Path) {
    if path.is_file() {
        println!("cargo:rerun-if-changed={}", path.display());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    println!("cargo:rerun-if-changed={}", path.display());
    for entry in entries.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "target") {
            continue;
        }
        emit_rerun_tree(&path);
    }
}
