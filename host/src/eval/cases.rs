//! From a case of the cases packet to a provider invocation, and from an
//! observation to the per-case result the preset collects.
//!
//! The host reads only the invocation fields every cases packet shares
//! (`caseId`, `prompt`, `input`, `messages`, `system`, `provider`, `model`,
//! `expected`); everything else stays preset-owned JSON.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::plugin::bindings::provider::exports::cautilus::plugin::provider_api::Invocation;
use crate::plugin::bindings::types::{Message, Observation};
use crate::taxonomy::Pair;

/// The invocation for one case.
pub fn invocation(pair: &Pair, case: &Value, canned: Option<&Value>) -> Invocation {
    let text = |key: &str| case.get(key).and_then(Value::as_str).map(str::to_string);
    let mut messages: Vec<Message> = case
        .get("messages")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|m| Message {
                    role: m
                        .get("role")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    content: m
                        .get("content")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    if messages.is_empty()
        && let Some(turn) = text("input").or_else(|| text("prompt"))
    {
        messages.push(Message {
            role: "user".into(),
            content: turn,
        });
    }
    let options = canned.map(|canned| json!({ "canned": canned }).to_string());
    Invocation {
        case_id: text("caseId").unwrap_or_default(),
        mode: pair.mode.as_str().to_string(),
        model: text("model"),
        system: text("system"),
        messages,
        input: case.get("input").map(Value::to_string),
        expected: case
            .get("expected")
            .filter(|v| !v.is_null())
            .map(Value::to_string),
        options,
    }
}

/// Identity a result falls back to when the provider does not report it.
pub struct Identity<'a> {
    pub provider: &'a str,
    pub harness: &'a str,
    pub pair: &'a Pair,
}

/// The result the preset collects for a case that was observed.
pub fn observed_result(
    case: &Value,
    observation: Observation,
    identity: &Identity<'_>,
    elapsed: Duration,
) -> Value {
    let mut result = base(case, identity, elapsed);
    let set = |result: &mut Map<String, Value>, key: &str, value: Option<String>| {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            result.insert(key.into(), Value::String(value));
        }
    };
    set(&mut result, "provider", observation.provider);
    set(&mut result, "model", observation.model);
    set(&mut result, "harness", observation.harness);
    set(&mut result, "mode", observation.mode);
    if let Some(ms) = observation.duration_ms {
        result.insert("durationMs".into(), json!(ms));
    }
    if let Some(cost) = observation.cost_usd {
        result.insert("costUsd".into(), json!(cost));
    }
    if let Some(usage) = observation.usage {
        result.insert(
            "usage".into(),
            json!({
                "inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens,
                "cachedInputTokens": usage.cached_input_tokens, "reasoningTokens": usage.reasoning_tokens,
                "llmCalls": usage.llm_calls,
            }),
        );
    }
    result.insert("status".into(), json!("observed"));
    result.insert(
        "finalText".into(),
        observation.final_text.map_or(Value::Null, Value::String),
    );
    result.insert(
        "messages".into(),
        Value::Array(
            observation
                .messages
                .into_iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect(),
        ),
    );
    if let Some(structured) = observation.structured {
        result.insert(
            "structured".into(),
            serde_json::from_str(&structured).unwrap_or(Value::String(structured)),
        );
    }
    Value::Object(result)
}

/// The result for a case whose provider call failed.
pub fn failed_result(
    case: &Value,
    error: String,
    identity: &Identity<'_>,
    elapsed: Duration,
) -> Value {
    let mut result = base(case, identity, elapsed);
    result.insert("status".into(), json!("error"));
    result.insert("error".into(), json!(error));
    result.insert("messages".into(), json!([]));
    Value::Object(result)
}

/// The result of a case sampled several times: the first sample's identity,
/// the summed duration, and every sample in order under `samples`.
pub fn sampled_result(samples: Vec<Value>) -> Value {
    let mut result = Map::new();
    for key in ["caseId", "provider", "model", "harness", "mode"] {
        if let Some(value) = samples.first().and_then(|s| s.get(key)) {
            result.insert(key.into(), value.clone());
        }
    }
    let total: u64 = samples
        .iter()
        .filter_map(|s| s.get("durationMs").and_then(Value::as_u64))
        .sum();
    result.insert("durationMs".into(), json!(total));
    let all_observed = samples
        .iter()
        .all(|s| s.get("status").and_then(Value::as_str) == Some("observed"));
    result.insert(
        "status".into(),
        json!(if all_observed { "observed" } else { "error" }),
    );
    result.insert("messages".into(), json!([]));
    result.insert("samples".into(), Value::Array(samples));
    Value::Object(result)
}

fn base(case: &Value, identity: &Identity<'_>, elapsed: Duration) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert(
        "caseId".into(),
        case.get("caseId").cloned().unwrap_or(Value::Null),
    );
    // The case's declared provider/model identify the result unless the provider reports its own.
    let provider = case
        .get("provider")
        .and_then(Value::as_str)
        .unwrap_or(identity.provider);
    result.insert("provider".into(), json!(provider));
    if let Some(model) = case.get("model").filter(|m| !m.is_null()) {
        result.insert("model".into(), model.clone());
    }
    result.insert("harness".into(), json!(identity.harness));
    result.insert("mode".into(), json!(identity.pair.mode.as_str()));
    result.insert(
        "durationMs".into(),
        json!(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)),
    );
    result
}
