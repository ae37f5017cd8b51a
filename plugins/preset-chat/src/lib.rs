//! The app/chat preset: system prompt + a multi-turn `messages` list.

use cautilus_sdk::app::{
    Shape, collect, collect_written, contract, describe, evaluate, translate, translate_written,
};
use cautilus_sdk::preset::{
    CasePlan, CaseRun, Preset, PresetInfo, SuiteContract, Verdict, WrittenPlan,
};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value};

struct Chat;

impl Preset for Chat {
    fn info() -> PresetInfo {
        describe(Shape::Chat, plugin_info!())
    }

    fn translate(
        suite: &Map<String, Value>,
        case: &Value,
        at: &str,
    ) -> Result<CasePlan, Vec<FieldError>> {
        translate(Shape::Chat, suite, case, at)
    }

    fn translate_written(suite: &Map<String, Value>, case: &str) -> Option<WrittenPlan> {
        translate_written(Shape::Chat, suite, case)
    }

    fn collect(case: Value, run: CaseRun) -> Value {
        collect(Shape::Chat, case, run)
    }

    fn collect_written(case: &str, run: &CaseRun) -> Option<(String, Verdict)> {
        collect_written(Shape::Chat, case, run)
    }

    fn evaluate(evaluation: Value, at: &str) -> Verdict {
        evaluate(Shape::Chat, evaluation, at)
    }

    fn contract() -> SuiteContract {
        contract(Shape::Chat)
    }
}

export_preset!(Chat);
