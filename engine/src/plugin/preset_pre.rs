//! A preset component ready to instantiate ([`PresetPre`]: its `preset-api`,
//! and its optional `preset-contract`), and what it says about itself
//! ([`PresetDescription`]): below both the runtime that loads components and
//! the preset sessions that run them.

use wasmtime::Store;
use wasmtime::component::InstancePre;

use super::bindings::preset_api::{self, PresetInfo};
use super::bindings::preset_contract;
use super::store_state::StoreState;
use crate::fixture::{SuiteContract, SuiteField};
use crate::lazy_json::LazyValue;

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
                input_fields: LEGACY_INPUT_FIELDS.iter().map(|f| f.to_string()).collect(),
                answer: LEGACY_ANSWER.iter().map(|p| p.to_string()).collect(),
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
        serde_json::from_str::<serde_json::Value>(text)
            .map(LazyValue::from)
            .map_err(|e| format!("gives {what} that is not JSON: {e}"))
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
        input_fields: declared.input_fields,
        answer: declared.answer.into_iter().collect(),
        undeclared: false,
    })
}

/// A preset built against 0.1.0 declares no contract: a case's id is
/// derived from the first of these it has, as the host did before presets
/// declared their input fields.
const LEGACY_INPUT_FIELDS: &[&str] = &["input", "messages", "prompt", "turns"];

/// And its evaluations' answer is looked for where the host looked for it
/// then.
const LEGACY_ANSWER: &[&str] = &["/observed/finalText", "/output"];

/// What a preset said about itself: `describe`, and its suite contract.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PresetDescription {
    pub info: PresetInfo,
    pub contract: SuiteContract,
}
