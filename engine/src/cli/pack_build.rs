//! Bringing a pack's components to date before `pack build` or `pack test`
//! checks them, and writing a pack's files: a leaf below the pack commands
//! ([`super::pack_cmd`], [`super::pack_new`], [`super::pack_test`]).

use std::path::Path;

use anyhow::Context;

use crate::pack::Manifest;
use crate::pack::archive::sha256_hex;
use crate::pack::manifest::MANIFEST;

/// Writes a file, creating its directory.
pub(super) fn write(path: &Path, bytes: impl AsRef<[u8]>) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// How `pack build` and `pack test` treat the components before checking them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Components {
    /// As they are on disk (`pack test --no-build`).
    AsTheyAre,
    /// Built unless their inputs are unchanged since they were built.
    Built,
    /// Built, every one (`pack build --rebuild`).
    Rebuilt,
}

/// Brings each component to `mode` ([`crate::pack::build::build_component`]:
/// its `build` command, its `source` copied to its `path`), then records its
/// sha256 in `manifest` (in memory). The commands' output goes to stderr.
pub(super) fn build_components(
    dir: &Path,
    manifest: &mut Manifest,
    mode: Components,
) -> anyhow::Result<()> {
    use crate::pack::build::{Built, build_component};
    for component in &mut manifest.components {
        if mode == Components::AsTheyAre {
            let path = dir.join(&component.path);
            let bytes = std::fs::read(&path).with_context(|| {
                format!(
                    "reading component {} (build it, or give `build`/`source` in {MANIFEST})",
                    path.display()
                )
            })?;
            component.sha256 = Some(sha256_hex(&bytes));
        } else if build_component(dir, component, mode == Components::Rebuilt)? == Built::UpToDate {
            crate::term_eprintln!(
                "kept {}: its inputs are unchanged since it was built (--rebuild builds it again)",
                component.path
            );
        }
    }
    Ok(())
}
