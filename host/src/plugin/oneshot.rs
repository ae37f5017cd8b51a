//! One-shot provider calls (a fresh store per call, so nothing carries over)
//! and the mapping of guest-reported errors to typed errors.

use std::sync::Arc;

use super::bindings::provider_api::Invocation;
use super::bindings::types::{Observation, PluginError as GuestError};
use super::error::PluginError;
use super::grants::Grants;
use super::limits::Limits;
use super::runtime::Plugin;

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

/// Asks a provider component for one observation, in a fresh session
/// (blocking the calling thread until it answers).
pub fn invoke_provider(
    plugin: &Arc<Plugin>,
    request: &Invocation,
    limits: &Limits,
    grants: Arc<Grants>,
) -> Result<Observation, PluginError> {
    let mut session =
        super::provider::ProviderSession::new(plugin.clone(), limits.clone(), grants)?;
    super::io::block_on(session.invoke(request))
}
