//! The app/prompt preset: system prompt + one `input`, single turn.

use cautilus_sdk::app::{
    Shape, collect, collect_written, contract, describe, evaluate, translate, translate_written,
};
use cautilus_sdk::preset::{
    CasePlan, CaseRun, Preset, PresetInfo, SuiteContract, Verdict, WrittenPlan,
};
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

    fn translate_written(suite: &Map<String, Value>, case: &str) -> Option<WrittenPlan> {
        translate_written(Shape::Prompt, suite, case)
    }

    fn collect(case: Value, run: CaseRun) -> Value {
        collect(Shape::Prompt, case, run)
    }

    fn collect_written(case: &str, run: &CaseRun) -> Option<(String, Verdict)> {
        collect_written(Shape::Prompt, case, run)
    }

    fn evaluate(evaluation: Value, at: &str) -> Verdict {
        evaluate(Shape::Prompt, evaluation, at)
    }

    fn contract() -> SuiteContract {
        contract(Shape::Prompt)
    }
}

export_preset!(Prompt);
