//! A pack's components as plugins: loading one, and checking it against
//! its manifest entry. The bytes must hash as the manifest states, the
//! component must be the kind the manifest says and serve exactly the ids
//! it lists, and it may request no capability the manifest did not
//! declare (a pack cannot widen what it asks for after it was reviewed).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use super::bindings::types::Capability as Requested;
use super::capability::http::host_key;
use super::error::PluginError;
use super::runtime::Plugin;
use super::{Description, PluginKind, Registry};
use crate::pack::{Capability, ComponentEntry, ComponentKind, Manifest, PackError};

/// What a checked component is and asks for.
#[derive(Debug, Clone)]
pub struct CheckedComponent {
    pub path: String,
    pub kind: ComponentKind,
    pub ids: Vec<String>,
    pub sha256: String,
    /// What it requests in `describe` (each declared in the manifest).
    pub requested: Vec<Capability>,
}

/// The capabilities a plugin requests in `describe`, one per host or program.
pub fn requested_capabilities(plugin: &Plugin) -> Vec<Capability> {
    let mut all = BTreeSet::new();
    for capability in &plugin.description.plugin_info().capabilities {
        match capability {
            Requested::Model => {
                all.insert(Capability::Model);
            }
            Requested::Http(hosts) => {
                all.extend(hosts.iter().map(|h| Capability::Http(host_key(h))));
            }
            Requested::Process(programs) => {
                all.extend(programs.iter().cloned().map(Capability::Process));
            }
        }
    }
    all.into_iter().collect()
}

fn kind_of(kind: ComponentKind) -> PluginKind {
    match kind {
        ComponentKind::Scorer => PluginKind::Scorer,
        ComponentKind::Preset => PluginKind::Preset,
        ComponentKind::Provider => PluginKind::Provider,
    }
}

/// The ids a plugin serves: its scorers' ids, else its own id.
fn served_ids(plugin: &Plugin) -> BTreeSet<String> {
    match &plugin.description {
        Description::Scorer(pack) => pack.scorers.iter().map(|s| s.id.clone()).collect(),
        other => BTreeSet::from([other.plugin_info().id.clone()]),
    }
}

/// Checks a loaded component against its manifest entry; `pack` names the
/// pack in errors.
pub fn check_component(
    plugin: &Plugin,
    entry: &ComponentEntry,
    pack: &str,
) -> Result<CheckedComponent, PackError> {
    let refuse = |message: String| {
        PackError::Other(format!(
            "pack {pack}: component `{}` {message}; fix the pack's cautilus-pack.toml or the component, then rebuild it",
            entry.path
        ))
    };
    let stated = entry.sha256.as_deref().unwrap_or_default();
    if !plugin.sha256.eq_ignore_ascii_case(stated) {
        return Err(PackError::HashMismatch {
            origin: format!("pack {pack}"),
            path: entry.path.clone(),
            stated: stated.to_string(),
            actual: plugin.sha256.clone(),
        });
    }
    if plugin.kind != kind_of(entry.kind) {
        return Err(refuse(format!(
            "is a {} component, but the manifest says {}",
            plugin.kind,
            entry.kind.as_str()
        )));
    }
    let listed: BTreeSet<String> = entry.ids.iter().cloned().collect();
    let served = served_ids(plugin);
    if listed != served {
        return Err(refuse(format!(
            "serves {} but the manifest lists {}",
            join(&served),
            join(&listed)
        )));
    }
    let declared: BTreeSet<Capability> = entry
        .capabilities
        .iter()
        .filter_map(|c| Capability::parse(c).ok())
        .collect();
    let requested = requested_capabilities(plugin);
    if let Some(undeclared) = requested.iter().find(|c| !declared.contains(c)) {
        return Err(refuse(format!(
            "requests capability `{undeclared}`, which the manifest does not declare (declared: {})",
            if declared.is_empty() {
                "none".to_string()
            } else {
                join(&declared)
            }
        )));
    }
    Ok(CheckedComponent {
        path: entry.path.clone(),
        kind: entry.kind,
        ids: entry.ids.clone(),
        sha256: plugin.sha256.clone(),
        requested,
    })
}

fn join<T: std::fmt::Display>(items: &BTreeSet<T>) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Loads and checks every component of the pack in `dir` (its files
/// already hash as the manifest states).
pub fn check_pack(
    registry: &Registry,
    dir: &Path,
    manifest: &Manifest,
) -> Result<Vec<CheckedComponent>, PluginError> {
    let label = format!("{}@{}", manifest.pack.name, manifest.pack.version);
    manifest
        .components
        .iter()
        .map(|entry| {
            let plugin = registry.load_path(&dir.join(&entry.path))?;
            Ok(check_component(&plugin, entry, &label)?)
        })
        .collect()
}

/// Loads a component of an installed pack and checks it.
pub fn load_component(
    registry: &Registry,
    component: &crate::pack::set::PackComponent,
) -> Result<Arc<Plugin>, PluginError> {
    let plugin = registry.load_path(&component.path)?;
    check_component(&plugin, &component.entry, &component.pack.label())?;
    Ok(plugin)
}
