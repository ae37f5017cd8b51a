//! The digest of what a component's build reads (its manifest `inputs`),
//! so `pack build` can keep a component whose sources did not change.
//!
//! This is what makes a pack with a Python or JavaScript component build
//! to the same bytes twice: componentize-py and componentize-js snapshot
//! an initialized interpreter, and their output differs from run to run
//! (upstream: componentize-py#247, ComponentizeJS#321). Rust components
//! are reproducible from scratch as well (see [`super::build`]).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::PackError;
use super::manifest::ComponentEntry;

/// Directory names never part of a build's inputs: build outputs, caches,
/// installed dependencies and version control.
const SKIPPED: &[&str] = &["target", "node_modules", "__pycache__", ".git", "dist"];

/// The hex sha256 of the component's `inputs` under `dir`: every file's
/// path and bytes (links by their target text), in path order, without
/// the component's own `path` and `source`. `None` when it has no inputs.
pub fn digest(dir: &Path, component: &ComponentEntry) -> Result<Option<String>, PackError> {
    if component.inputs.is_empty() {
        return Ok(None);
    }
    let outputs: Vec<&str> = std::iter::once(component.path.as_str())
        .chain(component.source.as_deref())
        .collect();
    let mut files = Vec::new();
    for input in &component.inputs {
        collect(dir, input, &mut files)?;
    }
    files.sort();
    files.dedup();
    let mut hash = Sha256::new();
    for relative in files.iter().filter(|f| !outputs.contains(&f.as_str())) {
        let path = dir.join(relative);
        let meta = std::fs::symlink_metadata(&path).map_err(|source| PackError::Io {
            path: path.clone(),
            source,
        })?;
        let bytes = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).map_err(|source| PackError::Io {
                path: path.clone(),
                source,
            })?;
            format!("link:{}", target.display()).into_bytes()
        } else {
            std::fs::read(&path).map_err(|source| PackError::Io {
                path: path.clone(),
                source,
            })?
        };
        hash.update(relative.as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(Some(hex::encode(hash.finalize())))
}

/// Adds the files at `relative` (a file, or a directory walked without
/// following links) to `out`, as `/`-separated paths relative to `dir`.
fn collect(dir: &Path, relative: &str, out: &mut Vec<String>) -> Result<(), PackError> {
    let path = dir.join(relative);
    let meta = std::fs::symlink_metadata(&path).map_err(|source| PackError::Io {
        path: path.clone(),
        source,
    })?;
    if !meta.is_dir() {
        out.push(relative.to_string());
        return Ok(());
    }
    let entries = std::fs::read_dir(&path).map_err(|source| PackError::Io {
        path: path.clone(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| PackError::Io {
            path: path.clone(),
            source,
        })?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            return Err(PackError::Other(format!(
                "{}: a file name that is not UTF-8 cannot be a build input",
                entry.path().display()
            )));
        };
        if SKIPPED.contains(&name.as_str()) {
            continue;
        }
        collect(dir, &format!("{relative}/{name}"), out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::manifest::ComponentKind;

    fn component(inputs: &[&str]) -> ComponentEntry {
        ComponentEntry {
            path: "components/x.wasm".into(),
            kind: ComponentKind::Scorer,
            ids: vec!["x".into()],
            sha256: None,
            capabilities: vec![],
            build: None,
            source: Some("src/x.wasm".into()),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            inputs_sha256: None,
            examples: None,
        }
    }

    #[test]
    fn the_digest_follows_sources_not_outputs_or_caches() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/target")).unwrap();
        std::fs::write(root.join("src/app.py"), "a").unwrap();
        let first = digest(root, &component(&["src"])).unwrap().unwrap();
        std::fs::write(root.join("src/x.wasm"), "output").unwrap();
        std::fs::write(root.join("src/target/junk"), "cache").unwrap();
        assert_eq!(digest(root, &component(&["src"])).unwrap().unwrap(), first);
        std::fs::write(root.join("src/app.py"), "b").unwrap();
        assert_ne!(digest(root, &component(&["src"])).unwrap().unwrap(), first);
        std::fs::rename(root.join("src/app.py"), root.join("src/app2.py")).unwrap();
        let renamed = digest(root, &component(&["src"])).unwrap().unwrap();
        std::fs::write(root.join("src/app2.py"), "a").unwrap();
        assert_ne!(
            digest(root, &component(&["src"])).unwrap().unwrap(),
            renamed
        );
        assert_eq!(digest(root, &component(&[])).unwrap(), None);
        assert!(digest(root, &component(&["missing"])).is_err());
    }
}
