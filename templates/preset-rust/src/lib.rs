// An app/prompt preset of your own (this crate, `{{name}}`). It keeps the
// built-in app/prompt preset's case shape and checks (the SDK's `app`
// building blocks) and changes one thing: a case passes only when the
// final text is exactly the expected one (the built-in preset asks for
// containment). It also declares a suite field of its own,
// `requireExpected`, which the host checks against its JSON Schema.
//
// A suite runs on it with `presetPack: <pack>` beside `surface: app`,
// `preset: prompt`.

use cautilus_sdk::app::{Shape, collect, contract, describe, evaluate, translate};
use cautilus_sdk::preset::{
    CasePlan, CaseRun, CaseStatus, Preset, PresetInfo, SuiteContract, SuiteField, Verdict,
};
use cautilus_sdk::serde_json::{Map, Value, json};
use cautilus_sdk::{FieldError, export_preset, plugin_info};

struct ExactPreset;

fn text<'a>(evaluation: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(evaluation, |value, key| value.get(key))
        .and_then(Value::as_str)
}

impl Preset for ExactPreset {
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

export_preset!(ExactPreset);
