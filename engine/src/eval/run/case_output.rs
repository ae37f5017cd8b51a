//! What later steps of a multi-step fixture can read of one case (a leaf
//! below the run pass, which collects it, and [`crate::eval::run::steps`], which reads it).

use serde_json::{Map, Value, json};

use crate::plugin::bindings::preset_api::CaseRun;

/// What later steps can read of one case: `text` and `finalText` (its
/// final text), `messages`, and, when the final text is a JSON object, its
/// fields at the top. Taken from the first sample the provider answered.
pub fn case_output(case_id: &str, run: &CaseRun) -> Value {
    let observation = run.samples.iter().find_map(|s| s.outcome.as_ref().ok());
    let final_text = observation.and_then(|o| o.final_text.clone());
    let mut node = match final_text
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
    {
        Some(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    let messages: Vec<Value> = observation
        .map(|o| {
            o.messages
                .iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect()
        })
        .unwrap_or_default();
    node.insert("caseId".into(), json!(case_id));
    node.insert("text".into(), json!(final_text));
    node.insert("finalText".into(), json!(final_text));
    node.insert("messages".into(), Value::Array(messages));
    if observation.is_none()
        && let Some(Err(error)) = run.samples.first().map(|s| &s.outcome)
    {
        node.insert("error".into(), json!(error));
    }
    Value::Object(node)
}
