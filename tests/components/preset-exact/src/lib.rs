//! An alternative app/prompt preset, as a team would ship one in a pack: the
//! built-in prompt preset's shape and checks, except that a case passes
//! only when the final text is exactly the expected one (the built-in
//! preset asks for containment). The host runs it with no change: it only
//! claims a pair of the host's taxonomy.

use cautilus_presets_app::{Shape, collect, describe, evaluate, translate};
use cautilus_sdk::preset::{CasePlan, CaseRun, CaseStatus, Preset, PresetInfo, Verdict};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value};

struct Exact;

fn text<'a>(evaluation: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(evaluation, |value, key| value.get(key))
        .and_then(Value::as_str)
}

impl Preset for Exact {
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
        let want = text(&evaluation, &["expected", "finalText"]).map(str::to_string);
        let got = text(&evaluation, &["observed", "finalText"]).map(str::to_string);
        let verdict = evaluate(Shape::Prompt, evaluation, at);
        match (want, got) {
            (Some(want), Some(got))
                if verdict.status == CaseStatus::Passed && got.trim() != want =>
            {
                Verdict::new(
                    verdict.case_id,
                    CaseStatus::Failed,
                    format!("final text is not exactly {want:?}; got {got:?}"),
                    verdict.body,
                )
            }
            _ => verdict,
        }
    }
}

export_preset!(Exact);
