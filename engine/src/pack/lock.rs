//! `cautilus.lock`: the packs a project uses, each pinned to a version, the
//! source it came from, its archive's digest, its manifest's hash and every
//! file's sha256. A run refuses a pack whose installed bytes or manifest
//! differ from the lock.
//!
//! ```toml
//! # Written by `cautilus pack install`; commit it.
//! version = 2
//!
//! [[pack]]
//! name = "acme-evals"
//! version = "0.2.1"
//! source = "oci://registry.example.com/acme/evals:0.2.1"
//! digest = "sha256:…"
//! manifest = "…"   # sha256 of the manifest's content (Manifest::content_hash)
//!
//! [pack.files]
//! "components/scorers.wasm" = "…"
//! ```
//!
//! The manifest is pinned because it says what the files are: which ids a
//! component serves, its kind, the capabilities it may request. An
//! installed manifest edited with its files untouched (`ids` widened to
//! serve a built-in's id, a capability added) is refused like a changed
//! file. Version 1 locks (no `manifest`) are still read: their packs run
//! with a warning to pin them again (`cautilus pack install <source>`);
//! a hash is refused only when it is there and differs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::PackError;
use super::archive::sha256_hex;
use super::home::InstalledPack;

pub const LOCK_FILE: &str = "cautilus.lock";
/// The format written; 1 (without manifest hashes) is read too.
const FORMAT: u32 = 2;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    pub version: u32,
    #[serde(default, rename = "pack", skip_serializing_if = "Vec::is_empty")]
    pub packs: Vec<LockedPack>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedPack {
    pub name: String,
    pub version: String,
    pub source: String,
    pub digest: String,
    /// The hash of the pack's manifest ([`Manifest::content_hash`]); absent
    /// in a version 1 lock.
    ///
    /// [`Manifest::content_hash`]: super::manifest::Manifest::content_hash
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// sha256 of every file of the pack (manifest excluded), by path.
    pub files: BTreeMap<String, String>,
}

impl LockFile {
    pub fn new() -> Self {
        Self {
            version: FORMAT,
            packs: Vec::new(),
        }
    }

    /// The nearest `cautilus.lock` at or above `start`.
    pub fn find(start: &Path) -> Option<PathBuf> {
        let start = std::path::absolute(start).ok()?;
        start
            .ancestors()
            .map(|dir| dir.join(LOCK_FILE))
            .find(|path| path.is_file())
    }

    pub fn read(path: &Path) -> Result<Self, PackError> {
        let text = std::fs::read_to_string(path).map_err(|source| PackError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let lock: LockFile = toml::from_str(&text).map_err(|e| PackError::Lock {
            file: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if !(1..=FORMAT).contains(&lock.version) {
            return Err(PackError::Lock {
                file: path.to_path_buf(),
                message: format!(
                    "lock format {} is not one this cautilus reads (1 to {FORMAT}); upgrade cautilus",
                    lock.version
                ),
            });
        }
        let unpinned: Vec<&str> = lock
            .packs
            .iter()
            .filter(|p| p.manifest.is_none())
            .map(|p| p.name.as_str())
            .collect();
        // A format 2 lock pins every manifest: one without its hash was
        // edited (deleting the line would unpin the manifest).
        if lock.version >= 2 && !unpinned.is_empty() {
            return Err(PackError::Lock {
                file: path.to_path_buf(),
                message: format!(
                    "{} pinned without its manifest's hash, which a format {} lock always holds (the line was removed); pin again with `cautilus pack install <source>` and commit the lock",
                    crate::term::inline(&unpinned.join(", ")),
                    lock.version
                ),
            });
        }
        if !unpinned.is_empty() {
            crate::term_eprintln!(
                "warning: {} pins {} without its manifest's hash (written by an earlier cautilus), so a changed manifest would go unnoticed; pin again with `cautilus pack install <source>` and commit the lock",
                path.display(),
                unpinned.join(", ")
            );
        }
        Ok(lock)
    }

    /// Writes the lock atomically.
    pub fn write(&self, path: &Path) -> Result<(), PackError> {
        let lock = Self {
            version: FORMAT,
            packs: self.packs.clone(),
        };
        let text = format!(
            "# Written by `cautilus pack install`: the packs this project uses, pinned. Commit it.\n{}",
            toml::to_string(&lock).expect("a lock always serializes")
        );
        crate::eval::files::write_bytes(path, text.as_bytes()).map_err(|e| PackError::Lock {
            file: path.to_path_buf(),
            message: format!("cannot write it: {e}"),
        })
    }

    pub fn get(&self, name: &str) -> Option<&LockedPack> {
        self.packs.iter().find(|p| p.name == name)
    }

    /// Pins `pack` (replacing any earlier pin of the same name).
    pub fn pin(&mut self, pack: &InstalledPack) -> Result<(), PackError> {
        let mut files = BTreeMap::new();
        for path in pack.manifest.files() {
            files.insert(path.to_string(), hash_file(&pack.dir.join(path))?);
        }
        let locked = LockedPack {
            name: pack.name().to_string(),
            version: pack.version().to_string(),
            source: pack.record.source.clone(),
            digest: pack.record.digest.clone(),
            manifest: Some(pack.manifest.content_hash()),
            files,
        };
        self.packs.retain(|p| p.name != locked.name);
        self.packs.push(locked);
        self.packs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(())
    }

    /// Checks an installed pack against its pin: same version, same
    /// archive digest, and every file hashing as locked.
    pub fn check(&self, file: &Path, pack: &InstalledPack) -> Result<(), PackError> {
        let Some(locked) = self.get(pack.name()) else {
            return Ok(());
        };
        let refuse = |message: String| PackError::LockMismatch {
            lock: file.to_path_buf(),
            pack: pack.label(),
            message,
        };
        if locked.version != pack.version() {
            return Err(refuse(format!(
                "the lock pins version {}; install it with `cautilus pack install {}`",
                locked.version, locked.source
            )));
        }
        if locked.digest != pack.record.digest {
            return Err(refuse(format!(
                "it was installed from an archive with digest {}, the lock pins {}",
                pack.record.digest, locked.digest
            )));
        }
        if let Some(pinned) = &locked.manifest
            && *pinned != pack.manifest.content_hash()
        {
            return Err(refuse(format!(
                "its manifest ({}) is not the one the lock pins, though its files are: it was edited after it was pinned; install the pack again with `cautilus pack install {} --force` (and commit the lock if the change is meant), or restore the manifest",
                pack.dir.join(super::manifest::MANIFEST).display(),
                locked.source
            )));
        }
        let listed: Vec<&str> = pack.manifest.files().collect();
        if listed.len() != locked.files.len()
            || listed.iter().any(|p| !locked.files.contains_key(*p))
        {
            return Err(refuse("its files are not the ones the lock lists".into()));
        }
        for (path, sha) in &locked.files {
            let actual = hash_file(&pack.dir.join(path))?;
            if &actual != sha {
                return Err(refuse(format!(
                    "`{path}` has sha256 {actual}, the lock pins {sha}; reinstall it with `cautilus pack install {} --force`",
                    locked.source
                )));
            }
        }
        Ok(())
    }
}

fn hash_file(path: &Path) -> Result<String, PackError> {
    let bytes = std::fs::read(path).map_err(|source| PackError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(sha256_hex(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::archive::{PackFiles, digest};
    use crate::pack::home::{InstallRecord, PackHome};
    use crate::pack::manifest::Manifest;

    fn install(home: &PackHome, body: &[u8]) -> InstalledPack {
        let text = format!(
            "[pack]\nname = \"demo\"\nversion = \"0.1.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"s.wasm\"\nkind = \"scorer\"\nids = [\"s\"]\nsha256 = \"{}\"\n",
            sha256_hex(body)
        );
        let files = PackFiles {
            manifest: Manifest::parse(&text, Path::new("m")).unwrap(),
            files: BTreeMap::from([("s.wasm".to_string(), body.to_vec())]),
        };
        let record = InstallRecord {
            source: "demo.cpack".into(),
            digest: digest(&files.to_archive()),
            installed_at: String::new(),
            granted: Vec::new(),
        };
        home.install(&files, record, true).unwrap()
    }

    #[test]
    fn a_pinned_pack_passes_until_a_byte_changes() {
        let dir = tempfile::tempdir().unwrap();
        let home = PackHome::new(dir.path().join("home"));
        let pack = install(&home, b"component");
        let mut lock = LockFile::new();
        lock.pin(&pack).unwrap();
        let file = dir.path().join(LOCK_FILE);
        lock.write(&file).unwrap();
        let lock = LockFile::read(&file).unwrap();
        assert_eq!(LockFile::find(dir.path()).as_deref(), Some(file.as_path()));
        lock.check(&file, &pack).unwrap();

        std::fs::write(pack.dir.join("s.wasm"), b"componenT").unwrap();
        let error = lock.check(&file, &pack).unwrap_err().to_string();
        assert!(error.contains("`s.wasm` has sha256"), "{error}");
        assert!(error.contains("cautilus.lock"), "{error}");

        let other = install(&home, b"another build");
        let error = lock.check(&file, &other).unwrap_err().to_string();
        assert!(error.contains("the lock pins sha256:"), "{error}");
    }

    #[test]
    fn a_changed_manifest_is_refused_and_a_lock_without_its_hash_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let home = PackHome::new(dir.path().join("home"));
        let pack = install(&home, b"component");
        let mut lock = LockFile::new();
        lock.pin(&pack).unwrap();
        let file = dir.path().join(LOCK_FILE);
        lock.write(&file).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("version = 2") && text.contains("manifest = "),
            "{text}"
        );

        // The same files, another manifest: the component serves one more id.
        let mut edited = pack.clone();
        edited.manifest.components[0].ids.push("equals".into());
        let error = lock.check(&file, &edited).unwrap_err().to_string();
        assert!(
            error.contains("demo@0.1.0")
                && error.contains("cautilus-pack.toml")
                && error.contains("cautilus pack install demo.cpack --force"),
            "{error}"
        );
        let mut capable = pack.clone();
        capable.manifest.components[0]
            .capabilities
            .push("model".into());
        assert!(lock.check(&file, &capable).is_err());

        // A version 2 lock whose manifest line was removed: refused.
        let unpinned: String = text
            .lines()
            .filter(|l| !l.starts_with("manifest = "))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&file, &unpinned).unwrap();
        let error = LockFile::read(&file).unwrap_err().to_string();
        assert!(
            error.contains("demo") && error.contains("without its manifest's hash"),
            "{error}"
        );

        // A version 1 lock (no manifest hash) reads and checks the files.
        let old: String = text
            .lines()
            .filter(|l| !l.starts_with("manifest = "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .replace("version = 2", "version = 1");
        std::fs::write(&file, old).unwrap();
        let old = LockFile::read(&file).unwrap();
        assert_eq!(old.packs[0].manifest, None);
        old.check(&file, &edited).unwrap();
        // Pinned again, it is written in the current format.
        let mut again = old.clone();
        again.pin(&pack).unwrap();
        again.write(&file).unwrap();
        let again = LockFile::read(&file).unwrap();
        assert_eq!(again.version, 2);
        assert!(again.check(&file, &edited).is_err());
    }

    #[test]
    fn a_lock_of_another_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(LOCK_FILE);
        std::fs::write(&file, "version = 9\n").unwrap();
        let error = LockFile::read(&file).unwrap_err().to_string();
        assert!(error.contains("upgrade cautilus"), "{error}");
    }
}
