//! Resolves plugin references (`<id>` of a built-in, `<pack>/<id>` of an
//! installed pack, or a `.wasm` path).
//!
//! A scorer reference is a built-in scorer id (`contains`), a pack's scorer
//! (`acme/mentions-all`: checked against the pack's manifest and the
//! project's `cautilus.lock`), a path to a component (`./my_scorer.wasm`,
//! whose only scorer is used), or a path with a scorer id
//! (`./pack.wasm#rubric`) for components that carry several.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use once_cell::sync::OnceCell;

use super::error::PluginError;
use super::runtime::{Plugin, PluginSource, Runtime};
use super::{Description, PluginKind};
use crate::pack::set::split_pack_reference;
use crate::pack::{ComponentKind, PackSet};

/// Resolves references against the built-in pack and the file system.
pub struct Registry {
    runtime: Arc<Runtime>,
    /// Loaded once: callers that ask while they load wait and take them;
    /// after a failure the next caller tries again (and reports its own
    /// error).
    builtins: OnceCell<Vec<Arc<Plugin>>>,
    /// Installed packs (`<pack>/<id>` references); none without a home.
    packs: Option<PackSet>,
}

/// The built-in components loading in the background (see
/// [`Registry::preload_builtins`]); dropping it waits for them.
pub struct Preloading(Option<std::thread::JoinHandle<()>>);

impl Drop for Preloading {
    fn drop(&mut self) {
        if let Some(thread) = self.0.take() {
            let _ = thread.join();
        }
    }
}

impl Registry {
    pub fn new(runtime: Arc<Runtime>) -> Self {
        Self {
            runtime,
            builtins: OnceCell::new(),
            packs: None,
        }
    }

    /// Resolves `<pack>/<id>` references in these packs.
    pub fn with_packs(mut self, packs: PackSet) -> Self {
        self.packs = Some(packs);
        self
    }

    pub fn packs(&self) -> Option<&PackSet> {
        self.packs.as_ref()
    }

    /// The checked component of an installed pack serving `id` as `kind`.
    fn pack_component(
        &self,
        pack: &str,
        kind: ComponentKind,
        id: &str,
    ) -> Result<Arc<Plugin>, PluginError> {
        let Some(packs) = &self.packs else {
            return Err(PluginError::NotFound {
                reference: format!("{pack}/{id} (no pack home: set CAUTILUS_HOME)"),
            });
        };
        let component = packs.component(pack, kind, id)?;
        let plugin = super::packs::load_component(self, &component)?;
        // What the user granted the pack at install bounds what it may use.
        let granted = component
            .pack
            .record
            .granted
            .iter()
            .filter_map(|g| crate::pack::Capability::parse(g).ok())
            .collect();
        Ok(Arc::new(
            plugin.with_ceiling(granted, component.pack.label()),
        ))
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// Every built-in component, loaded.
    pub fn builtins(&self) -> Result<&[Arc<Plugin>], PluginError> {
        self.builtins
            .get_or_try_init(|| {
                super::builtin::components()
                    .ok_or(PluginError::BuiltinsNotInstalled)?
                    .iter()
                    .map(|b| self.runtime.load(PluginSource::Builtin(b)))
                    .collect()
            })
            .map(Vec::as_slice)
    }

    /// Whether the built-in components are loaded.
    pub fn builtins_loaded(&self) -> bool {
        self.builtins.get().is_some()
    }

    /// Starts loading the built-in components on a thread of their own,
    /// for a command that will need them after reading its input: the
    /// load (mapping, instantiating and describing each component) then
    /// overlaps the reading. A failure is left for the command's own call
    /// of [`Registry::builtins`] to report. Dropping the guard waits for
    /// the load, so a command that stops early (a bad fixture) does not
    /// exit while a component is being compiled into the cache.
    #[must_use = "dropping the guard waits for the load"]
    pub fn preload_builtins(&'static self) -> Preloading {
        let thread = std::thread::Builder::new()
            .name("cautilus-load".into())
            .spawn(move || {
                let _ = self.builtins();
            });
        // Without a thread the command loads them when it needs them.
        Preloading(thread.ok())
    }

    /// What every built-in preset said about itself, in build order.
    pub fn builtin_presets(&self) -> Result<Vec<super::preset::PresetDescription>, PluginError> {
        Ok(self
            .builtins()?
            .iter()
            .filter_map(|plugin| match &plugin.description {
                Description::Preset(preset) => Some((**preset).clone()),
                _ => None,
            })
            .collect())
    }

    /// Loads a component from a file.
    pub fn load_path(&self, path: &Path) -> Result<Arc<Plugin>, PluginError> {
        if !path.exists() {
            return Err(PluginError::NotFound {
                reference: path.display().to_string(),
            });
        }
        self.runtime.load(PluginSource::File(path.to_path_buf()))
    }

    /// Resolves a scorer reference to its component and scorer id.
    pub fn resolve_scorer(&self, reference: &str) -> Result<(Arc<Plugin>, String), PluginError> {
        if let Some((pack, id)) = split_pack_reference(reference) {
            let plugin = self.pack_component(pack, ComponentKind::Scorer, id)?;
            return Ok((plugin, id.to_string()));
        }
        if let Some((path, id)) = split_path_reference(reference) {
            let plugin = self.load_path(&path)?;
            let id = match id {
                Some(id) => id,
                None => only_scorer(&plugin)?,
            };
            return Ok((plugin, id));
        }
        for plugin in self.builtins()? {
            if let Description::Scorer(pack) = &plugin.description
                && pack.scorers.iter().any(|s| s.id == reference)
            {
                return Ok((plugin.clone(), reference.to_string()));
            }
        }
        Err(PluginError::NotFound {
            reference: reference.to_string(),
        })
    }

    /// The preset plugin for a taxonomy pair: the one installed pack `pack`
    /// ships for it (a suite's `presetPack`), else the built-in one.
    pub fn preset_for(
        &self,
        pair: &crate::taxonomy::Pair,
        pack: Option<&str>,
    ) -> Result<Arc<Plugin>, PluginError> {
        if let Some(pack) = pack {
            return self.pack_preset(pair, pack);
        }
        for plugin in self.builtins()? {
            if let Some(info) = plugin.description.preset_info()
                && info.surface == pair.surface
                && info.preset == pair.preset
            {
                return Ok(plugin.clone());
            }
        }
        Err(PluginError::NotFound {
            reference: format!("preset {pair}"),
        })
    }

    /// Pack `pack`'s preset for `pair` (a pack preset claims a pair of the
    /// host's taxonomy, or it is refused when it loads).
    fn pack_preset(
        &self,
        pair: &crate::taxonomy::Pair,
        pack: &str,
    ) -> Result<Arc<Plugin>, PluginError> {
        let Some(packs) = &self.packs else {
            return Err(PluginError::NotFound {
                reference: format!("pack {pack} (no pack home: set CAUTILUS_HOME)"),
            });
        };
        let mut offered = Vec::new();
        for component in packs.components(pack, ComponentKind::Preset)? {
            let plugin = super::packs::load_component(self, &component)?;
            if let Some(info) = plugin.description.preset_info() {
                if info.surface == pair.surface && info.preset == pair.preset {
                    return Ok(plugin);
                }
                offered.push(format!("{}/{}", info.surface, info.preset));
            }
        }
        Err(PluginError::NotFound {
            reference: format!(
                "preset {pair} in pack {pack} (its presets serve: {})",
                if offered.is_empty() {
                    "none".to_string()
                } else {
                    offered.join(", ")
                }
            ),
        })
    }

    /// The built-in preset whose observed packet has `schema`, and every
    /// built-in preset's observed schema with the pair that reads it
    /// (`cautilus.app_chat_evaluation_inputs.v1 (app/chat)`), for messages.
    ///
    /// A schema id selects one preset: each built-in preset reads its own
    /// observed schema only. `eval evaluate` also checks that a packet which
    /// declares its `surface`/`preset` names the same preset.
    pub fn preset_for_observed(
        &self,
        schema: &str,
    ) -> Result<(Option<Arc<Plugin>>, Vec<String>), PluginError> {
        let mut found = None;
        let mut known = Vec::new();
        for plugin in self.builtins()? {
            if let Some(info) = plugin.description.preset_info() {
                if found.is_none() && info.observed_schema == schema {
                    found = Some(plugin.clone());
                }
                known.push(format!(
                    "{} ({}/{})",
                    info.observed_schema, info.surface, info.preset
                ));
            }
        }
        Ok((found, known))
    }

    /// A provider: a built-in id (`fixture`) or a `.wasm` path.
    pub fn resolve_provider(&self, reference: &str) -> Result<Arc<Plugin>, PluginError> {
        if let Some((pack, id)) = split_pack_reference(reference) {
            return self.pack_component(pack, ComponentKind::Provider, id);
        }
        let plugin = match split_path_reference(reference) {
            Some((path, _)) => self.load_path(&path)?,
            None => self
                .builtins()?
                .iter()
                .find(|p| p.kind == PluginKind::Provider && p.id() == reference)
                .cloned()
                .ok_or_else(|| PluginError::NotFound {
                    reference: reference.to_string(),
                })?,
        };
        if plugin.kind != PluginKind::Provider {
            return Err(PluginError::WrongWorld {
                plugin: plugin.label.clone(),
                found: plugin.kind,
                expected: PluginKind::Provider,
            });
        }
        Ok(plugin)
    }

    /// Resolves a reference to a component: a path, a built-in component id
    /// (a preset's is its pair, `app/prompt`), a pack's component, or the id
    /// of a scorer inside a built-in component.
    pub fn resolve_plugin(&self, reference: &str) -> Result<Arc<Plugin>, PluginError> {
        // A built-in preset's id is its pair (`app/prompt`, as `plugin list`
        // shows it), which reads like a pack reference.
        if let Some((surface, preset)) = reference.split_once('/')
            && let Ok(pair) = crate::taxonomy::lookup(surface, preset)
            && let Ok(plugin) = self.preset_for(pair, None)
        {
            return Ok(plugin);
        }
        if split_pack_reference(reference).is_some() {
            return self.resolve_scorer(reference).map(|(plugin, _)| plugin);
        }
        if let Some((path, _)) = split_path_reference(reference) {
            return self.load_path(&path);
        }
        for plugin in self.builtins()? {
            if plugin.id() == reference {
                return Ok(plugin.clone());
            }
        }
        self.resolve_scorer(reference).map(|(plugin, _)| plugin)
    }
}

/// `reference` as seen from `base` (a fixture's or a case's directory): a
/// relative file path, with or without `#<scorer>`, is joined to `base`;
/// ids and absolute paths are returned as they are.
pub fn reference_in(base: &Path, reference: &str) -> String {
    match split_path_reference(reference) {
        Some((path, id)) if path.is_relative() => {
            let joined = base.join(path).display().to_string();
            match id {
                Some(id) => format!("{joined}#{id}"),
                None => joined,
            }
        }
        _ => reference.to_string(),
    }
}

/// `Some((path, scorer))` when the reference names a file rather than an id.
pub fn split_path_reference(reference: &str) -> Option<(PathBuf, Option<String>)> {
    if split_pack_reference(reference).is_some() {
        return None;
    }
    let (path, id) = match reference.rsplit_once('#') {
        Some((path, id)) if !id.is_empty() && !id.contains(['/', '\\']) => {
            (path, Some(id.to_string()))
        }
        _ => (reference, None),
    };
    // Only an explicit path counts: a file in the current directory that
    // happens to be named like a built-in id (`fixture`) never shadows it.
    let looks_like_path = path.ends_with(".wasm") || path.contains('/') || path.contains('\\');
    looks_like_path.then(|| (PathBuf::from(path), id))
}

fn only_scorer(plugin: &Plugin) -> Result<String, PluginError> {
    let Description::Scorer(pack) = &plugin.description else {
        return Err(PluginError::WrongWorld {
            plugin: plugin.label.clone(),
            found: plugin.kind,
            expected: PluginKind::Scorer,
        });
    };
    match pack.scorers.as_slice() {
        [one] => Ok(one.id.clone()),
        many => Err(PluginError::UnknownScorer {
            plugin: plugin.label.clone(),
            scorer: "(none given)".into(),
            available: format!(
                "{}; pick one with `{}#<id>`",
                many.iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                plugin.label
            ),
        }),
    }
}

/// The registry of the built-in pack for this crate's unit tests, loaded
/// once per test binary; compiled components are cached beside it, in the
/// target directory.
#[cfg(test)]
pub(crate) fn test_registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let cache_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join("cautilus-unit-cache")));
        let runtime = super::Runtime::new(super::RuntimeConfig {
            cache_dir,
            fuel_metering: false,
            compile_notice: None,
        })
        .expect("the plugin runtime");
        Registry::new(Arc::new(runtime))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_classified() {
        assert_eq!(split_path_reference("contains"), None);
        assert_eq!(
            split_path_reference("./x.wasm"),
            Some((PathBuf::from("./x.wasm"), None))
        );
        assert_eq!(
            split_path_reference("pack.wasm#rubric"),
            Some((PathBuf::from("pack.wasm"), Some("rubric".into())))
        );
        assert_eq!(
            split_path_reference("./dir/component"),
            Some((PathBuf::from("./dir/component"), None))
        );
        // `<pack>/<id>` names an installed pack's plugin, not a file.
        assert_eq!(split_path_reference("dir/component"), None);
        assert_eq!(
            split_path_reference("dir/component.wasm"),
            Some((PathBuf::from("dir/component.wasm"), None))
        );
    }

    #[test]
    fn relative_paths_are_seen_from_the_base() {
        let base = Path::new("/suite/cases/a");
        assert_eq!(reference_in(base, "contains"), "contains");
        assert_eq!(reference_in(base, "/abs/x.wasm"), "/abs/x.wasm");
        assert_eq!(reference_in(base, "x.wasm"), "/suite/cases/a/x.wasm");
        assert_eq!(
            reference_in(base, "pack.wasm#rubric"),
            "/suite/cases/a/pack.wasm#rubric"
        );
        assert_eq!(
            reference_in(base, "../lib/pack.wasm#rubric"),
            "/suite/cases/a/../lib/pack.wasm#rubric"
        );
    }
}
