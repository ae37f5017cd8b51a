//! The plugin runtime: one engine, one linker per world, one `InstancePre`
//! per component (keyed by sha256), and fresh stores on demand.
//!
//! Loading a component: read bytes → sha256 → compiled cache (or compile) →
//! detect the world and WIT version from its exports → pre-instantiate with
//! that world's linker → call `describe` once in a throwaway store.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store};

use super::bindings::ScorerPre;
use super::bindings::types::Capability;
use super::cache::{CacheStatus, CompiledCache, sha256_hex};
use super::capability::{Ceiling, Requested};
use super::engine::build_engine;
use super::error::PluginError;
use super::grants::Grants;
use super::guest_call::{arm, classify, new_store};
use super::imports::{preset_linker, provider_linker, scorer_linker};
use super::limits::Limits;
use super::notice::CompileNotice;
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

/// A loaded, pre-instantiated component.
pub struct Plugin {
    /// `builtin:<name>` or the file path, for messages.
    pub label: String,
    pub source: PluginSource,
    pub sha256: String,
    pub kind: PluginKind,
    pub wit_version: &'static str,
    /// Whether the compiled artifact came from the on-disk cache.
    pub cache: CacheStatus,
    /// The component's length in bytes.
    pub size: u64,
    pub description: Description,
    pub(crate) pre: PluginPre,
    /// What a pack's user granted it at install (`None`: not from a
    /// pack). A call is allowed only if requested, granted here AND by
    /// the run ([`super::capability`]).
    pub(crate) ceiling: Option<Ceiling>,
}

impl Plugin {
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
        if limits.fuel.is_some() && !self.pre.engine().get_consume_fuel() {
            return Err(PluginError::Host(format!(
                "plugin `{}` was given a fuel budget, but this process's engine counts no fuel; \
                 build the runtime with `RuntimeConfig::fuel_metering` whenever limits may set fuel",
                self.label
            )));
        }
        let mut store = new_store(
            self.pre.engine(),
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
            cache: self.cache,
            size: self.size,
            description: self.description.clone(),
            pre: self.pre.clone(),
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

#[derive(Clone)]
pub(crate) enum PluginPre {
    Scorer(ScorerPre<StoreState>),
    Preset(super::preset_pre::PresetPre),
    Provider(super::provider_pre::ProviderPre),
}

impl PluginPre {
    pub(crate) fn engine(&self) -> &Engine {
        match self {
            Self::Scorer(pre) => pre.engine(),
            Self::Preset(pre) => pre.engine(),
            Self::Provider(pre) => pre.engine(),
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
    scorer_linker: Linker<StoreState>,
    preset_linker: Linker<StoreState>,
    provider_linker: Linker<StoreState>,
    cache: CompiledCache,
    compile_notice: Option<CompileNotice>,
    loaded: Mutex<HashMap<String, Arc<Plugin>>>,
}

impl Runtime {
    pub fn new(config: RuntimeConfig) -> Result<Self, PluginError> {
        let engine = build_engine(config.fuel_metering).map_err(host_error)?;
        let scorer_linker = scorer_linker::<StoreState>(&engine).map_err(host_error)?;
        let preset_linker = preset_linker::<StoreState>(&engine).map_err(host_error)?;
        let provider_linker = provider_linker::<StoreState>(&engine).map_err(host_error)?;
        let cache = CompiledCache::new(&engine, config.cache_dir);
        Ok(Self {
            engine,
            scorer_linker,
            preset_linker,
            provider_linker,
            cache,
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
        // A long compile is announced before it starts, and timed.
        let started = std::time::Instant::now();
        let mut announced = false;
        let (component, cache) = self
            .cache
            .load(&self.engine, &sha256, bytes, |stored| {
                if self.compile_notice.is_some_and(|n| n.covers(bytes.len())) {
                    super::notice::compiling(&label, bytes.len(), stored);
                    announced = true;
                }
            })
            .map_err(|e| PluginError::Compile {
                plugin: label.clone(),
                message: format!("{e:#}"),
            })?;
        if announced {
            super::notice::compiled(&label, started.elapsed());
        }
        let kind = detect_world(&self.engine, &component, &label)?;
        let pre = self.pre_instantiate(kind, &component, &label)?;
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
        let plugin = Arc::new(Plugin {
            label,
            source,
            sha256: sha256.clone(),
            kind,
            wit_version: WIT_VERSION,
            cache,
            size: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
            description,
            pre,
            ceiling: None,
        });
        self.lock_loaded().insert(sha256, plugin.clone());
        Ok(plugin)
    }

    fn lock_loaded(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Plugin>>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pre_instantiate(
        &self,
        kind: PluginKind,
        component: &Component,
        label: &str,
    ) -> Result<PluginPre, PluginError> {
        let link_error = |e: wasmtime::Error| PluginError::Link {
            plugin: label.to_string(),
            message: format!("{e:#}"),
        };
        Ok(match kind {
            PluginKind::Scorer => {
                let pre = self
                    .scorer_linker
                    .instantiate_pre(component)
                    .map_err(link_error)?;
                PluginPre::Scorer(ScorerPre::new(pre).map_err(link_error)?)
            }
            PluginKind::Preset => {
                let pre = self
                    .preset_linker
                    .instantiate_pre(component)
                    .map_err(link_error)?;
                PluginPre::Preset(super::preset_pre::PresetPre::new(pre).map_err(link_error)?)
            }
            PluginKind::Provider => {
                let pre = self
                    .provider_linker
                    .instantiate_pre(component)
                    .map_err(link_error)?;
                PluginPre::Provider(super::provider_pre::ProviderPre::new(pre).map_err(link_error)?)
            }
        })
    }
}

fn host_error(e: wasmtime::Error) -> PluginError {
    PluginError::Host(format!("{e:#}"))
}

/// Calls `describe` in a throwaway store with default limits.
fn describe(pre: &PluginPre, label: &str) -> Result<Description, PluginError> {
    let limits = Limits::default();
    let grants = Arc::new(Grants::default());
    let name: Arc<str> = Arc::from(label);
    // One throwaway store per world, armed with the default limits.
    let fresh = |engine: &Engine| {
        let mut store = new_store(
            engine,
            name.clone(),
            &limits,
            grants.clone(),
            Requested::default(),
        );
        arm(&mut store, &limits);
        store
    };
    macro_rules! call {
        ($pre:expr, $accessor:ident, $wrap:path) => {{
            let mut store = fresh($pre.engine());
            let instance = $pre
                .instantiate(&mut store)
                .map_err(|e| classify(e, &store, &limits, label))?;
            let info = instance
                .$accessor()
                .call_describe(&mut store)
                .map_err(|e| classify(e, &store, &limits, label))?;
            $wrap(info)
        }};
    }
    Ok(match pre {
        PluginPre::Scorer(pre) => call!(pre, cautilus_plugin_scorer_api, Description::Scorer),
        PluginPre::Preset(pre) => {
            let mut store = fresh(pre.engine());
            let (info, contract) = pre
                .describe(&mut store)
                .map_err(|e| classify(e, &store, &limits, label))?;
            let contract = contract.map_err(|message| PluginError::BadContract {
                plugin: label.to_string(),
                message,
            })?;
            Description::Preset(Box::new(super::preset_pre::PresetDescription {
                info,
                contract,
            }))
        }
        PluginPre::Provider(pre) => super::io::block_on(async {
            let mut store = fresh(pre.engine());
            let (info, declared) = pre
                .describe(&mut store)
                .await
                .map_err(|e| classify(e, &store, &limits, label))?;
            let needs = declared.needs.map_err(|message| PluginError::BadNeeds {
                plugin: label.to_string(),
                message,
            })?;
            let embedder = declared.embedder.map_err(|message| PluginError::BadEmbed {
                plugin: label.to_string(),
                message,
            })?;
            Ok::<_, PluginError>(Description::Provider(Box::new(
                super::provider_pre::ProviderDescription::new(info, needs, embedder),
            )))
        })?,
    })
}
