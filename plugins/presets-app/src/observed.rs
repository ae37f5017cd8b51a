//! `collect`: the observed packet from the cases packet and the host's
//! per-case results.

use cautilus_sdk::PluginError;
use serde_json::{Map, Value, json};

use crate::Shape;

/// Runtime fields the host records for every result, copied as-is.
const RESULT_FIELDS: &[&str] = &[
    "provider",
    "model",
    "harness",
    "mode",
    "durationMs",
    "costUsd",
    "usage",
    "error",
];

pub fn collect(shape: Shape, cases: Value, results: Value) -> Result<Value, PluginError> {
    let case_list = cases
        .get("cases")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Value::Array(results) = results else {
        return Err(PluginError::input(
            "results",
            "must be a list, one result per case",
        ));
    };
    if results.len() != case_list.len() {
        return Err(PluginError::input(
            "results",
            format!(
                "{} results for {} cases; give one result per case, in order",
                results.len(),
                case_list.len()
            ),
        ));
    }
    let fixture_ref = cases.get("fixtureRef").cloned().unwrap_or(Value::Null);
    let evaluations: Vec<Value> = case_list
        .iter()
        .zip(&results)
        .map(|(case, result)| evaluation(shape, case, result, &fixture_ref))
        .collect();
    Ok(json!({
        "schemaVersion": shape.observed_schema(),
        "surface": "app",
        "preset": shape.preset(),
        "suiteId": cases.get("suiteId").cloned().unwrap_or(Value::Null),
        "suiteDisplayName": cases.get("suiteDisplayName").cloned().unwrap_or(Value::Null),
        "fixtureRef": fixture_ref,
        "evaluations": evaluations,
    }))
}

fn evaluation(shape: Shape, case: &Value, result: &Value, fixture_ref: &Value) -> Value {
    let mut out = Map::new();
    out.insert("caseId".into(), case["caseId"].clone());
    out.insert("displayName".into(), case["displayName"].clone());
    out.insert("surface".into(), json!("app"));
    out.insert("preset".into(), json!(shape.preset()));
    out.insert("fixtureRef".into(), fixture_ref.clone());
    for key in RESULT_FIELDS {
        if let Some(value) = result.get(*key).filter(|v| !v.is_null()) {
            out.insert((*key).into(), value.clone());
        }
    }
    let final_text = result.get("finalText").cloned().unwrap_or(Value::Null);
    let messages = match result.get("messages").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => Value::Array(list.clone()),
        _ => transcript(shape, case, &final_text),
    };
    let mut observed = json!({ "messages": messages, "finalText": final_text });
    if shape == Shape::Prompt {
        observed["input"] = case["input"].clone();
    }
    out.insert("observed".into(), observed);
    if let Some(expected) = case.get("expected").filter(|v| !v.is_null()) {
        out.insert("expected".into(), expected.clone());
    }
    Value::Object(out)
}

/// The conversation when the provider did not return one: the case's turns
/// and the answer.
fn transcript(shape: Shape, case: &Value, final_text: &Value) -> Value {
    let mut messages = match shape {
        Shape::Chat => case["messages"].as_array().cloned().unwrap_or_default(),
        Shape::Prompt => vec![json!({"role": "user", "content": case["input"]})],
    };
    if let Some(text) = final_text.as_str() {
        messages.push(json!({"role": "assistant", "content": text}));
    }
    Value::Array(messages)
}
