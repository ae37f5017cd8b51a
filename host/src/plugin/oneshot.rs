//! One-shot calls into preset and provider components: each call gets a
//! fresh store with the caller's limits and grants, so nothing carries over
//! between calls.

use std::sync::Arc;

use serde_json::Value;

use super::PluginKind;
use super::bindings::provider::exports::cautilus::plugin::provider_api::Invocation;
use super::bindings::types::{Observation, PluginError as GuestError};
use super::error::PluginError;
use super::imports::Grants;
use super::limits::Limits;
use super::runtime::{Plugin, PluginPre, arm, classify, new_store};

fn wrong_world(plugin: &Plugin, expected: PluginKind) -> PluginError {
    PluginError::WrongWorld {
        plugin: plugin.label.clone(),
        found: plugin.kind,
        expected,
    }
}

pub(crate) fn guest_error(plugin: &str, error: GuestError) -> PluginError {
    let plugin = plugin.to_string();
    match error {
        GuestError::InvalidConfig(field) => PluginError::InvalidConfig {
            plugin,
            field: field.path,
            message: field.message,
        },
        GuestError::InvalidInput(fields) => PluginError::InvalidInput {
            plugin,
            errors: fields.into_iter().map(|f| (f.path, f.message)).collect(),
        },
        GuestError::Failed(message) => PluginError::Guest { plugin, message },
    }
}

/// Asks a provider component for one observation.
pub fn invoke_provider(
    plugin: &Arc<Plugin>,
    request: &Invocation,
    limits: &Limits,
    grants: Arc<Grants>,
) -> Result<Observation, PluginError> {
    let PluginPre::Provider(pre) = &plugin.pre else {
        return Err(wrong_world(plugin, PluginKind::Provider));
    };
    let name = plugin.id().to_string();
    let mut store = new_store(
        pre.engine(),
        Arc::from(name.as_str()),
        limits,
        grants,
        plugin.requested(),
    );
    arm(&mut store, limits);
    let instance = pre
        .instantiate(&mut store)
        .map_err(|e| classify(e, &store, limits, &name))?;
    instance
        .cautilus_plugin_provider_api()
        .call_invoke(&mut store, request)
        .map_err(|e| classify(e, &store, limits, &name))?
        .map_err(|e| guest_error(&name, e))
}

/// Which preset export to call, with its packets.
#[derive(Debug, Clone, Copy)]
pub enum PresetCall<'a> {
    Translate(&'a Value),
    Collect {
        cases: &'a Value,
        results: &'a Value,
    },
    Evaluate(&'a Value),
}

/// Calls a preset component's `translate`, `collect` or `evaluate`.
pub fn call_preset(
    plugin: &Arc<Plugin>,
    call: PresetCall<'_>,
    limits: &Limits,
) -> Result<Value, PluginError> {
    let PluginPre::Preset(pre) = &plugin.pre else {
        return Err(wrong_world(plugin, PluginKind::Preset));
    };
    let name = plugin.id().to_string();
    let mut store = new_store(
        pre.engine(),
        Arc::from(name.as_str()),
        limits,
        Arc::new(Grants::default()),
        plugin.requested(),
    );
    arm(&mut store, limits);
    let instance = pre
        .instantiate(&mut store)
        .map_err(|e| classify(e, &store, limits, &name))?;
    let api = instance.cautilus_plugin_preset_api();
    let result = match call {
        PresetCall::Translate(suite) => api.call_translate(&mut store, &suite.to_string()),
        PresetCall::Collect { cases, results } => {
            api.call_collect(&mut store, &cases.to_string(), &results.to_string())
        }
        PresetCall::Evaluate(observed) => api.call_evaluate(&mut store, &observed.to_string()),
    };
    let text = result
        .map_err(|e| classify(e, &store, limits, &name))?
        .map_err(|e| guest_error(&name, e))?;
    if text.len() > limits.output_bytes {
        return Err(PluginError::OutputTooLarge {
            plugin: name,
            bytes: text.len(),
            limit: limits.output_bytes,
        });
    }
    serde_json::from_str(&text).map_err(|e| PluginError::Guest {
        plugin: name,
        message: format!("returned a packet that is not JSON: {e}"),
    })
}
