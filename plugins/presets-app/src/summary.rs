//! `evaluate`: one evaluation's verdict. Enforces the cross-runtime
//! MUST-be-present fields: a missing or empty one makes that evaluation
//! `errored`, naming the field — never a crash or a silent pass.

use cautilus_sdk::excerpt;
use cautilus_sdk::preset::{CaseStatus, Verdict};
use serde_json::{Map, Value, json};

use crate::{Shape, non_empty_str, snapshot};

pub fn evaluate(shape: Shape, e: Value, at: &str) -> Verdict {
    let mut matched = None;
    let mut snapshot_diff = None;
    let (status, summary) = if let Some(error) = non_empty_str(e.get("error")) {
        (CaseStatus::Errored, format!("the provider failed: {error}"))
    } else if let Some(field) = missing_field(shape, &e) {
        (
            CaseStatus::Errored,
            format!("{at} is missing required field `{field}` (cross-runtime MUST-be-present set)"),
        )
    } else if let Some(want) = e.pointer("/expected/finalText").and_then(Value::as_str) {
        let got = e
            .pointer("/observed/finalText")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let found = got.contains(want);
        matched = Some(found);
        if found {
            (CaseStatus::Passed, format!("final text contains {want:?}"))
        } else {
            (
                CaseStatus::Failed,
                format!(
                    "final text does not contain {want:?}; got {}",
                    excerpt(got, 160)
                ),
            )
        }
    } else if let Some(golden) = e.pointer("/expected/snapshotText").and_then(Value::as_str) {
        let path = e
            .pointer("/expected/snapshot")
            .and_then(Value::as_str)
            .unwrap_or("snapshot");
        let got = e
            .pointer("/observed/finalText")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match snapshot::compare(path, golden, got) {
            Ok(()) => {
                matched = Some(true);
                (
                    CaseStatus::Passed,
                    format!("final text matches snapshot {path}"),
                )
            }
            Err(mismatch) => {
                matched = Some(false);
                let summary = format!(
                    "final text differs from snapshot {path} ({}):\n{}",
                    mismatch.kind,
                    mismatch.diff.trim_end()
                );
                snapshot_diff = Some(mismatch.to_json(golden, got));
                (CaseStatus::Failed, summary)
            }
        }
    } else {
        (
            CaseStatus::Passed,
            "observed; the case declares no expectations".to_string(),
        )
    };
    // The summary entry keeps the evaluation's fields (moved, not copied).
    let Value::Object(mut fields) = e else {
        unreachable!("the SDK passes objects only")
    };
    let case_id = non_empty_str(fields.get("caseId"))
        .unwrap_or_default()
        .to_string();
    let mut out = Map::new();
    for key in COPIED {
        if let Some(value) = fields.remove(*key).filter(|v| !v.is_null()) {
            out.insert((*key).to_string(), value);
        }
    }
    if let Some(matched) = matched {
        out.insert("match".into(), json!(matched));
    }
    if let Some(diff) = snapshot_diff {
        out.insert("snapshotDiff".into(), diff);
    }
    Verdict::new(case_id, status, summary, Value::Object(out))
}

/// Fields of an observed evaluation carried into the summary.
const COPIED: &[&str] = &[
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
    "metadata",
];

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
