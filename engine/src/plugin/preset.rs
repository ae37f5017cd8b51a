//! Preset sessions: one preset component serving a run's batches of cases
//! from one live instance, with the run's limits.
//!
//! Every export works on a batch, so a suite of any size crosses the
//! boundary in bounded pieces and several sessions (one per worker thread)
//! can share a run. A call that traps or hits a limit discards the store;
//! the next batch gets a fresh one. Stores never cross runs or plugins.

use std::sync::Arc;

use wasmtime::Store;

use super::bindings::preset_api::{self, CasePlan, CaseRun, Collected, PresetInfo, Verdict};
use super::error::PluginError;
use super::grants::Grants;
use super::limits::Limits;
use super::live::LiveInstance;
pub use super::preset_pre::PresetDescription;
use super::runtime::{Plugin, PluginPre};
use super::store_state::StoreState;
use super::{Description, PluginKind};

/// A preset bound to a run.
pub struct PresetSession {
    instance: LiveInstance<preset_api::Guest>,
}

fn instantiate(
    pre: &PluginPre,
    store: &mut Store<StoreState>,
) -> wasmtime::Result<preset_api::Guest> {
    match pre {
        PluginPre::Preset(pre) => pre.instantiate(store),
        _ => unreachable!("checked in PresetSession::new"),
    }
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
            instance: LiveInstance::new(plugin, limits, Arc::new(Grants::default())),
        })
    }

    /// What the preset said in `describe`.
    pub fn info(&self) -> &PresetInfo {
        self.instance
            .plugin
            .description
            .preset_info()
            .expect("checked in PresetSession::new")
    }

    /// Validates and normalizes a batch of cases (`suite` without `cases`).
    pub fn translate(
        &mut self,
        suite: &str,
        cases: &[String],
        first_index: usize,
    ) -> Result<Vec<CasePlan>, PluginError> {
        // The bindings take `&String`.
        let suite = suite.to_string();
        let plans = self.instance.call(instantiate, |api, store| {
            api.call_translate(store, &suite, cases, index(first_index))
        })?;
        self.instance
            .check_output(plans.iter().map(|p| p.body.len()).sum())?;
        self.one_per_input("translate", plans.len(), cases.len())?;
        Ok(plans)
    }

    /// The observed evaluations of a batch of cases and their runs, each
    /// with its verdict (`first_index`: the batch's position in the run).
    pub fn collect(
        &mut self,
        cases: &[String],
        runs: &[CaseRun],
        first_index: usize,
    ) -> Result<Vec<Collected>, PluginError> {
        let collected = self.instance.call(instantiate, |api, store| {
            api.call_collect(store, cases, runs, index(first_index))
        })?;
        self.instance.check_output(
            collected
                .iter()
                .map(|c| c.evaluation.len() + c.verdict.body.len() + c.verdict.summary.len())
                .sum(),
        )?;
        self.one_per_input("collect", collected.len(), cases.len())?;
        Ok(collected)
    }

    /// Scores a batch of observed evaluations.
    pub fn evaluate(
        &mut self,
        evaluations: &[String],
        first_index: usize,
    ) -> Result<Vec<Verdict>, PluginError> {
        let verdicts = self.instance.call(instantiate, |api, store| {
            api.call_evaluate(store, evaluations, index(first_index))
        })?;
        self.instance.check_output(
            verdicts
                .iter()
                .map(|v| v.body.len() + v.summary.len())
                .sum(),
        )?;
        self.one_per_input("evaluate", verdicts.len(), evaluations.len())?;
        Ok(verdicts)
    }

    /// Every export answers each input of a batch, in order.
    fn one_per_input(&self, export: &str, got: usize, inputs: usize) -> Result<(), PluginError> {
        if got == inputs {
            return Ok(());
        }
        Err(PluginError::Guest {
            plugin: self.info().plugin.id.clone(),
            message: format!(
                "{export} returned {got} results for {inputs} inputs; give one per input, in order"
            ),
        })
    }
}

/// A case's position as the WIT `u32` (error paths past 4 billion saturate).
fn index(position: usize) -> u32 {
    u32::try_from(position).unwrap_or(u32::MAX)
}
