//! Preset sessions: one preset component serving a run's batches of cases
//! from one store (instantiated once), with the run's limits.
//!
//! Every export works on a batch, so a suite of any size crosses the
//! boundary in bounded pieces and several sessions (one per worker thread)
//! can share a run. A call that traps or hits a limit discards the store;
//! the next batch gets a fresh one. Stores never cross runs or plugins.

use std::sync::Arc;

use wasmtime::Store;

use super::bindings::preset::Preset;
use super::bindings::preset::exports::cautilus::plugin::preset_api::{
    CasePlan, CaseRun, PresetInfo, Verdict,
};
use super::error::PluginError;
use super::imports::Grants;
use super::limits::{Limits, StoreState};
use super::oneshot::guest_error;
use super::runtime::{Plugin, PluginPre, arm, classify, new_store};
use super::{Description, PluginKind};

/// A preset bound to a run.
pub struct PresetSession {
    plugin: Arc<Plugin>,
    limits: Limits,
    live: Option<(Store<StoreState>, Preset)>,
}

impl PresetSession {
    pub fn new(plugin: Arc<Plugin>, limits: Limits) -> Result<Self, PluginError> {
        if !matches!(plugin.description, Description::Preset(_)) {
            return Err(PluginError::WrongWorld {
                plugin: plugin.label.clone(),
                found: plugin.kind,
                expected: PluginKind::Preset,
            });
        }
        Ok(Self {
            plugin,
            limits,
            live: None,
        })
    }

    /// What the preset said in `describe`.
    pub fn info(&self) -> &PresetInfo {
        match &self.plugin.description {
            Description::Preset(info) => info,
            _ => unreachable!("checked in PresetSession::new"),
        }
    }

    /// Validates and normalizes a batch of cases (`suite` without `cases`).
    pub fn translate(
        &mut self,
        suite: &str,
        cases: &[String],
        first_index: u32,
    ) -> Result<Vec<CasePlan>, PluginError> {
        let suite = suite.to_string();
        let plans =
            self.call(|api, store| api.call_translate(store, &suite, cases, first_index))?;
        self.check_output(plans.iter().map(|p| p.body.len()).sum())?;
        Ok(plans)
    }

    /// The observed evaluations of a batch of cases and their runs.
    pub fn collect(
        &mut self,
        cases: &[String],
        runs: &[CaseRun],
    ) -> Result<Vec<String>, PluginError> {
        let evaluations = self.call(|api, store| api.call_collect(store, cases, runs))?;
        self.check_output(evaluations.iter().map(String::len).sum())?;
        Ok(evaluations)
    }

    /// Scores a batch of observed evaluations.
    pub fn evaluate(
        &mut self,
        evaluations: &[String],
        first_index: u32,
    ) -> Result<Vec<Verdict>, PluginError> {
        let verdicts =
            self.call(|api, store| api.call_evaluate(store, evaluations, first_index))?;
        self.check_output(
            verdicts
                .iter()
                .map(|v| v.body.len() + v.summary.len())
                .sum(),
        )?;
        Ok(verdicts)
    }

    fn check_output(&mut self, bytes: usize) -> Result<(), PluginError> {
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

    fn call<T>(
        &mut self,
        f: impl FnOnce(
            &super::bindings::preset::exports::cautilus::plugin::preset_api::Guest,
            &mut Store<StoreState>,
        ) -> wasmtime::Result<Result<T, super::bindings::types::PluginError>>,
    ) -> Result<T, PluginError> {
        let name = self.plugin.id().to_string();
        if self.live.is_none() {
            let PluginPre::Preset(pre) = &self.plugin.pre else {
                unreachable!("checked in PresetSession::new");
            };
            let mut store = new_store(
                pre.engine(),
                Arc::from(name.as_str()),
                &self.limits,
                Arc::new(Grants::default()),
                self.plugin.requested(),
            );
            arm(&mut store, &self.limits);
            let instance = pre
                .instantiate(&mut store)
                .map_err(|e| classify(e, &store, &self.limits, &name))?;
            self.live = Some((store, instance));
        }
        let (store, instance) = self.live.as_mut().expect("just set");
        arm(store, &self.limits);
        match f(instance.cautilus_plugin_preset_api(), store) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(guest_error(&name, error)),
            Err(trap) => {
                let error = classify(trap, store, &self.limits, &name);
                self.live = None;
                Err(error)
            }
        }
    }
}
