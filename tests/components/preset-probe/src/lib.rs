//! A minimal preset component, to prove the preset world loads, describes
//! and serves batches: each case `n` (a number) becomes case `c<n>`, and
//! its evaluation passes when `n` is even.

use cautilus_sdk::preset::{CasePlan, CaseRun, CaseStatus, Preset, PresetInfo, Verdict};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value, json};

pub struct Probe;

impl Preset for Probe {
    fn info() -> PresetInfo {
        PresetInfo {
            plugin: plugin_info!(),
            surface: "app".into(),
            preset: "prompt".into(),
            cases_schema: "cautilus.app_prompt_test_cases.v1".into(),
            observed_schema: "cautilus.app_prompt_evaluation_inputs.v1".into(),
            summary_schema: "cautilus.app_prompt_evaluation_summary.v1".into(),
            counts: vec!["passed".into(), "failed".into()],
        }
    }

    fn translate(
        _: &Map<String, Value>,
        case: &Value,
        at: &str,
    ) -> Result<CasePlan, Vec<FieldError>> {
        match case.as_u64() {
            Some(n) => Ok(CasePlan::new(format!("c{n}"), json!({"n": n}))),
            None => Err(vec![FieldError {
                path: at.to_string(),
                message: "must be a number".into(),
            }]),
        }
    }

    fn collect(case: Value, run: CaseRun) -> Value {
        json!({"n": case["n"], "caseId": run.case_id, "samples": run.samples.len()})
    }

    fn evaluate(evaluation: Value, _: &str) -> Verdict {
        let even = evaluation["n"].as_u64().is_some_and(|n| n % 2 == 0);
        let status = if even {
            CaseStatus::Passed
        } else {
            CaseStatus::Failed
        };
        let id = evaluation["caseId"].as_str().unwrap_or_default();
        Verdict::new(id, status, "probe", evaluation.clone())
    }
}

export_preset!(Probe);
