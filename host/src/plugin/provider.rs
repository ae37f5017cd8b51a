//! Provider sessions: one provider component serving many cases of a run
//! from one live instance, with the run's limits and grants.
//! A call that traps or hits a limit discards the store; the next case gets
//! a fresh one.

use std::sync::Arc;

use wasmtime::Store;

use super::bindings::provider::Provider;
use super::bindings::provider::exports::cautilus::plugin::provider_api::Invocation;
use super::bindings::types::Observation;
use super::error::PluginError;
use super::imports::Grants;
use super::limits::{Limits, StoreState};
use super::live::LiveInstance;
use super::runtime::{Plugin, PluginPre};
use super::{Description, PluginKind};

/// A provider bound to a run.
pub struct ProviderSession {
    instance: LiveInstance<Provider>,
}

fn instantiate(pre: &PluginPre, store: &mut Store<StoreState>) -> wasmtime::Result<Provider> {
    match pre {
        PluginPre::Provider(pre) => pre.instantiate(store),
        _ => unreachable!("checked in ProviderSession::new"),
    }
}

impl ProviderSession {
    pub fn new(
        plugin: Arc<Plugin>,
        limits: Limits,
        grants: Arc<Grants>,
    ) -> Result<Self, PluginError> {
        if !matches!(plugin.description, Description::Provider(_)) {
            return Err(PluginError::WrongWorld {
                plugin: plugin.label.clone(),
                found: plugin.kind,
                expected: PluginKind::Provider,
            });
        }
        Ok(Self {
            instance: LiveInstance::new(plugin, limits, grants),
        })
    }

    /// The harness the provider reports (`fixture-backend`, `claude_code`, …).
    pub fn harness(&self) -> &str {
        match &self.instance.plugin.description {
            Description::Provider(info) => &info.harness,
            _ => "",
        }
    }

    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.instance.plugin
    }

    /// Serves the next calls in `workspace` (a case's own copy) instead of
    /// the run's workspace; `None` goes back to the run's.
    pub fn set_case_workspace(&mut self, workspace: Option<std::path::PathBuf>) {
        self.instance.case_workspace = workspace;
    }

    /// Asks the provider for one observation.
    pub fn invoke(&mut self, request: &Invocation) -> Result<Observation, PluginError> {
        let observation = self.instance.call(instantiate, |api, store| {
            api.cautilus_plugin_provider_api()
                .call_invoke(store, request)
        })?;
        let bytes = observation.final_text.as_ref().map_or(0, String::len)
            + observation.structured.as_ref().map_or(0, String::len)
            + observation
                .messages
                .iter()
                .map(|m| m.content.len() + m.role.len())
                .sum::<usize>();
        self.instance.check_output(bytes)?;
        Ok(observation)
    }
}
