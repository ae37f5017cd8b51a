//! One-shot provider calls (a fresh store per call, so nothing carries over).

use std::sync::Arc;

use super::bindings::provider_api::Invocation;
use super::bindings::types::Observation;
use super::error::PluginError;
use super::grants::Grants;
use super::limits::Limits;
use super::runtime::Plugin;

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
