//! What a built-in component said about itself, kept beside its compiled
//! artifact, so that a later process knows the component without
//! instantiating it.
//!
//! Loading a component for the first time compiles it, instantiates it
//! and calls `describe`; a process that only needs to know which built-in
//! serves a reference (and what every preset declares, every provider
//! needs) would pay that for all of them before its first case. Once a
//! built-in has been described and checked (its taxonomy pair, its suite
//! contract), its [`Description`] is written to
//! `<cache>/described/<sha256>.json`; a later process reads it back and
//! makes the component ready only when it is used
//! ([`super::runtime::Plugin::pre`]).
//!
//! An entry is used only when it was written by this very binary: it
//! carries the engine key of the compiled cache and the identity of the
//! running executable (its size, modification time, inode, device and
//! change time), since the
//! host code that turns `describe`'s answer into a [`Description`] and
//! checks it is part of the binary. Anything else (another binary's
//! entry, a damaged or foreign file, a symlink, a directory others can
//! write to) is ignored and the component is described again. Writes are
//! atomic; a cache that cannot be written is not an error.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::Description;
use super::cache::{is_regular_file, store_atomically, trusted_dir};

/// The kept descriptions of one runtime.
pub(super) struct DescribedCache {
    /// `<cache>/described`; `None`: nothing is kept or read.
    dir: Option<PathBuf>,
    /// The engine key and the executable's identity.
    host: String,
    /// Whether the cache directory and `described/` may be trusted, seen
    /// once per process (not once per component).
    trusted: OnceLock<bool>,
}

/// One kept description.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    host: String,
    sha256: String,
    /// Its world is its variant's ([`Description::kind`]).
    description: Description,
}

impl DescribedCache {
    /// Descriptions kept under `cache_dir` (none without one, or when the
    /// running executable cannot be identified).
    pub(super) fn new(cache_dir: Option<&Path>, engine_key: &str) -> Self {
        let identity = executable_identity();
        let dir = cache_dir
            .filter(|_| identity.is_some())
            .map(|dir| dir.join("described"));
        Self {
            dir,
            host: format!("{engine_key}-{}", identity.unwrap_or_default()),
            trusted: OnceLock::new(),
        }
    }

    /// Whether `described/` and the cache directory holding it are ours
    /// alone (or not there yet: they are made private).
    fn trusted(&self) -> bool {
        *self.trusted.get_or_init(|| {
            self.dir
                .as_deref()
                .is_some_and(|dir| trusted_dir(dir) && dir.parent().is_none_or(trusted_dir))
        })
    }

    fn path(&self, sha256: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        // A sha256 is 64 hex digits; anything else never names a file.
        (sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| dir.join(format!("{sha256}.json")))
    }

    /// The kept description of the component whose sha256 is `sha256`, if
    /// this binary kept one.
    pub(super) fn get(&self, sha256: &str) -> Option<Description> {
        let path = self.path(sha256)?;
        if !self.trusted() || !is_regular_file(&path) {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.host == self.host && entry.sha256 == sha256).then_some(entry.description)
    }

    /// Keeps what the component whose sha256 is `sha256` said about itself
    /// (after the host checked it).
    pub(super) fn put(&self, sha256: &str, description: &Description) {
        let (Some(path), Some(dir)) = (self.path(sha256), self.dir.as_deref()) else {
            return;
        };
        if !self.trusted() {
            return;
        }
        let entry = Entry {
            host: self.host.clone(),
            sha256: sha256.to_string(),
            description: description.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&entry) {
            let _ = store_atomically(dir, &path, &bytes);
        }
    }
}

/// The running executable's size, modification time, inode, device and
/// change time, hex: a
/// rebuilt or replaced binary has another.
fn executable_identity() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(exe).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    // The inode, its device and its change time (which `touch` cannot
    // set back: a binary installed or unpacked again has a new one).
    #[cfg(unix)]
    let place = {
        use std::os::unix::fs::MetadataExt;
        format!(
            "{:x}-{:x}-{:x}.{:x}",
            meta.ino(),
            meta.dev(),
            meta.ctime(),
            meta.ctime_nsec()
        )
    };
    #[cfg(not(unix))]
    let place = String::new();
    Some(format!(
        "{:x}-{:x}-{place}",
        meta.len(),
        modified.as_nanos()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::PluginKind;
    use crate::plugin::bindings::scorer_api::ScorerPack;
    use crate::plugin::bindings::types::PluginInfo;

    fn scorer_description(id: &str) -> Description {
        Description::Scorer(ScorerPack {
            plugin: PluginInfo {
                id: id.into(),
                version: "1.0.0".into(),
                description: "a test scorer".into(),
                capabilities: Vec::new(),
            },
            scorers: Vec::new(),
        })
    }

    const SHA: &str = "ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01";

    #[test]
    fn a_kept_description_is_read_back_by_the_same_binary_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DescribedCache::new(Some(dir.path()), "engine-a");
        assert!(cache.get(SHA).is_none());
        cache.put(SHA, &scorer_description("kept"));
        let description = cache.get(SHA).expect("kept");
        assert_eq!(description.kind(), PluginKind::Scorer);
        assert_eq!(description.plugin_info().id, "kept");
        // Another engine (or binary) does not trust it.
        let other = DescribedCache::new(Some(dir.path()), "engine-b");
        assert!(other.get(SHA).is_none());
        // Nor under another component's name.
        let renamed = dir
            .path()
            .join("described")
            .join(format!("{}.json", "cd".repeat(32)));
        std::fs::copy(cache.path(SHA).unwrap(), &renamed).unwrap();
        assert!(cache.get(&"cd".repeat(32)).is_none());
    }

    #[test]
    fn damaged_foreign_and_planted_entries_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DescribedCache::new(Some(dir.path()), "engine");
        cache.put(SHA, &scorer_description("kept"));
        let path = cache.path(SHA).unwrap();
        let good = std::fs::read(&path).unwrap();
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert!(cache.get(SHA).is_none(), "a torn file");
        std::fs::write(&path, b"{\"host\":1}").unwrap();
        assert!(cache.get(SHA).is_none(), "a foreign file");
        // A file with an extra key is not one this cache wrote.
        let mut value: serde_json::Value = serde_json::from_slice(&good).unwrap();
        value["extra"] = serde_json::json!(true);
        std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
        assert!(cache.get(SHA).is_none(), "an unknown key");
        // A kind beside the description (whose variant is its world): not
        // a file this cache wrote.
        let mut value: serde_json::Value = serde_json::from_slice(&good).unwrap();
        value["kind"] = serde_json::json!("Preset");
        std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
        assert!(
            cache.get(SHA).is_none(),
            "a kind the description does not have"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(&path, &good).unwrap();
            assert!(cache.get(SHA).is_some());
            // A symlink is never followed.
            let elsewhere = dir.path().join("elsewhere.json");
            std::fs::rename(&path, &elsewhere).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
            assert!(cache.get(SHA).is_none(), "a symlink");
            std::fs::remove_file(&path).unwrap();
            std::fs::rename(&elsewhere, &path).unwrap();
            // A directory others may write to is not trusted (by the next
            // process: each looks once).
            let described = path.parent().unwrap();
            std::fs::set_permissions(described, std::fs::Permissions::from_mode(0o777)).unwrap();
            let next = DescribedCache::new(Some(dir.path()), "engine");
            assert!(next.get(SHA).is_none(), "a world-writable directory");
            std::fs::set_permissions(described, std::fs::Permissions::from_mode(0o700)).unwrap();
            let next = DescribedCache::new(Some(dir.path()), "engine");
            assert!(next.get(SHA).is_some());
        }
        // Names that are not a sha256 never reach the file system.
        assert!(cache.path("../../etc/passwd").is_none());
    }

    #[test]
    fn without_a_cache_directory_nothing_is_kept() {
        let cache = DescribedCache::new(None, "engine");
        cache.put(SHA, &scorer_description("kept"));
        assert!(cache.get(SHA).is_none());
    }
}
