//! What a run sees of packs: the user's installed packs, each checked
//! against the project's `cautilus.lock` when there is one (the lock's
//! version is the one used, and its bytes must match), else the newest
//! installed version.

use std::path::{Path, PathBuf};

use super::PackError;
use super::home::{InstalledPack, PackHome};
use super::lock::LockFile;
use super::manifest::{ComponentEntry, ComponentKind};

/// The packs a process may use.
#[derive(Debug, Clone)]
pub struct PackSet {
    home: PackHome,
    lock: Option<(PathBuf, LockFile)>,
}

/// A component of a pack, found by reference.
#[derive(Debug, Clone)]
pub struct PackComponent {
    pub pack: InstalledPack,
    pub entry: ComponentEntry,
    pub path: PathBuf,
}

impl PackSet {
    pub fn new(home: PackHome, lock: Option<(PathBuf, LockFile)>) -> Self {
        Self { home, lock }
    }

    /// The user's packs, with the nearest `cautilus.lock` at or above
    /// `start` (the current directory for a command).
    pub fn from_env(start: &Path) -> Result<Self, PackError> {
        let home = PackHome::from_env()?;
        let lock = match LockFile::find(start) {
            Some(file) => {
                let lock = LockFile::read(&file)?;
                Some((file, lock))
            }
            None => None,
        };
        Ok(Self { home, lock })
    }

    pub fn home(&self) -> &PackHome {
        &self.home
    }

    pub fn lock_file(&self) -> Option<&Path> {
        self.lock.as_ref().map(|(file, _)| file.as_path())
    }

    /// The pack a run uses under `name`, checked against the lock.
    pub fn pack(&self, name: &str) -> Result<InstalledPack, PackError> {
        let locked = self
            .lock
            .as_ref()
            .and_then(|(file, lock)| lock.get(name).map(|l| (file, lock, l)));
        match locked {
            Some((file, lock, pinned)) => {
                let pack = self.home.get(name, Some(&pinned.version))?;
                lock.check(file, &pack)?;
                Ok(pack)
            }
            None => self.home.get(name, None),
        }
    }

    /// The components of kind `kind` of the pack a run uses under `pack`.
    pub fn components(
        &self,
        pack: &str,
        kind: ComponentKind,
    ) -> Result<Vec<PackComponent>, PackError> {
        let installed = self.pack(pack)?;
        Ok(installed
            .manifest
            .components
            .iter()
            .filter(|c| c.kind == kind)
            .map(|entry| PackComponent {
                path: installed.component_path(entry),
                entry: entry.clone(),
                pack: installed.clone(),
            })
            .collect())
    }

    /// The component of pack `pack` serving `id` as a `kind`.
    pub fn component(
        &self,
        pack: &str,
        kind: ComponentKind,
        id: &str,
    ) -> Result<PackComponent, PackError> {
        let components = self.components(pack, kind)?;
        if let Some(found) = components
            .iter()
            .find(|c| c.entry.ids.iter().any(|i| i == id))
        {
            return Ok(found.clone());
        }
        let served: Vec<&str> = components
            .iter()
            .flat_map(|c| c.entry.ids.iter().map(String::as_str))
            .collect();
        Err(PackError::Other(format!(
            "pack {pack} has no {} `{id}` (it has: {})",
            kind.as_str(),
            if served.is_empty() {
                "none".into()
            } else {
                served.join(", ")
            }
        )))
    }
}

/// `Some((pack, id))` when `reference` names a pack's plugin: `<pack>/<id>`
/// with a pack name (lowercase letters, digits, `-`), an id without `/`,
/// and nothing that makes it a file path (`./`, `/`, `.wasm`).
pub fn split_pack_reference(reference: &str) -> Option<(&str, &str)> {
    let (pack, id) = reference.split_once('/')?;
    let pathlike = id.contains(['/', '\\']) || id.ends_with(".wasm") || id.is_empty();
    (super::manifest::valid_name(pack) && !pathlike).then_some((pack, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_references_are_told_from_paths() {
        assert_eq!(
            split_pack_reference("acme/mentions-all"),
            Some(("acme", "mentions-all"))
        );
        assert_eq!(split_pack_reference("acme/app/prompt"), None);
        assert_eq!(split_pack_reference("./acme/x"), None);
        assert_eq!(split_pack_reference("/abs/x"), None);
        assert_eq!(split_pack_reference("dir/x.wasm"), None);
        assert_eq!(split_pack_reference("contains"), None);
        assert_eq!(split_pack_reference("Acme/x"), None);
    }
}
