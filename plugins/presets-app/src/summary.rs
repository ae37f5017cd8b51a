//! `evaluate`: the summary packet. Enforces the cross-runtime
//! MUST-be-present fields: a missing or empty one makes that evaluation
//! `errored`, naming the field — never a crash or a silent pass.

use cautilus_sdk::PluginError;
use cautilus_sdk::excerpt;
use cautilus_sdk::preset::packet::{copy_fields, evaluations, header};
use serde_json::{Map, Value, json};

use crate::{Shape, non_empty_str};

pub fn evaluate(shape: Shape, observed: Value) -> Result<Value, PluginError> {
    let list = evaluations(&observed, &shape.observed_schema())?;
    let (mut passed, mut failed, mut errored) = (0, 0, 0);
    let evaluations: Vec<Value> = list
        .iter()
        .enumerate()
        .map(|(i, evaluation)| {
            let scored = score(shape, evaluation, i);
            match scored["status"].as_str() {
                Some("passed") => passed += 1,
                Some("failed") => failed += 1,
                _ => errored += 1,
            }
            scored
        })
        .collect();
    let recommendation = if failed + errored > 0 {
        "reject"
    } else {
        "accept-now"
    };
    let mut summary = header(&shape.summary_schema(), "app", shape.preset(), &observed);
    summary.insert("recommendation".into(), json!(recommendation));
    summary.insert(
        "evaluationCounts".into(),
        json!({"total": list.len(), "passed": passed, "failed": failed, "errored": errored}),
    );
    summary.insert("evaluations".into(), Value::Array(evaluations));
    Ok(Value::Object(summary))
}

/// The first MUST-be-present field that is missing or empty, as a path.
fn missing_field(shape: Shape, e: &Value) -> Option<String> {
    for key in ["caseId", "provider", "model", "harness", "mode"] {
        if non_empty_str(e.get(key)).is_none() {
            return Some(key.into());
        }
    }
    if e["mode"] != "messaging" {
        return Some(format!(
            "mode (must be `messaging` on the app surface, got {})",
            e["mode"]
        ));
    }
    if !e
        .get("durationMs")
        .and_then(Value::as_f64)
        .is_some_and(|d| d >= 0.0)
    {
        return Some("durationMs".into());
    }
    match e.pointer("/observed/messages").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => {
            for (j, m) in list.iter().enumerate() {
                for key in ["role", "content"] {
                    if non_empty_str(m.get(key)).is_none() {
                        return Some(format!("observed.messages[{j}].{key}"));
                    }
                }
            }
        }
        _ => return Some("observed.messages".into()),
    }
    if non_empty_str(e.pointer("/observed/finalText")).is_none() {
        return Some("observed.finalText".into());
    }
    if shape == Shape::Prompt && non_empty_str(e.pointer("/observed/input")).is_none() {
        return Some("observed.input".into());
    }
    None
}

fn score(shape: Shape, e: &Value, index: usize) -> Value {
    let mut out = Map::new();
    copy_fields(
        e,
        &mut out,
        &[
            "caseId",
            "displayName",
            "surface",
            "preset",
            "fixtureRef",
            "provider",
            "model",
            "harness",
            "mode",
            "durationMs",
            "costUsd",
            "usage",
            "observed",
            "expected",
        ],
    );
    let (status, summary) = if let Some(error) = non_empty_str(e.get("error")) {
        ("errored", format!("the provider failed: {error}"))
    } else if let Some(field) = missing_field(shape, e) {
        (
            "errored",
            format!(
                "evaluations[{index}] is missing required field `{field}` (cross-runtime MUST-be-present set)"
            ),
        )
    } else if let Some(want) = e.pointer("/expected/finalText").and_then(Value::as_str) {
        let got = e
            .pointer("/observed/finalText")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let matched = got.contains(want);
        out.insert("match".into(), json!(matched));
        if matched {
            ("passed", format!("final text contains {want:?}"))
        } else {
            (
                "failed",
                format!(
                    "final text does not contain {want:?}; got {}",
                    excerpt(got, 160)
                ),
            )
        }
    } else {
        (
            "passed",
            "observed; the case declares no expectations".to_string(),
        )
    };
    out.insert("status".into(), json!(status));
    out.insert("summary".into(), json!(summary));
    Value::Object(out)
}
