//! The app/prompt preset: system prompt + one `input`, single turn.

use cautilus_presets_app::{Shape, collect, contract, describe, evaluate, translate};
use cautilus_sdk::preset::{CasePlan, CaseRun, Preset, PresetInfo, SuiteContract, Verdict};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value};

struct Prompt;

impl Preset for Prompt {
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
        contract(Shape::Prompt)
    }
}

export_preset!(Prompt);
