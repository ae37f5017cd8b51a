//! One live instance serving many calls: the store is created on first use
//! (with the session's limits and grants), re-armed before every call and
//! discarded after a trap or a limit, so the next call starts fresh. Serves
//! the preset sessions (provider sessions are async: [`super::provider`]).

use std::sync::Arc;

use wasmtime::Store;

use super::bindings::types::PluginError as GuestError;
use super::error::PluginError;
use super::error::guest_error;
use super::grants::Grants;
use super::guest_call::{arm, classify};
use super::limits::Limits;
use super::runtime::{Plugin, PluginPre};
use super::store_state::StoreState;

/// A plugin's store and its bindings `B`, kept between calls.
pub(crate) struct LiveInstance<B> {
    pub plugin: Arc<Plugin>,
    pub limits: Limits,
    grants: Arc<Grants>,
    /// The workspace of the case being served, if it has its own.
    pub case_workspace: Option<std::path::PathBuf>,
    live: Option<(Store<StoreState>, B)>,
}

impl<B> LiveInstance<B> {
    pub fn new(plugin: Arc<Plugin>, limits: Limits, grants: Arc<Grants>) -> Self {
        Self {
            plugin,
            limits,
            grants,
            case_workspace: None,
            live: None,
        }
    }

    /// Calls `f` on the live instance (instantiating it with `instantiate`
    /// first if needed). A trap discards the store; a guest-reported error
    /// keeps it.
    pub fn call<T>(
        &mut self,
        instantiate: impl FnOnce(&PluginPre, &mut Store<StoreState>) -> wasmtime::Result<B>,
        f: impl FnOnce(&B, &mut Store<StoreState>) -> wasmtime::Result<Result<T, GuestError>>,
    ) -> Result<T, PluginError> {
        let name = self.plugin.id().to_string();
        if self.live.is_none() {
            // Made ready first (a deferred built-in may be mapped, or even
            // compiled, now): not on the guest's deadline.
            let pre = self.plugin.pre()?;
            let mut store = self.plugin.armed_store(&self.limits, self.grants.clone())?;
            let bindings = instantiate(pre, &mut store)
                .map_err(|e| classify(e, &store, &self.limits, &name))?;
            self.live = Some((store, bindings));
        }
        let (store, bindings) = self.live.as_mut().expect("just set");
        arm(store, &self.limits);
        store.data_mut().set_case_workspace(&self.case_workspace);
        match f(bindings, store) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(guest_error(&name, error)),
            Err(trap) => {
                let error = classify(trap, store, &self.limits, &name);
                self.live = None;
                Err(error)
            }
        }
    }

    /// Fails with `OutputTooLarge` (and drops the store) when a call
    /// returned more than the output limit.
    pub fn check_output(&mut self, bytes: usize) -> Result<(), PluginError> {
        if bytes > self.limits.output_bytes {
            self.live = None;
            return Err(PluginError::OutputTooLarge {
                plugin: self.plugin.id().to_string(),
                bytes,
                limit: self.limits.output_bytes,
            });
        }
        Ok(())
    }
}
