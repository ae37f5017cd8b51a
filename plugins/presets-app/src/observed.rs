//! `collect`: the observed packet from the cases packet and the host's
//! per-case results.

use cautilus_sdk::PluginError;
use cautilus_sdk::preset::packet::{copy_fields, header, pair_results};
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
    let (case_list, results) = pair_results(&cases, results)?;
    let fixture_ref = cases.get("fixtureRef").cloned().unwrap_or(Value::Null);
    let evaluations: Vec<Value> = case_list
        .iter()
        .zip(&results)
        .map(|(case, result)| evaluation(shape, case, result, &fixture_ref))
        .collect();
    let mut packet = header(&shape.observed_schema(), "app", shape.preset(), &cases);
    packet.insert("evaluations".into(), Value::Array(evaluations));
    Ok(Value::Object(packet))
}

fn evaluation(shape: Shape, case: &Value, result: &Value, fixture_ref: &Value) -> Value {
    let mut out = Map::new();
    copy_fields(case, &mut out, &["caseId", "displayName"]);
    out.insert("surface".into(), json!("app"));
    out.insert("preset".into(), json!(shape.preset()));
    out.insert("fixtureRef".into(), fixture_ref.clone());
    copy_fields(result, &mut out, RESULT_FIELDS);
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
    copy_fields(case, &mut out, &["expected"]);
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
