//! Preset packs: how teams distribute their own scorers, presets and
//! providers.
//!
//! A pack is a directory or archive holding a manifest
//! (`cautilus-pack.toml`) and the files it lists: WebAssembly components,
//! each with its kind, ids, sha256 and the capabilities it may request, and
//! optional fixture templates. This module is the data side, with no
//! plugin runtime in it:
//! - [`manifest`]: the manifest, checked (names, versions, paths, capabilities);
//! - [`archive`]: the reproducible archive, and reading one defensively;
//! - [`build`], [`build_inputs`]: building a pack's components from source, reproducibly;
//! - [`home`]: the user's installed packs (`$CAUTILUS_HOME/packs/<name>/<version>`);
//! - [`lock`]: a project's `cautilus.lock`, pinning each pack's bytes;
//! - [`oci`]: publishing to and pulling from an OCI registry;
//! - [`set`]: what a run sees: the installed packs checked against the lock.
//!
//! Loading a pack's components and checking what they describe against the
//! manifest is [`crate::plugin::packs`].

pub mod archive;
pub mod build;
pub mod build_inputs;
pub mod home;
pub mod lock;
pub mod manifest;
pub mod oci;
pub mod set;

use std::path::PathBuf;

pub use archive::PackFiles;
pub use home::{InstallRecord, InstalledPack, PackHome};
pub use lock::LockFile;
pub use manifest::{Capability, ComponentEntry, ComponentKind, Manifest};
pub use set::PackSet;

/// What can go wrong with a pack.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("{}: {message}", file.display())]
    Manifest { file: PathBuf, message: String },
    #[error("pack archive {origin}: {message}")]
    Archive { origin: String, message: String },
    #[error(
        "{origin}: `{path}` has sha256 {actual} but the manifest states {stated}: the pack was changed after it was built or installed, so it is refused; install it again from its source"
    )]
    HashMismatch {
        origin: String,
        path: String,
        stated: String,
        actual: String,
    },
    #[error(
        "{pack} is already installed from another archive ({digest}); pass --force to replace it"
    )]
    AlreadyInstalled { pack: String, digest: String },
    #[error("pack `{pack}` is not installed in {} (installed: {}); install it with `cautilus pack install <oci://…|archive|dir>`", home.display(), list_or_none(installed))]
    NotInstalled {
        pack: String,
        installed: Vec<String>,
        home: PathBuf,
    },
    #[error("{}: {message}", file.display())]
    Lock { file: PathBuf, message: String },
    #[error("{pack} does not match {}: {message}", lock.display())]
    LockMismatch {
        lock: PathBuf,
        pack: String,
        message: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{reference}: {message}")]
    Oci { reference: String, message: String },
    #[error("no home directory to install packs in; set CAUTILUS_HOME")]
    NoHome,
    #[error("building `{component}` in {}: {message}", dir.display())]
    Build {
        dir: PathBuf,
        component: String,
        message: String,
    },
    #[error("{0}")]
    Other(String),
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}
