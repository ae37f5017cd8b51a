//! The user's installed packs: `<home>/packs/<name>/<version>/`, each the
//! files of one archive as it was verified, plus `install.json` (where it
//! came from, the archive's digest, the capabilities granted to it).
//!
//! `<home>` is `$CAUTILUS_HOME`, else the platform's data directory
//! (`~/.local/share/cautilus` on Linux). An install is written to a staging
//! directory beside the packs and renamed into place, so a pack is either
//! wholly there or not at all.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::PackError;
use super::archive::{PackFiles, sha256_hex};
use super::manifest::{ComponentEntry, Manifest, valid_name};

/// The install record's file name inside an installed pack.
pub const INSTALL_RECORD: &str = "install.json";

/// Where packs are installed.
#[derive(Debug, Clone)]
pub struct PackHome {
    root: PathBuf,
}

/// How an installed pack got there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstallRecord {
    /// What it was installed from: `oci://…`, an archive or a directory.
    pub source: String,
    /// `sha256:<hex>` of the pack's archive (the OCI layer digest).
    pub digest: String,
    pub installed_at: String,
    /// Capabilities the user granted the pack (`model`, `http:<host>`, …).
    #[serde(default)]
    pub granted: Vec<String>,
}

/// One installed pack.
#[derive(Debug, Clone)]
pub struct InstalledPack {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub record: InstallRecord,
}

impl InstalledPack {
    pub fn name(&self) -> &str {
        &self.manifest.pack.name
    }

    pub fn version(&self) -> &str {
        &self.manifest.pack.version
    }

    /// `name@version`.
    pub fn label(&self) -> String {
        format!("{}@{}", self.name(), self.version())
    }

    pub fn component_path(&self, component: &ComponentEntry) -> PathBuf {
        self.dir.join(&component.path)
    }

    /// Hashes every component again against the manifest: a file changed
    /// since it was installed is refused.
    pub fn check_files(&self) -> Result<(), PackError> {
        for component in &self.manifest.components {
            let path = self.component_path(component);
            let bytes = std::fs::read(&path).map_err(|source| PackError::Io {
                path: path.clone(),
                source,
            })?;
            let stated = component.sha256.clone().unwrap_or_default();
            let actual = sha256_hex(&bytes);
            if actual != stated {
                return Err(PackError::HashMismatch {
                    origin: format!("installed pack {} ({})", self.label(), self.dir.display()),
                    path: component.path.clone(),
                    stated,
                    actual,
                });
            }
        }
        Ok(())
    }
}

impl PackHome {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `$CAUTILUS_HOME`, else the platform's data directory.
    pub fn from_env() -> Result<Self, PackError> {
        if let Some(home) = std::env::var_os("CAUTILUS_HOME").filter(|h| !h.is_empty()) {
            return Ok(Self::new(home));
        }
        directories::ProjectDirs::from("", "", "cautilus")
            .map(|dirs| Self::new(dirs.data_dir()))
            .ok_or(PackError::NoHome)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn packs_dir(&self) -> PathBuf {
        self.root.join("packs")
    }

    fn pack_dir(&self, name: &str, version: &str) -> PathBuf {
        self.packs_dir().join(name).join(version)
    }

    /// Installs verified files. Installing the same archive again changes
    /// nothing (or repairs changed files); another archive of an installed
    /// version is refused unless `replace`.
    pub fn install(
        &self,
        files: &PackFiles,
        record: InstallRecord,
        replace: bool,
    ) -> Result<InstalledPack, PackError> {
        let info = &files.manifest.pack;
        let target = self.pack_dir(&info.name, &info.version);
        if let Ok(existing) = self.read(&target) {
            let same = existing.record.digest == record.digest;
            // The same archive again changes nothing, unless the installed
            // files were changed since (then it repairs them) or the grants
            // differ (then they are recorded).
            if same
                && !replace
                && existing.record.granted == record.granted
                && existing.check_files().is_ok()
            {
                return Ok(existing);
            }
            if !same && !replace {
                return Err(PackError::AlreadyInstalled {
                    pack: existing.label(),
                    digest: existing.record.digest,
                });
            }
        }
        let parent = target.parent().expect("a pack directory has a parent");
        create_dir(parent)?;
        let staging = tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(parent)
            .map_err(|source| PackError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        let manifest_path = staging.path().join(super::manifest::MANIFEST);
        write(&manifest_path, files.manifest.to_toml().as_bytes())?;
        for (path, bytes) in &files.files {
            let full = staging.path().join(path);
            if let Some(dir) = full.parent() {
                create_dir(dir)?;
            }
            write(&full, bytes)?;
        }
        let record_text = serde_json::to_string_pretty(&record).expect("serializable");
        write(&staging.path().join(INSTALL_RECORD), record_text.as_bytes())?;
        // Swap in: the old version (if replaced) moves aside first.
        let old = parent.join(format!(".replaced-{}", info.version));
        if target.exists() {
            let _ = std::fs::remove_dir_all(&old);
            std::fs::rename(&target, &old).map_err(|source| PackError::Io {
                path: target.clone(),
                source,
            })?;
        }
        let staged = staging.keep();
        std::fs::rename(&staged, &target).map_err(|source| PackError::Io {
            path: target.clone(),
            source,
        })?;
        let _ = std::fs::remove_dir_all(&old);
        self.read(&target)
    }

    /// Every installed pack, by name then version.
    pub fn list(&self) -> Result<Vec<InstalledPack>, PackError> {
        let mut packs = Vec::new();
        let root = self.packs_dir();
        let Ok(names) = std::fs::read_dir(&root) else {
            return Ok(packs);
        };
        for name in names.flatten() {
            let name_text = name.file_name().to_string_lossy().into_owned();
            if !valid_name(&name_text) {
                continue;
            }
            for version in std::fs::read_dir(name.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let version_text = version.file_name().to_string_lossy().into_owned();
                if semver::Version::parse(&version_text).is_ok() {
                    packs.push(self.read(&version.path())?);
                }
            }
        }
        packs.sort_by(|a, b| {
            (a.name(), a.manifest.version()).cmp(&(b.name(), b.manifest.version()))
        });
        Ok(packs)
    }

    /// The installed pack `name`: the given version, else the newest.
    pub fn get(&self, name: &str, version: Option<&str>) -> Result<InstalledPack, PackError> {
        let all: Vec<InstalledPack> = self
            .list()?
            .into_iter()
            .filter(|p| p.name() == name)
            .collect();
        let found = match version {
            Some(version) => all.iter().find(|p| p.version() == version).cloned(),
            None => all.last().cloned(),
        };
        found.ok_or_else(|| PackError::NotInstalled {
            pack: match version {
                Some(v) => format!("{name}@{v}"),
                None => name.to_string(),
            },
            installed: all.iter().map(InstalledPack::label).collect(),
            home: self.packs_dir(),
        })
    }

    /// Removes `name` (one version, or every version); returns what went.
    pub fn remove(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<Vec<InstalledPack>, PackError> {
        let removed: Vec<InstalledPack> = match version {
            Some(_) => vec![self.get(name, version)?],
            None => {
                let all: Vec<InstalledPack> = self
                    .list()?
                    .into_iter()
                    .filter(|p| p.name() == name)
                    .collect();
                if all.is_empty() {
                    return Err(self.get(name, None).unwrap_err());
                }
                all
            }
        };
        for pack in &removed {
            std::fs::remove_dir_all(&pack.dir).map_err(|source| PackError::Io {
                path: pack.dir.clone(),
                source,
            })?;
        }
        let name_dir = self.packs_dir().join(name);
        let _ = std::fs::remove_dir(&name_dir); // only when empty
        Ok(removed)
    }

    fn read(&self, dir: &Path) -> Result<InstalledPack, PackError> {
        let manifest = Manifest::read(dir)?;
        let record_path = dir.join(INSTALL_RECORD);
        let text = std::fs::read_to_string(&record_path).map_err(|source| PackError::Io {
            path: record_path.clone(),
            source,
        })?;
        let record = serde_json::from_str(&text).map_err(|e| PackError::Manifest {
            file: record_path,
            message: e.to_string(),
        })?;
        Ok(InstalledPack {
            dir: dir.to_path_buf(),
            manifest,
            record,
        })
    }
}

fn create_dir(dir: &Path) -> Result<(), PackError> {
    std::fs::create_dir_all(dir).map_err(|source| PackError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), PackError> {
    std::fs::write(path, bytes).map_err(|source| PackError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::archive::digest;
    use std::collections::BTreeMap;

    fn files(version: &str, body: &[u8]) -> PackFiles {
        let text = format!(
            "[pack]\nname = \"demo\"\nversion = \"{version}\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"c/s.wasm\"\nkind = \"scorer\"\nids = [\"s\"]\nsha256 = \"{}\"\n",
            sha256_hex(body)
        );
        PackFiles {
            manifest: Manifest::parse(&text, Path::new("m")).unwrap(),
            files: BTreeMap::from([("c/s.wasm".to_string(), body.to_vec())]),
        }
    }

    fn record(files: &PackFiles) -> InstallRecord {
        InstallRecord {
            source: "test".into(),
            digest: digest(&files.to_archive()),
            installed_at: "2026-11-24T00:00:00Z".into(),
            granted: Vec::new(),
        }
    }

    #[test]
    fn install_list_get_and_remove() {
        let home = tempfile::tempdir().unwrap();
        let home = PackHome::new(home.path());
        assert!(home.list().unwrap().is_empty());
        for version in ["0.1.0", "0.10.0", "0.2.0"] {
            let f = files(version, b"one");
            home.install(&f, record(&f), false).unwrap();
        }
        let labels: Vec<String> = home.list().unwrap().iter().map(|p| p.label()).collect();
        assert_eq!(labels, ["demo@0.1.0", "demo@0.2.0", "demo@0.10.0"]);
        assert_eq!(home.get("demo", None).unwrap().version(), "0.10.0");
        let pack = home.get("demo", Some("0.2.0")).unwrap();
        pack.check_files().unwrap();

        // The same archive again is a no-op; another one needs `replace`.
        let same = files("0.2.0", b"one");
        home.install(&same, record(&same), false).unwrap();
        let other = files("0.2.0", b"two");
        let error = home.install(&other, record(&other), false).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("demo@0.2.0 is already installed"),
            "{error}"
        );
        home.install(&other, record(&other), true).unwrap();

        // A file changed after install is caught.
        std::fs::write(pack.dir.join("c/s.wasm"), b"twO").unwrap();
        let error = home
            .get("demo", Some("0.2.0"))
            .unwrap()
            .check_files()
            .unwrap_err();
        assert!(error.to_string().contains("c/s.wasm"), "{error}");

        let error = home.get("nope", None).unwrap_err().to_string();
        assert!(error.contains("`nope` is not installed"), "{error}");
        assert_eq!(home.remove("demo", Some("0.1.0")).unwrap().len(), 1);
        assert_eq!(home.remove("demo", None).unwrap().len(), 2);
        assert!(home.list().unwrap().is_empty());
        assert!(!home.packs_dir().join("demo").exists());
    }
}
