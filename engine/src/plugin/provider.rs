//! Provider sessions: one provider component serving many cases of a run
//! from one live instance, with the run's limits and grants.
//!
//! Calls are async ([`super::io`]): while the provider waits on its `http`
//! or `process` import, the thread serves other calls. A session serves one
//! call at a time; a run keeps one session per call in flight. A call that
//! traps or hits a limit discards the store; the next call gets a fresh one.

use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::Store;

use super::bindings::provider_api::Invocation;
use super::bindings::provider_embed::{EmbedRequest, EmbedResponse};
use super::bindings::types::{Observation, PluginError as GuestError};
use super::error::PluginError;
use super::error::guest_error;
use super::grants::Grants;
use super::guest_call::{arm, classify};
use super::limits::Limits;
use super::provider_pre::ProviderInstance;
use super::runtime::{Plugin, PluginPre};
use super::store_state::StoreState;
use super::{Description, PluginKind};

/// A provider bound to a run.
pub struct ProviderSession {
    plugin: Arc<Plugin>,
    limits: Limits,
    grants: Arc<Grants>,
    /// The workspace of the case being served, if it has its own.
    case_workspace: Option<PathBuf>,
    live: Option<(Store<StoreState>, ProviderInstance)>,
    /// When the last call's answer started ([`Self::first_content`]).
    first_content: Option<std::time::Instant>,
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
            plugin,
            limits,
            grants,
            case_workspace: None,
            live: None,
            first_content: None,
        })
    }

    /// The harness the provider reports (`fixture-backend`, `claude_code`, …).
    pub fn harness(&self) -> &str {
        match &self.plugin.description {
            Description::Provider(info) => &info.harness,
            _ => "",
        }
    }

    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// Serves the next calls in `workspace` (a case's own copy) instead of
    /// the run's workspace; `None` goes back to the run's.
    pub fn set_case_workspace(&mut self, workspace: Option<PathBuf>) {
        self.case_workspace = workspace;
    }

    /// Instantiates the provider now (its first call would otherwise), so
    /// a run can get its sessions ready while it checks its cases.
    pub async fn warm(&mut self) -> Result<(), PluginError> {
        if self.live.is_none() {
            let PluginPre::Provider(pre) = self.plugin.pre()? else {
                unreachable!("checked in ProviderSession::new")
            };
            let mut store = self.plugin.armed_store(&self.limits, self.grants.clone())?;
            let bindings = pre
                .instantiate_async(&mut store)
                .await
                .map_err(|e| classify(e, &store, &self.limits, self.plugin.id()))?;
            self.live = Some((store, bindings));
        }
        Ok(())
    }

    /// When the last call's answer started: the first content of its first
    /// successful `http` answer (`None` when it made no such request, e.g.
    /// a CLI provider or the fixture backend). The caller's clock starts
    /// where its duration does, so the two compare.
    pub fn first_content(&self) -> Option<std::time::Instant> {
        self.first_content
    }

    /// Asks the provider for one observation.
    pub async fn invoke(&mut self, request: &Invocation) -> Result<Observation, PluginError> {
        let name = self.plugin.id().to_string();
        self.first_content = None;
        if self.live.is_none() {
            // Boxed: instantiating is a large future, and is awaited once a
            // session; every call's future would otherwise be as large.
            Box::pin(self.warm()).await?;
        }
        let (store, bindings) = self.live.as_mut().expect("just set");
        arm(store, &self.limits);
        store.data_mut().set_case_workspace(&self.case_workspace);
        let called = bindings.api.call_invoke(&mut *store, request).await;
        self.first_content = store.data().first_content();
        let observation = self.settle(called, &name)?;
        let bytes = observation.final_text.as_ref().map_or(0, String::len)
            + observation.structured.as_ref().map_or(0, String::len)
            + observation
                .messages
                .iter()
                .map(|m| m.content.len() + m.role.len())
                .sum::<usize>();
        self.within_output(bytes, name)?;
        Ok(observation)
    }

    /// Asks the provider for embedding vectors (its `provider-embed`
    /// export); `Ok(None)` when it has none.
    pub async fn embed(
        &mut self,
        request: &EmbedRequest,
    ) -> Result<Option<EmbedResponse>, PluginError> {
        let name = self.plugin.id().to_string();
        self.warm().await?;
        let (store, bindings) = self.live.as_mut().expect("just set");
        let Some(embed) = &bindings.embed else {
            return Ok(None);
        };
        arm(store, &self.limits);
        store.data_mut().set_case_workspace(&self.case_workspace);
        let called = embed.call_embed(&mut *store, request).await;
        let response = self.settle(called, &name)?;
        let bytes = response.vectors.iter().map(Vec::len).sum::<usize>() * 4;
        self.within_output(bytes, name)?;
        Ok(Some(response))
    }

    /// The value of a call into the live instance: a guest error as the
    /// plugin's, a trap classified against the limits (the instance, whose
    /// state is then unknown, is discarded).
    fn settle<T>(
        &mut self,
        called: wasmtime::Result<Result<T, GuestError>>,
        name: &str,
    ) -> Result<T, PluginError> {
        match called {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(guest_error(name, error)),
            Err(trap) => {
                let (store, _) = self.live.as_mut().expect("a call runs on a live instance");
                let error = classify(trap, store, &self.limits, name);
                self.live = None;
                Err(error)
            }
        }
    }

    /// Refuses an answer of `bytes` past the output limit (and discards the
    /// instance that made it).
    fn within_output(&mut self, bytes: usize, name: String) -> Result<(), PluginError> {
        if bytes > self.limits.output_bytes {
            self.live = None;
            return Err(PluginError::OutputTooLarge {
                plugin: name,
                bytes,
                limit: self.limits.output_bytes,
            });
        }
        Ok(())
    }
}
