//! Which cautilus world a component implements, and whether its contract
//! version is one this host loads: read from its exported interface names
//! (`cautilus:plugin/scorer-api@0.1.1`) before anything is instantiated.

use wasmtime::Engine;
use wasmtime::component::{Component, types::ComponentItem};

use super::error::PluginError;
use super::{PluginKind, WIT_PACKAGE, WIT_VERSION};

/// Finds which cautilus world a component implements from its exports.
pub(crate) fn detect_world(
    engine: &Engine,
    component: &Component,
    label: &str,
) -> Result<PluginKind, PluginError> {
    let mut names = Vec::new();
    for (name, item) in component.component_type().exports(engine) {
        if !matches!(item.ty, ComponentItem::ComponentInstance(_)) {
            names.push(name.to_string());
            continue;
        }
        let Some(rest) = name
            .strip_prefix(WIT_PACKAGE)
            .and_then(|r| r.strip_prefix('/'))
        else {
            names.push(name.to_string());
            continue;
        };
        let (interface, version) = rest.split_once('@').unwrap_or((rest, ""));
        let kind = match interface {
            "scorer-api" => PluginKind::Scorer,
            "preset-api" => PluginKind::Preset,
            "provider-api" => PluginKind::Provider,
            _ => {
                names.push(name.to_string());
                continue;
            }
        };
        if let Err(why) = crate::contract::compatible(version, WIT_VERSION) {
            return Err(PluginError::WitVersion {
                plugin: label.to_string(),
                found: if version.is_empty() {
                    "(unversioned)".into()
                } else {
                    version.into()
                },
                expected: WIT_VERSION,
                advice: if why.contains("upgrade cautilus") {
                    "it is newer: upgrade cautilus".to_string()
                } else {
                    format!("rebuild it against cautilus-sdk {WIT_VERSION}")
                },
            });
        }
        return Ok(kind);
    }
    Err(PluginError::NotAPlugin {
        plugin: label.to_string(),
        found: if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        },
        expected_version: WIT_VERSION,
    })
}
