//! `describe`, called once when a component loads: what it says about
//! itself, in a throwaway store armed with the default limits (but a
//! longer deadline).

use std::sync::Arc;

use wasmtime::Engine;

use super::Description;
use super::capability::Requested;
use super::error::PluginError;
use super::grants::Grants;
use super::guest_call::{arm, classify, new_store};
use super::limits::Limits;
use super::prepared::PluginPre;

/// How long instantiating a component and its `describe` may take, once,
/// when it loads: a component that starts an interpreter (a Python
/// scorer's) may take more than a guest call's default two seconds on a
/// busy machine; one that never answers is still stopped.
const DESCRIBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Calls `describe` in a throwaway store with default limits (but
/// [`DESCRIBE_TIMEOUT`]).
pub(super) fn describe(pre: &PluginPre, label: &str) -> Result<Description, PluginError> {
    let limits = Limits {
        timeout: DESCRIBE_TIMEOUT,
        ..Limits::default()
    };
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
    Ok(match pre {
        PluginPre::Scorer(pre) => {
            let mut store = fresh(pre.engine());
            let instance = pre
                .instantiate(&mut store)
                .map_err(|e| classify(e, &store, &limits, label))?;
            let pack = instance
                .cautilus_plugin_scorer_api()
                .call_describe(&mut store)
                .map_err(|e| classify(e, &store, &limits, label))?;
            Description::Scorer(pack)
        }
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
