//! The plugin runtime: one engine, one linker per world, one `InstancePre`
//! per component (keyed by sha256), and fresh stores on demand.
//!
//! Loading a component: read bytes → sha256 → compiled cache (or compile) →
//! detect the world and WIT version from its exports → pre-instantiate with
//! that world's linker → call `describe` once in a throwaway store.
//!
//! A built-in this binary described before is known from its kept
//! description instead ([`super::described`]), and made ready on first
//! use ([`super::prepared`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use wasmtime::{Engine, Store};

use super::bindings::types::Capability;
use super::cache::{CacheStatus, CompiledCache, sha256_hex};
use super::capability::{Ceiling, Requested};
use super::describe::describe;
use super::described::DescribedCache;
use super::engine::build_engine;
use super::error::PluginError;
use super::grants::Grants;
use super::guest_call::{arm, new_store};
use super::limits::Limits;
use super::notice::CompileNotice;
pub(crate) use super::prepared::PluginPre;
use super::prepared::{Deferred, Linkers, Prepared, compile};
use super::store_state::StoreState;
use super::world::detect_world;
use super::{Description, PluginKind, WIT_VERSION};

/// Where a component comes from.
#[derive(Debug, Clone)]
pub enum PluginSource {
    /// Compiled into this binary.
    Builtin(&'static super::builtin::BuiltinComponent),
    /// A `.wasm` file given by the user.
    File(PathBuf),
}

impl PluginSource {
    fn label(&self) -> String {
        match self {
            Self::Builtin(b) => format!("builtin:{}", b.name),
            Self::File(path) => path.display().to_string(),
        }
    }
}

/// A loaded component: what it said about itself, and the component
/// ready to instantiate (made now, or on first use: [`Plugin::pre`]).
pub struct Plugin {
    /// `builtin:<name>` or the file path, for messages.
    pub label: String,
    pub source: PluginSource,
    pub sha256: String,
    pub kind: PluginKind,
    pub wit_version: &'static str,
    /// The component's length in bytes.
    pub size: u64,
    pub description: Description,
    engine: Engine,
    prepared: Arc<Prepared>,
    /// What a pack's user granted it at install (`None`: not from a
    /// pack). A call is allowed only if requested, granted here AND by
    /// the run ([`super::capability`]).
    pub(crate) ceiling: Option<Ceiling>,
}

impl Plugin {
    /// The component ready to instantiate (mapped from the compiled cache,
    /// checked and linked now if this is its first use).
    pub(crate) fn pre(&self) -> Result<&PluginPre, PluginError> {
        self.prepared.get().map(|(pre, _)| pre)
    }

    /// Whether its compiled artifact came from the on-disk cache (making
    /// it ready if it was not yet).
    pub fn cache_status(&self) -> Result<CacheStatus, PluginError> {
        self.prepared.get().map(|(_, cache)| *cache)
    }

    /// Whether the component was made ready (loaded, or used once).
    pub fn is_prepared(&self) -> bool {
        self.prepared.is_ready()
    }

    /// The plugin's id from `describe`.
    pub fn id(&self) -> &str {
        &self.description.plugin_info().id
    }

    /// Whether the plugin may wait on the network or a program (it
    /// requested `http` or `process`): such a provider's calls are worth
    /// overlapping.
    pub fn waits_on_io(&self) -> bool {
        self.description
            .plugin_info()
            .capabilities
            .iter()
            .any(|c| matches!(c, Capability::Http(_) | Capability::Process(_)))
    }

    /// A fresh store of this plugin with `limits` and `grants`, armed for
    /// its first call (instantiation runs the component's start code).
    /// A fuel budget needs an engine built with fuel metering: refused
    /// otherwise, never left unenforced.
    pub(crate) fn armed_store(
        &self,
        limits: &Limits,
        grants: Arc<Grants>,
    ) -> Result<Store<StoreState>, PluginError> {
        if limits.fuel.is_some() && !self.engine.get_consume_fuel() {
            return Err(PluginError::Host(format!(
                "plugin `{}` was given a fuel budget, but this process's engine counts no fuel; \
                 build the runtime with `RuntimeConfig::fuel_metering` whenever limits may set fuel",
                self.label
            )));
        }
        let mut store = new_store(
            &self.engine,
            Arc::from(self.id()),
            limits,
            grants,
            self.requested(),
        );
        arm(&mut store, limits);
        Ok(store)
    }

    /// Capabilities the plugin requested, and its pack's ceiling.
    pub(crate) fn requested(&self) -> Requested {
        Requested {
            asked: self.description.plugin_info().capabilities.clone(),
            ceiling: self.ceiling.clone(),
        }
    }

    /// This plugin as it is (the pre-instantiated component is shared).
    fn copy(&self) -> Self {
        Self {
            label: self.label.clone(),
            source: self.source.clone(),
            sha256: self.sha256.clone(),
            kind: self.kind,
            wit_version: self.wit_version,
            size: self.size,
            description: self.description.clone(),
            engine: self.engine.clone(),
            prepared: self.prepared.clone(),
            ceiling: self.ceiling.clone(),
        }
    }

    /// This plugin, requesting also to run `program`: the built-in `exec`
    /// provider runs the program its fixture names, which its `describe`
    /// cannot know; the host resolves it and asks on the provider's behalf.
    /// The run must still grant it ([`super::capability::process`]).
    pub fn requesting_program(&self, program: String) -> Self {
        let mut description = self.description.clone();
        if let super::Description::Provider(provider) = &mut description {
            provider
                .plugin
                .capabilities
                .push(Capability::Process(vec![program]));
        }
        Self {
            description,
            ..self.copy()
        }
    }

    /// This plugin, allowed at most `granted` (the install grants of
    /// `pack`, named `name@version`).
    pub fn with_ceiling(&self, granted: Vec<crate::pack::Capability>, pack: String) -> Self {
        Self {
            ceiling: Some(Ceiling { granted, pack }),
            ..self.copy()
        }
    }
}

/// Configuration of a runtime.
#[derive(Debug, Clone, Default)]
pub struct RuntimeConfig {
    /// Compiled-component cache directory; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// Compile fuel counting into every component, so that [`Limits::fuel`]
    /// can be set. Off, plugins run faster, and a store given a fuel budget
    /// is refused.
    pub fuel_metering: bool,
    /// Announce long compiles on stderr ([`super::notice`]); `None` says nothing.
    pub compile_notice: Option<CompileNotice>,
}

impl RuntimeConfig {
    /// Cache in `$CAUTILUS_CACHE_DIR` or the platform cache directory; no
    /// fuel metering; compiles announced as `CAUTILUS_COMPILE_NOTICE_BYTES`
    /// says.
    pub fn from_env() -> Self {
        Self {
            cache_dir: CompiledCache::default_dir(),
            fuel_metering: false,
            compile_notice: Some(CompileNotice::from_env()),
        }
    }

    /// With fuel metering when `on` (see [`RuntimeConfig::fuel_metering`]).
    pub fn fuel_metering(mut self, on: bool) -> Self {
        self.fuel_metering = on;
        self
    }
}

/// The plugin runtime of one process.
pub struct Runtime {
    engine: Engine,
    linkers: Arc<Linkers>,
    cache: Arc<CompiledCache>,
    described: DescribedCache,
    compile_notice: Option<CompileNotice>,
    loaded: Mutex<HashMap<String, Arc<Plugin>>>,
}

impl Runtime {
    pub fn new(config: RuntimeConfig) -> Result<Self, PluginError> {
        let engine = build_engine(config.fuel_metering).map_err(host_error)?;
        let linkers = Arc::new(Linkers::new(&engine));
        let cache = CompiledCache::new(&engine, config.cache_dir);
        let described = DescribedCache::new(cache.dir(), cache.engine_key());
        Ok(Self {
            engine,
            linkers,
            cache: Arc::new(cache),
            described,
            compile_notice: config.compile_notice,
            loaded: Mutex::new(HashMap::new()),
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache.dir()
    }

    /// Where the compiled artifact of the component whose sha256 is
    /// `sha256` is kept, if it is stored now.
    pub fn cached_artifact(&self, sha256: &str) -> Option<PathBuf> {
        self.cache
            .is_cached(sha256)
            .then(|| self.cache.artifact_path(sha256))
            .flatten()
    }

    /// Loads (or returns the already loaded) component from `source`.
    pub fn load(&self, source: PluginSource) -> Result<Arc<Plugin>, PluginError> {
        let label = source.label();
        let owned;
        let (bytes, sha256): (&[u8], String) = match &source {
            PluginSource::Builtin(b) => (b.bytes, b.sha256.to_string()),
            PluginSource::File(path) => {
                owned = std::fs::read(path).map_err(|source| PluginError::Read {
                    path: path.clone(),
                    source,
                })?;
                let sha = sha256_hex(&owned);
                (&owned, sha)
            }
        };
        if let Some(plugin) = self.lock_loaded().get(&sha256) {
            return Ok(plugin.clone());
        }
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if let PluginSource::Builtin(builtin) = &source
            && let Some(description) = self.described.get(&sha256)
        {
            // Described and checked by this binary before: made ready on
            // first use.
            let prepared = Prepared::deferred(Deferred {
                engine: self.engine.clone(),
                linkers: self.linkers.clone(),
                cache: self.cache.clone(),
                notice: self.compile_notice,
                bytes: builtin.bytes,
                sha256: sha256.clone(),
                label: label.clone(),
                kind: description.kind(),
            });
            return Ok(self.keep(label, source, sha256, size, description, prepared));
        }
        let (component, cache) = compile(
            &self.engine,
            &self.cache,
            self.compile_notice,
            &label,
            &sha256,
            bytes,
        )?;
        let kind = detect_world(&self.engine, &component, &label)?;
        let pre = self.linkers.pre_instantiate(kind, &component, &label)?;
        let description = describe(&pre, &label)?;
        if let Description::Preset(preset) = &description {
            let info = &preset.info;
            crate::taxonomy::lookup(&info.surface, &info.preset).map_err(|e| {
                PluginError::OutsideTaxonomy {
                    plugin: label.clone(),
                    message: format!("`{}/{}`: {e}", info.surface, info.preset),
                }
            })?;
            preset
                .contract
                .check()
                .map_err(|message| PluginError::BadContract {
                    plugin: label.clone(),
                    message,
                })?;
        }
        if matches!(source, PluginSource::Builtin(_)) {
            self.described.put(&sha256, &description);
        }
        debug_assert_eq!(description.kind(), kind, "describe answers in its world");
        let prepared = Prepared::ready(pre, cache);
        Ok(self.keep(label, source, sha256, size, description, prepared))
    }

    /// The plugin loaded from `source` (its world is its description's),
    /// made ready as `prepared`, kept for the next load of the same
    /// component.
    fn keep(
        &self,
        label: String,
        source: PluginSource,
        sha256: String,
        size: u64,
        description: Description,
        prepared: Prepared,
    ) -> Arc<Plugin> {
        let plugin = Arc::new(Plugin {
            label,
            source,
            sha256: sha256.clone(),
            kind: description.kind(),
            wit_version: WIT_VERSION,
            size,
            description,
            engine: self.engine.clone(),
            prepared: Arc::new(prepared),
            ceiling: None,
        });
        self.lock_loaded().insert(sha256, plugin.clone());
        plugin
    }

    fn lock_loaded(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Plugin>>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn host_error(e: wasmtime::Error) -> PluginError {
    PluginError::Host(format!("{e:#}"))
}
