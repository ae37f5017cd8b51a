//! Preset sessions: one preset component serving a run's batches of cases
//! from one live instance, with the run's limits.
//!
//! Every export works on a batch, so a suite of any size crosses the
//! boundary in bounded pieces and several sessions (one per worker thread)
//! can share a run. A call that traps or hits a limit discards the store;
//! the next batch gets a fresh one. Stores never cross runs or plugins.

use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::InstancePre;

use super::bindings::preset_api::{self, CasePlan, CaseRun, Collected, PresetInfo, Verdict};
use super::bindings::preset_contract;
use super::error::PluginError;
use super::grants::Grants;
use super::limits::Limits;
use super::live::LiveInstance;
use super::runtime::{Plugin, PluginPre};
use super::store_state::StoreState;
use super::{Description, PluginKind};
use crate::fixture::{SuiteContract, SuiteField};

/// A preset component ready to instantiate: its `preset-api`, and its
/// `preset-contract` when it was built against a contract that has one.
#[derive(Clone)]
pub(crate) struct PresetPre {
    pre: InstancePre<StoreState>,
    api: preset_api::GuestIndices,
    /// `None`: no `preset-contract` export (a preset built against 0.1.0);
    /// `Some(Err)`: an export this host cannot use (said at `describe`).
    contract: Option<Result<preset_contract::GuestIndices, String>>,
}

/// The interface a preset declares its suite contract through.
const CONTRACT_EXPORT: &str = "cautilus:plugin/preset-contract@0.1.1";

impl PresetPre {
    pub(crate) fn new(pre: InstancePre<StoreState>) -> wasmtime::Result<Self> {
        let api = preset_api::GuestIndices::new(&pre)?;
        // Absent from presets built against 0.1.0: they declare nothing.
        let contract = pre
            .component()
            .get_export_index(None, CONTRACT_EXPORT)
            .map(|_| {
                preset_contract::GuestIndices::new(&pre)
                    .map_err(|e| format!("its `preset-contract` export is unusable: {e:#}"))
            });
        Ok(Self { pre, api, contract })
    }

    pub(crate) fn engine(&self) -> &wasmtime::Engine {
        self.pre.engine()
    }

    pub(crate) fn instantiate(
        &self,
        store: &mut Store<StoreState>,
    ) -> wasmtime::Result<preset_api::Guest> {
        let instance = self.pre.instantiate(&mut *store)?;
        self.api.load(&mut *store, &instance)
    }

    /// `describe` and the suite contract, from one instance. A trap is the
    /// outer error; a contract the host cannot use is the inner one (what
    /// is wrong with it).
    pub(crate) fn describe(
        &self,
        store: &mut Store<StoreState>,
    ) -> wasmtime::Result<(PresetInfo, Result<SuiteContract, String>)> {
        let instance = self.pre.instantiate(&mut *store)?;
        let info = self
            .api
            .load(&mut *store, &instance)?
            .call_describe(&mut *store)?;
        let contract = match &self.contract {
            None => Ok(SuiteContract {
                undeclared: true,
                ..SuiteContract::default()
            }),
            Some(Err(why)) => Err(why.clone()),
            Some(Ok(indices)) => match indices.load(&mut *store, &instance) {
                Err(e) => Err(format!(
                    "its `preset-contract` export has the wrong types: {e:#}"
                )),
                Ok(api) => contract_of(api.call_contract(&mut *store)?),
            },
        };
        Ok((info, contract))
    }
}

/// The declared contract as the host's type; a schema that is not JSON is
/// an error naming the field.
fn contract_of(declared: preset_contract::SuiteContract) -> Result<SuiteContract, String> {
    let parse = |what: &str, text: &str| {
        serde_json::from_str(text).map_err(|e| format!("gives {what} that is not JSON: {e}"))
    };
    let mut fields = Vec::with_capacity(declared.fields.len());
    for field in declared.fields {
        fields.push(SuiteField {
            schema: parse(
                &format!("the schema of field `{}`", field.name),
                &field.schema,
            )?,
            name: field.name,
            description: field.description,
            default_from: field.default_from,
            header: field.header,
            overridable: field.overridable,
        });
    }
    let mut schemas = Vec::with_capacity(declared.schemas.len());
    for document in declared.schemas {
        schemas.push((
            document.id.clone(),
            parse(&format!("schema `{}`", document.id), &document.schema)?,
        ));
    }
    Ok(SuiteContract {
        fields,
        case_schema: parse("the case schema", &declared.case_schema)?,
        snapshots: declared.snapshots,
        schemas,
        undeclared: false,
    })
}

/// What a preset said about itself: `describe`, and its suite contract.
#[derive(Debug, Clone)]
pub struct PresetDescription {
    pub info: PresetInfo,
    pub contract: SuiteContract,
}

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
