//! An app/prompt preset whose suite contract declares `suiteId`, a field
//! the host owns: the host must refuse it when it loads (a contract that
//! would make the host and the preset disagree on what a field means).

use cautilus_sdk::app::{Shape, collect, contract, describe, evaluate, translate};
use cautilus_sdk::preset::{
    CasePlan, CaseRun, Preset, PresetInfo, SuiteContract, SuiteField, Verdict,
};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value, json};

struct BadContract;

impl Preset for BadContract {
    fn info() -> PresetInfo {
        describe(Shape::Prompt, plugin_info!())
    }

    fn translate(
        suite: &Map<String, Value>,
        case: &Value,
        at: &str,
    ) -> Result<CasePlan, Vec<FieldError>> {
        translate(Shape::Prompt, suite, case, at)
    }

    fn collect(case: Value, run: CaseRun) -> Value {
        collect(Shape::Prompt, case, run)
    }

    fn evaluate(evaluation: Value, at: &str) -> Verdict {
        evaluate(Shape::Prompt, evaluation, at)
    }

    fn contract() -> SuiteContract {
        let mut contract = contract(Shape::Prompt);
        contract.fields.push(SuiteField::new(
            "suiteId",
            json!({"type": "integer"}),
            "a number, says this preset",
        ));
        contract
    }
}

export_preset!(BadContract);
