//! An alternative app/prompt preset, as a team would ship one in a pack: the
//! built-in prompt preset's shape and checks, except that a case passes
//! only when the final text is exactly the expected one (the built-in
//! preset asks for containment). The host runs it with no change: it only
//! claims a pair of the host's taxonomy, and declares in its contract one
//! suite field of its own, `requireExpected` (a boolean: every case must
//! give `expected.finalText`), which the host checks by its JSON Schema.

use cautilus_sdk::app::{Shape, collect, contract, describe, evaluate, translate};
use cautilus_sdk::preset::{
    CasePlan, CaseRun, CaseStatus, Preset, PresetInfo, SuiteContract, SuiteField, Verdict,
};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value, json};

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
        let plan = translate(Shape::Prompt, suite, case, at)?;
        if suite.get("requireExpected") == Some(&Value::Bool(true)) && plan.reference.is_none() {
            return Err(vec![FieldError {
                path: format!("{at}.expected.finalText"),
                message: "is required: the suite sets requireExpected".into(),
            }]);
        }
        Ok(plan)
    }

    fn contract() -> SuiteContract {
        let mut contract = contract(Shape::Prompt);
        contract.fields.push(SuiteField::new(
            "requireExpected",
            json!({"type": "boolean"}),
            "true when every case must give expected.finalText",
        ));
        contract
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
