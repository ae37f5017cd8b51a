//! The preset world's exports over a [`Preset`]: the batches the host
//! calls with (translate, collect, evaluate, contract), one case at a time
//! through the trait, problems named by JSON path.

use std::marker::PhantomData;

use serde_json::Value;

use super::verdict_text::exported;
use super::{CaseRun, CaseStatus, Preset, PresetInfo, Verdict, packet};
use crate::bindings::{preset_api, preset_contract};
use crate::json_text::to_text as json_text;
use crate::types::{FieldError, PluginError};

#[doc(hidden)]
pub struct PresetExport<P>(PhantomData<P>);

impl<P: Preset> preset_contract::Guest for PresetExport<P> {
    fn contract() -> preset_contract::SuiteContract {
        let contract = P::contract();
        preset_contract::SuiteContract {
            fields: contract
                .fields
                .into_iter()
                .map(|f| preset_contract::SuiteField {
                    name: f.name,
                    schema: json_text(&f.schema),
                    description: f.description,
                    default_from: f.default_from,
                    header: f.header,
                    overridable: f.overridable,
                })
                .collect(),
            case_schema: if contract.case_schema.is_null() {
                "{}".into()
            } else {
                json_text(&contract.case_schema)
            },
            snapshots: contract.snapshots,
            schemas: contract
                .schemas
                .into_iter()
                .map(|(id, schema)| preset_contract::SchemaDocument {
                    id,
                    schema: json_text(&schema),
                })
                .collect(),
            input_fields: contract.input_fields,
            answer: contract.answer,
        }
    }
}

impl<P: Preset> preset_api::Guest for PresetExport<P> {
    fn describe() -> PresetInfo {
        P::info()
    }

    fn translate(
        suite: String,
        cases: Vec<String>,
        first_index: u32,
    ) -> Result<Vec<preset_api::CasePlan>, PluginError> {
        let suite = match serde_json::from_str(&suite) {
            Ok(Value::Object(map)) => map,
            _ => return Err(PluginError::input("", "the suite must be a JSON object")),
        };
        let mut plans = Vec::with_capacity(cases.len());
        let mut problems = Vec::new();
        for (offset, text) in cases.iter().enumerate() {
            if let Some(mut plan) = P::translate_written(&suite, text) {
                if problems.is_empty() {
                    plan.repeat_count = plan.repeat_count.max(1);
                    plans.push(plan);
                }
                continue;
            }
            let at = format!("cases[{}]", first_index as usize + offset);
            let case: Value = match serde_json::from_str(text) {
                Ok(case) => case,
                Err(e) => {
                    problems.push(FieldError {
                        path: at,
                        message: format!("not valid JSON: {e}"),
                    });
                    continue;
                }
            };
            match P::translate(&suite, &case, &at) {
                Ok(plan) if problems.is_empty() => plans.push(plan.written()),
                Ok(_) => {}
                Err(errors) => problems.extend(errors),
            }
        }
        if problems.is_empty() {
            Ok(plans)
        } else {
            Err(PluginError::InvalidInput(problems))
        }
    }

    fn collect(
        cases: Vec<String>,
        runs: Vec<CaseRun>,
        first_index: u32,
    ) -> Result<Vec<preset_api::Collected>, PluginError> {
        if cases.len() != runs.len() {
            return Err(PluginError::input(
                "runs",
                format!(
                    "{} runs for {} cases; give one run per case, in order",
                    runs.len(),
                    cases.len()
                ),
            ));
        }
        cases
            .iter()
            .zip(runs)
            .enumerate()
            .map(|(offset, (text, run))| {
                if let Some((evaluation, verdict)) = P::collect_written(text, &run) {
                    return Ok(preset_api::Collected {
                        evaluation,
                        verdict: exported(verdict, None),
                    });
                }
                let case = serde_json::from_str(text).map_err(|e| {
                    PluginError::input(
                        "cases",
                        format!("case `{}` is not valid JSON: {e}", run.case_id),
                    )
                })?;
                let evaluation = P::collect(case, run);
                // Scored from the value itself: the same verdict `evaluate`
                // gives the text, without parsing it back.
                let written = crate::json_text::to_text_with_members(&evaluation);
                let at = format!("evaluations[{}]", first_index as usize + offset);
                let verdict = exported(verdict_of::<P>(evaluation, &at), Some(&written));
                Ok(preset_api::Collected {
                    evaluation: written.text,
                    verdict,
                })
            })
            .collect()
    }

    fn evaluate(
        evaluations: Vec<String>,
        first_index: u32,
    ) -> Result<Vec<preset_api::Verdict>, PluginError> {
        Ok(evaluations
            .iter()
            .enumerate()
            .map(|(offset, text)| {
                let at = format!("evaluations[{}]", first_index as usize + offset);
                let verdict = match serde_json::from_str::<Value>(text) {
                    Ok(evaluation) => verdict_of::<P>(evaluation, &at),
                    Err(e) => Verdict::new(
                        "",
                        CaseStatus::Errored,
                        format!("{at} is not valid JSON: {e}"),
                        Value::Null,
                    ),
                };
                exported(verdict, None)
            })
            .collect())
    }
}

/// The verdict of the evaluation at `at`: anything but an object is an
/// `errored` verdict.
fn verdict_of<P: Preset>(evaluation: Value, at: &str) -> Verdict {
    if evaluation.is_object() {
        P::evaluate(evaluation, at)
    } else {
        Verdict::new(
            packet::evaluation_id(&evaluation),
            CaseStatus::Errored,
            format!("{at} must be an object (an evaluation)"),
            Value::Null,
        )
    }
}
