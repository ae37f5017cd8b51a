//! Building one component of a pack from source (`pack build`): run its
//! `build` command in the pack directory, copy its `source` to its `path`,
//! unless its `inputs` are unchanged since `path` was built.
//!
//! Rust components build to the same bytes on any machine with the same
//! toolchain and lock (what `pack new` pins): the command runs with
//! `--remap-path-prefix` for the cargo home and the pack directory, the
//! only absolute paths rustc would write into a component (panic
//! locations of dependencies), and without `CARGO_TARGET_DIR`, so `source`
//! means what the manifest says.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::PackError;
use super::archive::sha256_hex;
use super::build_inputs;
use super::manifest::ComponentEntry;

/// What happened to one component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Built {
    /// Its build ran (or it has none) and `path` holds the result.
    Built,
    /// Its inputs are unchanged since `path` was built: kept as it is.
    UpToDate,
}

/// Builds `component` of the pack in `dir` (unless up to date and not
/// `rebuild`), then records its sha256 and inputs digest in it.
pub fn build_component(
    dir: &Path,
    component: &mut ComponentEntry,
    rebuild: bool,
) -> Result<Built, PackError> {
    let inputs = build_inputs::digest(dir, component)?;
    let path = dir.join(&component.path);
    let current = std::fs::read(&path).ok().map(|bytes| sha256_hex(&bytes));
    let up_to_date = !rebuild
        && inputs.is_some()
        && inputs == component.inputs_sha256
        && current.is_some()
        && current == component.sha256;
    if up_to_date {
        return Ok(Built::UpToDate);
    }
    if let Some(command) = &component.build {
        run(dir, &component.path, command)?;
    }
    if let Some(source) = &component.source {
        let from = dir.join(source);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| PackError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::copy(&from, &path).map_err(|e| PackError::Build {
            dir: dir.to_path_buf(),
            component: component.path.clone(),
            message: format!(
                "cannot copy the build output {source} to {}: {e} (is `source` what `build` writes?)",
                component.path
            ),
        })?;
    }
    let bytes = std::fs::read(&path).map_err(|e| PackError::Build {
        dir: dir.to_path_buf(),
        component: component.path.clone(),
        message: format!(
            "cannot read it: {e} (build it, or give `build`/`source` in the manifest)"
        ),
    })?;
    component.sha256 = Some(sha256_hex(&bytes));
    // The inputs as they were when this build started.
    component.inputs_sha256 = inputs;
    Ok(Built::Built)
}

fn run(dir: &Path, component: &str, command: &str) -> Result<(), PackError> {
    crate::term_eprintln!("building {component}: {command}");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdout(std::io::stderr())
        .env("CARGO_ENCODED_RUSTFLAGS", reproducible_rustflags(dir))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .status()
        .map_err(|e| PackError::Build {
            dir: dir.to_path_buf(),
            component: component.to_string(),
            message: format!("cannot run `{command}`: {e}"),
        })?;
    if !status.success() {
        return Err(PackError::Build {
            dir: dir.to_path_buf(),
            component: component.to_string(),
            message: format!("`{command}` failed ({status}); see its messages above"),
        });
    }
    Ok(())
}

/// The user's rustflags (`CARGO_ENCODED_RUSTFLAGS`, else `RUSTFLAGS`) and
/// the path remappings, as cargo's encoded list (separated by 0x1f).
fn reproducible_rustflags(dir: &Path) -> OsString {
    let mut flags: Vec<String> = match std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        Ok(encoded) if !encoded.is_empty() => encoded.split('\x1f').map(str::to_string).collect(),
        _ => std::env::var("RUSTFLAGS")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    };
    let remap = |from: &Path, to: &str| {
        let from = from.canonicalize().unwrap_or_else(|_| from.to_path_buf());
        format!("--remap-path-prefix={}={to}", from.display())
    };
    if let Some(home) = cargo_home() {
        flags.push(remap(&home, "/cargo"));
    }
    flags.push(remap(dir, "/pack"));
    OsString::from(flags.join("\x1f"))
}

fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
}
