//! An app/prompt preset built against `cautilus:plugin@0.1.0` (the frozen
//! WIT in `../wit-0.1.0`), before presets declared a suite contract: the
//! proof that a component of an older patch of the line loads and serves a
//! suite on a newer host. Deliberately small and without the SDK (which
//! follows the current contract): a case passes when the final text
//! contains `expected.finalText`.

wit_bindgen::generate!({
    path: "../wit-0.1.0",
    world: "preset",
});

use cautilus::plugin::types::{Message, PluginError, PluginInfo};
use exports::cautilus::plugin::preset_api::{
    CasePlan, CaseRun, CaseStatus, Collected, Guest, PresetInfo, Recommendation, Verdict,
};
use serde_json::{Value, json};

struct Component;

fn field(path: String, message: &str) -> PluginError {
    PluginError::InvalidInput(vec![cautilus::plugin::types::FieldError {
        path,
        message: message.into(),
    }])
}

fn verdict(evaluation: &Value) -> Verdict {
    let id = evaluation["caseId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let want = evaluation["expected"]["finalText"].as_str();
    let got = evaluation["observed"]["finalText"].as_str();
    let (status, recommendation, summary) = match (want, got) {
        (Some(want), Some(got)) if got.contains(want) => (
            CaseStatus::Passed,
            Recommendation::AcceptNow,
            "contains the expected text".to_string(),
        ),
        (Some(want), got) => (
            CaseStatus::Failed,
            Recommendation::Reject,
            format!("final text {got:?} does not contain {want:?}"),
        ),
        (None, _) => (
            CaseStatus::Unchecked,
            Recommendation::Defer,
            "nothing to check".to_string(),
        ),
    };
    let mut body = evaluation.clone();
    body["summary"] = json!(summary);
    Verdict {
        case_id: id,
        status,
        recommendation,
        tags: Vec::new(),
        summary,
        body: body.to_string(),
    }
}

impl Guest for Component {
    fn describe() -> PresetInfo {
        PresetInfo {
            plugin: PluginInfo {
                id: "test-preset-v010".into(),
                version: "0.1.0".into(),
                description: "an app/prompt preset built against cautilus:plugin@0.1.0".into(),
                capabilities: Vec::new(),
            },
            surface: "app".into(),
            preset: "prompt".into(),
            cases_schema: "test.v010_cases.v1".into(),
            observed_schema: "test.v010_observed.v1".into(),
            summary_schema: "test.v010_summary.v1".into(),
            counts: vec!["passed".into(), "failed".into()],
        }
    }

    fn translate(
        suite: String,
        cases: Vec<String>,
        first_index: u32,
    ) -> Result<Vec<CasePlan>, PluginError> {
        let suite: Value = serde_json::from_str(&suite).unwrap_or(Value::Null);
        let mut plans = Vec::new();
        for (offset, text) in cases.iter().enumerate() {
            let at = format!("cases[{}]", first_index as usize + offset);
            let case: Value =
                serde_json::from_str(text).map_err(|_| field(at.clone(), "not JSON"))?;
            let id = case["caseId"]
                .as_str()
                .ok_or_else(|| field(format!("{at}.caseId"), "is missing"))?;
            let input = case["input"]
                .as_str()
                .ok_or_else(|| field(format!("{at}.input"), "is missing"))?;
            plans.push(CasePlan {
                case_id: id.into(),
                body: case.to_string(),
                messages: vec![Message {
                    role: "user".into(),
                    content: input.into(),
                }],
                system: None,
                provider: suite["provider"].as_str().map(String::from),
                model: suite["model"].as_str().map(String::from),
                input: Some(json!(input).to_string()),
                expected: case.get("expected").map(Value::to_string),
                reference: case["expected"].get("finalText").map(Value::to_string),
                repeat_count: 1,
            });
        }
        Ok(plans)
    }

    fn collect(
        cases: Vec<String>,
        runs: Vec<CaseRun>,
        _first_index: u32,
    ) -> Result<Vec<Collected>, PluginError> {
        Ok(cases
            .iter()
            .zip(runs)
            .map(|(text, run)| {
                let case: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                let final_text = run
                    .samples
                    .first()
                    .and_then(|s| s.outcome.as_ref().ok())
                    .and_then(|o| o.final_text.clone());
                let evaluation = json!({
                    "caseId": run.case_id,
                    "expected": case.get("expected"),
                    "observed": {"finalText": final_text},
                });
                Collected {
                    evaluation: evaluation.to_string(),
                    verdict: verdict(&evaluation),
                }
            })
            .collect())
    }

    fn evaluate(evaluations: Vec<String>, _first_index: u32) -> Result<Vec<Verdict>, PluginError> {
        Ok(evaluations
            .iter()
            .map(|text| verdict(&serde_json::from_str(text).unwrap_or(Value::Null)))
            .collect())
    }
}

export!(Component);
