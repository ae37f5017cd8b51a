//! One-shot provider calls (a fresh store per call, so nothing carries over)
//! and the mapping of guest-reported errors to typed errors.

use std::sync::Arc;

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
