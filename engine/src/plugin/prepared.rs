//! A component made ready to instantiate ([`PluginPre`]), and the one
//! linker per world that makes it so ([`Linkers`]).
//!
//! A component is made ready when it loads, except a built-in whose
//! description this binary kept ([`super::described`]): a process knows
//! it from that description and maps, checks and links its compiled
//! artifact only on its first use ([`Prepared::get`]), so a command that
//! uses three of the built-ins pays for three.

use std::sync::{Arc, OnceLock};

use once_cell::sync::OnceCell;

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use super::PluginKind;
use super::bindings::ScorerPre;
use super::cache::{CacheStatus, CompiledCache};
use super::error::PluginError;
use super::imports::{preset_linker, provider_linker, scorer_linker};
use super::notice::CompileNotice;
use super::store_state::StoreState;
use super::world::detect_world;

/// A component pre-instantiated with its world's linker.
#[derive(Clone)]
pub(crate) enum PluginPre {
    Scorer(ScorerPre<StoreState>),
    Preset(super::preset_pre::PresetPre),
    Provider(super::provider_pre::ProviderPre),
}

/// Makes the linker of one world.
type MakeLinker = fn(&Engine) -> wasmtime::Result<Linker<StoreState>>;

/// One linker per world (the host imports each world may use), each made
/// when a component of its world is first linked.
pub(super) struct Linkers {
    engine: Engine,
    scorer: OnceLock<Linker<StoreState>>,
    preset: OnceLock<Linker<StoreState>>,
    provider: OnceLock<Linker<StoreState>>,
}

impl Linkers {
    pub(super) fn new(engine: &Engine) -> Self {
        Self {
            engine: engine.clone(),
            scorer: OnceLock::new(),
            preset: OnceLock::new(),
            provider: OnceLock::new(),
        }
    }

    /// The linker of world `kind`.
    fn linker(&self, kind: PluginKind) -> wasmtime::Result<&Linker<StoreState>> {
        let (cell, make): (_, MakeLinker) = match kind {
            PluginKind::Scorer => (&self.scorer, scorer_linker::<StoreState>),
            PluginKind::Preset => (&self.preset, preset_linker::<StoreState>),
            PluginKind::Provider => (&self.provider, provider_linker::<StoreState>),
        };
        if let Some(linker) = cell.get() {
            return Ok(linker);
        }
        let linker = make(&self.engine)?;
        Ok(cell.get_or_init(|| linker))
    }

    /// `component`, of world `kind`, linked and ready to instantiate.
    pub(super) fn pre_instantiate(
        &self,
        kind: PluginKind,
        component: &Component,
        label: &str,
    ) -> Result<PluginPre, PluginError> {
        let link_error = |e: wasmtime::Error| PluginError::Link {
            plugin: label.to_string(),
            message: format!("{e:#}"),
        };
        let pre = self
            .linker(kind)
            .map_err(|e| PluginError::Host(format!("{e:#}")))?
            .instantiate_pre(component)
            .map_err(link_error)?;
        Ok(match kind {
            PluginKind::Scorer => PluginPre::Scorer(ScorerPre::new(pre).map_err(link_error)?),
            PluginKind::Preset => {
                PluginPre::Preset(super::preset_pre::PresetPre::new(pre).map_err(link_error)?)
            }
            PluginKind::Provider => {
                PluginPre::Provider(super::provider_pre::ProviderPre::new(pre).map_err(link_error)?)
            }
        })
    }
}

/// The compiled component for `bytes` (from the compiled cache, or
/// compiled now; a long compile is announced before it starts, and timed).
pub(super) fn compile(
    engine: &Engine,
    cache: &CompiledCache,
    notice: Option<CompileNotice>,
    label: &str,
    sha256: &str,
    bytes: &[u8],
) -> Result<(Component, CacheStatus), PluginError> {
    let started = std::time::Instant::now();
    let mut announced = false;
    let loaded = cache
        .load(engine, sha256, bytes, |stored| {
            if notice.is_some_and(|n| n.covers(bytes.len())) {
                super::notice::compiling(label, bytes.len(), stored);
                announced = true;
            }
        })
        .map_err(|e| PluginError::Compile {
            plugin: label.to_string(),
            message: format!("{e:#}"),
        })?;
    if announced {
        super::notice::compiled(label, started.elapsed());
    }
    Ok(loaded)
}

/// A plugin's [`PluginPre`], and whether its artifact came from the
/// compiled cache: made at load, or on first use.
pub(crate) struct Prepared {
    /// Made once: callers that ask while it is made wait; after a failure
    /// the next caller tries again.
    ready: OnceCell<(PluginPre, CacheStatus)>,
    /// How to make it on first use (`None`: made at load).
    deferred: Option<Deferred>,
}

/// What making a built-in ready on its first use takes.
pub(super) struct Deferred {
    pub(super) engine: Engine,
    pub(super) linkers: Arc<Linkers>,
    pub(super) cache: Arc<CompiledCache>,
    pub(super) notice: Option<CompileNotice>,
    pub(super) bytes: &'static [u8],
    pub(super) sha256: String,
    pub(super) label: String,
    /// The world its kept description says it has.
    pub(super) kind: PluginKind,
}

impl Prepared {
    /// Made at load.
    pub(super) fn ready(pre: PluginPre, cache: CacheStatus) -> Self {
        Self {
            ready: OnceCell::with_value((pre, cache)),
            deferred: None,
        }
    }

    /// Made on first use.
    pub(super) fn deferred(deferred: Deferred) -> Self {
        Self {
            ready: OnceCell::new(),
            deferred: Some(deferred),
        }
    }

    /// Whether it is made (a deferred one: whether it was used).
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.get().is_some()
    }

    /// The ready component, made now if it was deferred. Threads that ask
    /// at once wait for the one making it (a missing artifact is compiled
    /// once); after a failure the next caller tries again.
    pub(crate) fn get(&self) -> Result<&(PluginPre, CacheStatus), PluginError> {
        self.ready.get_or_try_init(|| self.make())
    }

    fn make(&self) -> Result<(PluginPre, CacheStatus), PluginError> {
        let Some(d) = &self.deferred else {
            return Err(PluginError::Host(
                "a plugin was neither made ready nor deferred".into(),
            ));
        };
        let (component, cache) =
            compile(&d.engine, &d.cache, d.notice, &d.label, &d.sha256, d.bytes)?;
        let kind = detect_world(&d.engine, &component, &d.label)?;
        if kind != d.kind {
            // Only a kept description from elsewhere could say otherwise.
            return Err(PluginError::WrongWorld {
                plugin: d.label.clone(),
                found: kind,
                expected: d.kind,
            });
        }
        let pre = d.linkers.pre_instantiate(kind, &component, &d.label)?;
        Ok((pre, cache))
    }
}
