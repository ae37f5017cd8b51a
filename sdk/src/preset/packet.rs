//! Helpers for building packets.

use serde_json::{Map, Value, json};

use super::CaseRun;
use crate::types::Observation;

/// The value at `path` (object keys, or array indices written as
/// numbers), like [`Value::pointer`] without building a string per
/// step: `at(&e, &["observed", "finalText"])`.
pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |value, key| match value {
        Value::Object(map) => map.get(*key),
        Value::Array(list) => key.parse::<usize>().ok().and_then(|i| list.get(i)),
        _ => None,
    })
}

/// Copies `keys` from `from` into `to`, skipping absent and null values.
pub fn copy_fields(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(value) = from.get(*key).filter(|v| !v.is_null()) {
            to.insert((*key).to_string(), value.clone());
        }
    }
}

/// An evaluation's id: `evaluationId`, else `caseId`, else empty.
pub fn evaluation_id(evaluation: &Value) -> String {
    evaluation
        .get("evaluationId")
        .or_else(|| evaluation.get("caseId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The first missing or empty string among `keys` of `value`.
pub fn first_missing<'a>(value: &Value, keys: &[&'a str]) -> Option<&'a str> {
    keys.iter().copied().find(|key| {
        value
            .get(*key)
            .and_then(Value::as_str)
            .is_none_or(|s| s.trim().is_empty())
    })
}

/// The runtime fields of a run, as every observed evaluation records them:
/// `provider`, `model`, `harness`, `mode` (what the first observation
/// reports, else the host's fallbacks), `durationMs` (summed over samples;
/// a provider-reported duration wins over the host's measurement),
/// `costUsd` and `usage` (summed, present only when every sample reports
/// them), `costSource` (`reported`, `derived:<table>`, or `mixed`),
/// `retries` (summed, when any call was retried) and
/// `error` (the first failed sample's).
pub fn run_fields(run: &CaseRun) -> Map<String, Value> {
    run_field_list(run)
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect()
}

/// [`run_fields`] as a list in the same order, without building a map (for
/// a preset that writes them straight to text).
pub fn run_field_list(run: &CaseRun) -> Vec<(&'static str, Value)> {
    let observations: Vec<&Observation> = run
        .samples
        .iter()
        .filter_map(|s| s.outcome.as_ref().ok())
        .collect();
    let first = observations.first();
    let pick = |reported: Option<&Option<String>>, fallback: Option<&str>| {
        reported
            .and_then(|r| r.as_deref())
            .filter(|r| !r.is_empty())
            .or(fallback)
            .map(|s| Value::String(s.to_string()))
    };
    let mut out = Vec::with_capacity(10);
    let identity = [
        (
            "provider",
            pick(first.map(|o| &o.provider), Some(&run.provider)),
        ),
        ("model", pick(first.map(|o| &o.model), run.model.as_deref())),
        (
            "harness",
            pick(first.map(|o| &o.harness), Some(&run.harness)),
        ),
        ("mode", pick(first.map(|o| &o.mode), Some(&run.mode))),
    ];
    for (key, value) in identity {
        if let Some(value) = value {
            out.push((key, value));
        }
    }
    let duration: u64 = run
        .samples
        .iter()
        .map(|s| match &s.outcome {
            Ok(o) => o.duration_ms.unwrap_or(s.duration_ms),
            Err(_) => s.duration_ms,
        })
        .sum();
    out.push(("durationMs", json!(duration)));
    let all = observations.len() == run.samples.len() && !observations.is_empty();
    if all && let Some(cost) = observations.iter().map(|o| o.cost_usd).sum::<Option<f64>>() {
        out.push(("costUsd", json!(cost)));
        // One source when every sample agrees, else `mixed`.
        let sources: Vec<Option<&str>> = observations
            .iter()
            .map(|o| o.cost_source.as_deref())
            .collect();
        match sources.first() {
            Some(Some(first)) if sources.iter().all(|s| *s == Some(*first)) => {
                out.push(("costSource", json!(first)));
            }
            Some(_) if sources.iter().any(Option::is_some) => {
                out.push(("costSource", json!("mixed")));
            }
            _ => {}
        }
    }
    let retries: u32 = observations.iter().filter_map(|o| o.retries).sum();
    if retries > 0 {
        out.push(("retries", json!(retries)));
    }
    if all && let Some(usage) = usage(&observations) {
        out.push(("usage", usage));
    }
    if let Some(error) = run.samples.iter().find_map(|s| s.outcome.as_ref().err()) {
        out.push(("error", json!(error)));
    }
    out
}

/// Token accounting summed over observations; a field is present only when
/// every observation captured it.
fn usage(observations: &[&Observation]) -> Option<Value> {
    let usages: Option<Vec<_>> = observations.iter().map(|o| o.usage).collect();
    let usages = usages?;
    let sum = |f: fn(&crate::types::Usage) -> Option<u64>| -> Value {
        usages
            .iter()
            .map(f)
            .sum::<Option<u64>>()
            .map_or(Value::Null, |n| json!(n))
    };
    let mut out = Map::new();
    for (key, value) in [
        ("inputTokens", sum(|u| u.input_tokens)),
        ("outputTokens", sum(|u| u.output_tokens)),
        ("cachedInputTokens", sum(|u| u.cached_input_tokens)),
        ("reasoningTokens", sum(|u| u.reasoning_tokens)),
        ("llmCalls", sum(|u| u.llm_calls.map(u64::from))),
    ] {
        if !value.is_null() {
            out.insert(key.into(), value);
        }
    }
    Some(Value::Object(out))
}
