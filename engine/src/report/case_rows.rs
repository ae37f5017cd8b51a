//! One case of a report from its recorded evaluation: the packet fields
//! every preset shares lifted out, the rest kept as recorded, and its
//! transcript read, never from outside the run directory.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::model::{Assertion, CaseRow, Transcript};

/// Bytes of a transcript shown in the report (the rest is in the records).
const TRANSCRIPT_BYTES: u64 = 256 * 1024;

/// Evaluation members the model lifts out; the rest is the case's `fields`.
const LIFTED: &[&str] = &[
    "caseId",
    "displayName",
    "status",
    "summary",
    "assertions",
    "durationMs",
    "costUsd",
    "tags",
    "snapshotDiff",
    "artifactRefs",
    "assertionScore",
    "surface",
    "preset",
    "fixtureRef",
    "match",
];

/// `dir/relative` when `relative` stays inside `dir` (records may come
/// from anywhere; a report never reads outside its run).
pub fn safe_join(dir: &Path, relative: &str) -> Option<PathBuf> {
    let path = Path::new(relative);
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| dir.join(path))
}

/// Whether `path` is a regular file that, symlinks resolved, is still
/// inside `dir` (a downloaded run directory must not make a report read
/// `~/.ssh/…`, nor hang on a FIFO).
pub(super) fn contained_file(dir: &Path, path: &Path) -> bool {
    let (Ok(root), Ok(real)) = (std::fs::canonicalize(dir), std::fs::canonicalize(path)) else {
        return false;
    };
    real.starts_with(&root) && std::fs::metadata(&real).is_ok_and(|m| m.is_file())
}

/// The status of a case whose record is not a JSON object.
pub(super) const NOT_AN_OBJECT: &str = "errored";

/// A text member as recorded: the string, or empty for anything else.
pub(super) fn text_of(value: Option<Value>) -> String {
    match value {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A number member as recorded (`None` for anything else).
pub(super) fn number_of(value: Option<&Value>) -> Option<f64> {
    value.and_then(Value::as_f64)
}

/// A case's cost: its own, else its experiment cell's (`cell_cost`, the
/// cell's `costUsd`).
pub(super) fn cost_of(own: Option<&Value>, cell_cost: Option<&Value>) -> Option<f64> {
    number_of(own).or_else(|| number_of(cell_cost))
}

/// A case's `assertions` as recorded (an item that is not an assertion
/// reads as an empty one).
pub(super) fn assertions_of(value: Option<Value>) -> Vec<Assertion> {
    match value {
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|a| serde_json::from_value(a).unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    }
}

/// A case's `provider / model / harness`, when its record names a
/// provider (`member`: its members that are not lifted).
pub(super) fn target_of<'a>(member: impl Fn(&str) -> Option<&'a Value>) -> Option<String> {
    member("provider")?;
    let part = |k: &str| member(k).and_then(Value::as_str).unwrap_or("?");
    Some(format!(
        "{} / {} / {}",
        part("provider"),
        part("model"),
        part("harness")
    ))
}

/// One evaluation (or, without its group's records, the cell alone) as a
/// row; `cell` adds what only the experiment knows (tags, the output).
pub(super) fn case_row(
    evaluation: Value,
    dir: &Path,
    variant: Option<String>,
    trial: Option<u32>,
    cell: Option<&Value>,
) -> CaseRow {
    let Value::Object(mut fields) = evaluation else {
        return CaseRow {
            id: "?".into(),
            name: "?".into(),
            variant,
            trial,
            status: NOT_AN_OBJECT.into(),
            summary: "the record of this case is not a JSON object".into(),
            duration_ms: None,
            cost_usd: None,
            score: None,
            tags: Vec::new(),
            assertions: Vec::new(),
            fields: Map::new(),
            snapshot_diff: None,
            transcript: None,
        };
    };
    let mut lifted: HashMap<&str, Value> = LIFTED
        .iter()
        .filter_map(|k| fields.remove(*k).map(|v| (*k, v)))
        .collect();
    let mut take_text = |k: &str| text_of(lifted.remove(k));
    let id = take_text("caseId");
    let name = take_text("displayName");
    let status = take_text("status");
    let summary = take_text("summary");
    let cost_usd = cost_of(lifted.get("costUsd"), cell.and_then(|c| c.get("costUsd")));
    let duration_ms = number_of(lifted.get("durationMs"));
    let score = number_of(lifted.get("assertionScore"));
    let tags_of = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|tags| {
                tags.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut tags = tags_of(lifted.get("tags"));
    if tags.is_empty() {
        tags = tags_of(cell.and_then(|c| c.get("tags")));
    }
    let assertions = assertions_of(lifted.remove("assertions"));
    let transcript = lifted
        .get("artifactRefs")
        .and_then(Value::as_array)
        .and_then(|refs| {
            refs.iter()
                .find(|r| r.get("kind").and_then(Value::as_str) == Some("transcript"))
        })
        .and_then(|r| r.get("path").and_then(Value::as_str))
        .and_then(|path| read_transcript(dir, path));
    CaseRow {
        name: if name.is_empty() { id.clone() } else { name },
        id,
        variant,
        trial,
        status,
        summary,
        duration_ms,
        cost_usd,
        score,
        tags,
        assertions,
        fields,
        snapshot_diff: lifted.remove("snapshotDiff").filter(|d| !d.is_null()),
        transcript,
    }
}

fn read_transcript(dir: &Path, relative: &str) -> Option<Transcript> {
    let path = safe_join(dir, relative)?;
    if !contained_file(dir, &path) {
        return None;
    }
    let file = File::open(&path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut bytes = Vec::new();
    file.take(TRANSCRIPT_BYTES).read_to_end(&mut bytes).ok()?;
    Some(Transcript {
        path: relative.to_string(),
        text: String::from_utf8_lossy(&bytes).into_owned(),
        truncated: size.saturating_sub(bytes.len() as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_record_linking_outside_the_run_is_not_read() {
        let run = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "key").unwrap();
        std::fs::create_dir(run.path().join("transcripts")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret"),
            run.path().join("transcripts/t.jsonl"),
        )
        .unwrap();
        std::fs::write(run.path().join("transcripts/ok.jsonl"), "{}").unwrap();
        assert!(read_transcript(run.path(), "transcripts/t.jsonl").is_none());
        assert_eq!(
            read_transcript(run.path(), "transcripts/ok.jsonl")
                .unwrap()
                .text,
            "{}"
        );
    }

    #[test]
    fn safe_join_stays_inside_the_run() {
        let dir = Path::new("/runs/r1");
        assert_eq!(
            safe_join(dir, "variants/a/trial-1"),
            Some(dir.join("variants/a/trial-1"))
        );
        assert_eq!(safe_join(dir, "../other"), None);
        assert_eq!(safe_join(dir, "/etc/passwd"), None);
        assert_eq!(safe_join(dir, "a/../../b"), None);
    }

    #[test]
    fn a_case_row_lifts_the_shared_fields_and_keeps_the_rest() {
        let evaluation = serde_json::json!({
            "caseId": "c1", "status": "failed", "summary": "wrong",
            "durationMs": 12, "costUsd": 0.5, "assertionScore": 0.25,
            "assertions": [{"name": "contains", "status": "failed", "passed": false, "detail": "no"}],
            "observed": {"finalText": "hi"}, "expected": {"finalText": "bye"},
            "provider": "openai", "model": "m", "harness": "h",
        });
        let row = case_row(evaluation, Path::new("."), None, None, None);
        assert_eq!(row.name, "c1");
        assert_eq!(row.status, "failed");
        assert_eq!(row.duration_ms, Some(12.0));
        assert_eq!(row.cost_usd, Some(0.5));
        assert_eq!(row.score, Some(0.25));
        assert_eq!(row.assertions[0].detail.as_deref(), Some("no"));
        assert!(row.fields.contains_key("observed"));
        assert!(!row.fields.contains_key("caseId"));
    }
}
