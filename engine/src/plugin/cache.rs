//! On-disk cache of compiled components.
//!
//! Compiling a component with Cranelift takes tens to hundreds of
//! milliseconds; deserializing a cached artifact takes well under one. The
//! cache key is the component's sha256 plus a hash of everything that makes
//! an artifact compatible with this engine (wasmtime version, compiler
//! settings, host CPU features), so an upgraded binary never loads a stale
//! artifact. Only files this cache wrote itself (in its own directory, named
//! by key) are ever deserialized. Writes are atomic (temp file + rename), so
//! concurrent processes never see a half-written artifact.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Whether a load was served from the compiled cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStatus {
    /// The compiled artifact was read from disk: no compilation happened.
    Hit,
    /// The component was compiled (and the artifact stored, if possible).
    Miss,
    /// Caching is off (no cache directory); the component was compiled.
    Disabled,
}

impl CacheStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Miss => "miss",
            Self::Disabled => "disabled",
        }
    }
}

/// The compiled-component cache of one engine.
pub struct CompiledCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

impl CompiledCache {
    /// A cache in `dir` (created on first store), or none when `dir` is `None`.
    pub fn new(engine: &Engine, dir: Option<PathBuf>) -> Self {
        let mut hasher = Sha256Hasher::default();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        let engine_key = hex::encode(&hasher.0.finalize()[..12]);
        Self { dir, engine_key }
    }

    /// The default directory: `$CAUTILUS_CACHE_DIR`, else the platform cache
    /// dir (`~/.cache/cautilus` on Linux), else none.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("CAUTILUS_CACHE_DIR") {
            if dir.is_empty() {
                return None;
            }
            return Some(PathBuf::from(dir));
        }
        directories::ProjectDirs::from("", "", "cautilus").map(|d| d.cache_dir().to_path_buf())
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The hash of what makes an artifact fit this engine and binary
    /// version (part of every artifact's name).
    pub fn engine_key(&self) -> &str {
        &self.engine_key
    }

    /// Where the compiled artifact of the component whose sha256 is
    /// `sha256` is (or would be) kept; `None` when caching is off.
    pub fn artifact_path(&self, sha256: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!("{sha256}-{}.cwasm", self.engine_key)))
    }

    /// Whether a compiled artifact for `sha256` is stored (and would be
    /// loaded: a regular file in a trusted cache directory).
    pub fn is_cached(&self, sha256: &str) -> bool {
        self.artifact_path(sha256).is_some_and(|path| {
            self.dir.as_deref().is_some_and(trusted_dir) && is_regular_file(&path)
        })
    }

    /// Loads the compiled component for `bytes` (whose sha256 is `sha256`),
    /// compiling and storing it on a miss. `before_compile(stored)` is
    /// called just before a compilation, `stored` telling whether its
    /// artifact will be kept (false: caching is off or its directory is
    /// not trusted).
    pub fn load(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: &[u8],
        before_compile: impl FnOnce(bool),
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        let (Some(dir), Some(path)) = (&self.dir, self.artifact_path(sha256)) else {
            before_compile(false);
            return Ok((Component::new(engine, bytes)?, CacheStatus::Disabled));
        };
        if !trusted_dir(dir) {
            // Someone else could have planted native code here: never load it.
            before_compile(false);
            return Ok((Component::new(engine, bytes)?, CacheStatus::Disabled));
        }
        if is_regular_file(&path) {
            // SAFETY: the file lives in this cache's own directory under a name
            // derived from the content hash and the engine compatibility hash;
            // it was produced by `Engine::precompile_component` of a
            // compatible engine and written atomically. Wasmtime additionally
            // validates the artifact header against this engine.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => return Ok((component, CacheStatus::Hit)),
                Err(_) => {
                    // Corrupt or incompatible: fall through and recompile.
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        before_compile(true);
        let artifact = engine.precompile_component(bytes)?;
        // SAFETY: `artifact` was just produced by this engine.
        let component = unsafe { Component::deserialize(engine, &artifact)? };
        // A cache that cannot be written is not an error: the run goes on.
        let _ = store_atomically(dir, &path, &artifact);
        Ok((component, CacheStatus::Miss))
    }
}

/// A cache directory is trusted when it does not exist yet (we create it
/// private) or is a real directory that only its owner can write to.
pub(super) fn trusted_dir(dir: &Path) -> bool {
    match std::fs::symlink_metadata(dir) {
        Err(_) => true,
        Ok(meta) if !meta.is_dir() => false,
        Ok(meta) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                meta.permissions().mode() & 0o022 == 0
            }
            #[cfg(not(unix))]
            {
                let _ = meta;
                true
            }
        }
    }
}

/// A regular file, not a symlink to somewhere else.
pub(super) fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

pub(super) fn store_atomically(dir: &Path, path: &Path, artifact: &[u8]) -> std::io::Result<()> {
    if !dir.exists() {
        std::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(artifact)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Feeds `Hash` output into sha256 so the engine key is stable across runs.
#[derive(Default)]
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}
