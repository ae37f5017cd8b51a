//! What every report shows, read from a run's records: a plain run's
//! directory (`run.json` + `eval-summary.json`) or an experiment's
//! (`experiment.json`, whose cells name the group directory holding each
//! cell's full evaluation).
//!
//! The model knows the packet fields every preset's evaluations share
//! (`caseId`, `status`, `summary`, `assertions`, `snapshotDiff`,
//! `artifactRefs`, …); the rest of an evaluation (what was asked, what came
//! back, what was expected) is carried as it is, for the HTML report to
//! show.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ReportError;

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

/// A run or an experiment, ready to render.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub header: Header,
    pub cases: Vec<CaseRow>,
    /// Per variant (experiments): name, baseline flag and aggregates.
    pub variants: Vec<Variant>,
    /// Each candidate against the baseline, as the experiment recorded it.
    pub comparison: Vec<Value>,
    pub gates: Vec<Gate>,
    /// Cases the fixture skipped: `{caseId, reason}`.
    pub skipped: Vec<Value>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// `run` or `experiment`.
    pub kind: &'static str,
    pub suite_id: String,
    pub title: String,
    pub surface: String,
    pub preset: String,
    pub fixture_ref: String,
    /// Distinct `provider / model / harness` of the cases.
    pub targets: Vec<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Total of the cases' costs, when any reported one.
    pub cost_usd: Option<f64>,
    /// A plain run's recommendation.
    pub recommendation: Option<String>,
    /// An experiment's verdict (its gates).
    pub passed: Option<bool>,
    /// Cases (cells) per status, and `total`.
    pub counts: BTreeMap<String, u64>,
    /// `completed`, or how the run ended early.
    pub status: String,
    pub records: String,
}

/// One case (one cell of an experiment).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRow {
    pub id: String,
    pub name: String,
    pub variant: Option<String>,
    pub trial: Option<u32>,
    pub status: String,
    pub summary: String,
    pub duration_ms: Option<f64>,
    pub cost_usd: Option<f64>,
    /// The weighted assertion score in [0, 1], when the case has one.
    pub score: Option<f64>,
    pub tags: Vec<String>,
    pub assertions: Vec<Assertion>,
    /// The evaluation's other members (observed, expected, provider, …).
    pub fields: Map<String, Value>,
    pub snapshot_diff: Option<Value>,
    pub transcript: Option<Transcript>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Assertion {
    pub name: String,
    pub status: String,
    pub passed: Option<bool>,
    pub score: Option<f64>,
    pub required: Option<bool>,
    pub detail: Option<String>,
    pub label: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    pub path: String,
    pub text: String,
    /// Bytes left out (the report shows the first 256 KiB).
    pub truncated: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    pub name: String,
    pub baseline: bool,
    pub aggregate: Value,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Gate {
    pub variant: String,
    pub gate: String,
    pub value: Option<f64>,
    pub threshold: Option<f64>,
    pub passed: bool,
    pub informational: bool,
    pub message: String,
}

impl CaseRow {
    /// Passed, or failed/errored/… with the reason.
    pub fn passed(&self) -> bool {
        self.status == "passed"
    }

    /// `id` or `id [variant, trial n]` for a cell.
    pub fn label(&self) -> String {
        match (&self.variant, self.trial) {
            (Some(v), Some(t)) => format!("{} [{v}, trial {t}]", self.id),
            (Some(v), None) => format!("{} [{v}]", self.id),
            _ => self.id.clone(),
        }
    }
}

/// Reads the report of `path`: a run directory, an experiment's directory,
/// or its `experiment.json` / `eval-summary.json`.
pub fn load(path: &Path) -> Result<Report, ReportError> {
    let (dir, file) = if path.is_dir() {
        let experiment = path.join("experiment.json");
        if experiment.is_file() {
            (path.to_path_buf(), experiment)
        } else {
            (path.to_path_buf(), path.join("eval-summary.json"))
        }
    } else {
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        (dir, path.to_path_buf())
    };
    if !file.is_file() {
        return Err(ReportError::Read {
            path: path.to_path_buf(),
            message: "not a run directory: it has neither experiment.json nor eval-summary.json; pass the directory `cautilus eval test` printed after `records:`".into(),
        });
    }
    let root = read_json(&file)?;
    if root.get("schemaVersion").and_then(Value::as_str) == Some("cautilus.experiment.v1") {
        experiment(&dir, root)
    } else {
        plain(&dir, &file, root)
    }
}

fn read_json(path: &Path) -> Result<Value, ReportError> {
    let file = File::open(path).map_err(|e| ReportError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    serde_json::from_reader(BufReader::new(file)).map_err(|e| ReportError::Read {
        path: path.to_path_buf(),
        message: format!("not valid JSON ({e}); was the run interrupted while writing it?"),
    })
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn plain(dir: &Path, file: &Path, mut root: Value) -> Result<Report, ReportError> {
    let Some(Value::Array(evaluations)) = root.get_mut("evaluations").map(Value::take) else {
        return Err(ReportError::Read {
            path: file.to_path_buf(),
            message: "has no `evaluations` array: it is not an evaluation summary".into(),
        });
    };
    let run = read_json(&dir.join("run.json")).ok();
    let cases: Vec<CaseRow> = evaluations
        .into_iter()
        .map(|e| case_row(e, dir, None, None, None))
        .collect();
    let mut header = header_of(&root, "run", dir, &cases);
    header.recommendation = root
        .get("recommendation")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(run) = &run {
        header.started_at = run.get("startedAt").and_then(Value::as_str).map(Into::into);
        header.finished_at = run.get("endedAt").and_then(Value::as_str).map(Into::into);
        header.status = text(run, "status");
    }
    if root.get("interrupted").is_some() {
        header.status = "interrupted".into();
    }
    Ok(Report {
        header,
        cases,
        variants: Vec::new(),
        comparison: Vec::new(),
        gates: Vec::new(),
        skipped: Vec::new(),
    })
}

fn experiment(dir: &Path, mut root: Value) -> Result<Report, ReportError> {
    let cells = match root.get_mut("cells").map(Value::take) {
        Some(Value::Array(cells)) => cells,
        _ => Vec::new(),
    };
    // Each group's evaluations, by case id, read once.
    let mut groups: HashMap<String, HashMap<String, Value>> = HashMap::new();
    let mut cases = Vec::with_capacity(cells.len());
    for cell in cells {
        let group = text(&cell, "record");
        if !groups.contains_key(&group) {
            let evaluations = group_evaluations(dir, &group);
            groups.insert(group.clone(), evaluations);
        }
        let id = text(&cell, "caseId");
        let full = groups.get_mut(&group).and_then(|g| g.remove(&id));
        let variant = Some(text(&cell, "variant"));
        let trial = cell
            .get("trial")
            .and_then(Value::as_u64)
            .and_then(|t| u32::try_from(t).ok());
        let group_dir = safe_join(dir, &group);
        let row = match full {
            Some(evaluation) => case_row(
                evaluation,
                group_dir.as_deref().unwrap_or(dir),
                variant,
                trial,
                Some(&cell),
            ),
            None => case_row(cell, dir, variant, trial, None),
        };
        cases.push(row);
    }
    let mut header = header_of(&root, "experiment", dir, &cases);
    header.passed = root.get("passed").and_then(Value::as_bool);
    header.started_at = root
        .get("startedAt")
        .and_then(Value::as_str)
        .map(Into::into);
    header.finished_at = root
        .get("finishedAt")
        .and_then(Value::as_str)
        .map(Into::into);
    header.status = text(&root, "status");
    let baseline = text(&root, "baseline");
    let variants = match root.get_mut("aggregates").map(Value::take) {
        Some(Value::Object(aggregates)) => aggregates
            .into_iter()
            .map(|(name, aggregate)| Variant {
                baseline: name == baseline,
                name,
                aggregate,
            })
            .collect(),
        _ => Vec::new(),
    };
    let array = |root: &mut Value, key: &str| match root.get_mut(key).map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let comparison = array(&mut root, "comparison");
    let gates = array(&mut root, "gates")
        .into_iter()
        .filter_map(|g| serde_json::from_value(g).ok())
        .collect();
    let skipped = array(&mut root, "skipped");
    Ok(Report {
        header,
        cases,
        variants,
        comparison,
        gates,
        skipped,
    })
}

/// The evaluations of one group directory by case id (empty when the
/// group's records are not beside the experiment, e.g. a merged one).
fn group_evaluations(dir: &Path, group: &str) -> HashMap<String, Value> {
    let Some(group_dir) = safe_join(dir, group) else {
        return HashMap::new();
    };
    if !contained_file(dir, &group_dir.join("eval-summary.json")) {
        return HashMap::new();
    }
    let Ok(Value::Object(mut summary)) = read_json(&group_dir.join("eval-summary.json")) else {
        return HashMap::new();
    };
    match summary.remove("evaluations") {
        Some(Value::Array(evaluations)) => evaluations
            .into_iter()
            .map(|e| (text(&e, "caseId"), e))
            .collect(),
        _ => HashMap::new(),
    }
}

/// `dir/relative` when `relative` stays inside `dir` (records may come
/// from anywhere; a report never reads outside its run).
fn safe_join(dir: &Path, relative: &str) -> Option<PathBuf> {
    let path = Path::new(relative);
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| dir.join(path))
}

/// Whether `path` is a regular file that, symlinks resolved, is still
/// inside `dir` (a downloaded run directory must not make a report read
/// `~/.ssh/…`, nor hang on a FIFO).
fn contained_file(dir: &Path, path: &Path) -> bool {
    let (Ok(root), Ok(real)) = (std::fs::canonicalize(dir), std::fs::canonicalize(path)) else {
        return false;
    };
    real.starts_with(&root) && std::fs::metadata(&real).is_ok_and(|m| m.is_file())
}

fn header_of(root: &Value, kind: &'static str, dir: &Path, cases: &[CaseRow]) -> Header {
    let mut counts = BTreeMap::new();
    let mut targets: Vec<String> = Vec::new();
    let mut cost = None;
    for case in cases {
        *counts.entry(case.status.clone()).or_insert(0) += 1;
        let part = |k: &str| case.fields.get(k).and_then(Value::as_str).unwrap_or("?");
        if case.fields.contains_key("provider") {
            let target = format!(
                "{} / {} / {}",
                part("provider"),
                part("model"),
                part("harness")
            );
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
        if let Some(c) = case.cost_usd {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
    }
    counts.insert("total".into(), cases.len() as u64);
    let title = text(root, "suiteDisplayName");
    Header {
        kind,
        suite_id: text(root, "suiteId"),
        title: if title.is_empty() {
            text(root, "suiteId")
        } else {
            title
        },
        surface: text(root, "surface"),
        preset: text(root, "preset"),
        fixture_ref: text(root, "fixtureRef"),
        targets,
        cost_usd: cost,
        counts,
        records: dir.display().to_string(),
        ..Header::default()
    }
}

/// One evaluation (or, without its group's records, the cell alone) as a
/// row; `cell` adds what only the experiment knows (tags, the output).
fn case_row(
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
            status: "errored".into(),
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
    let mut take_text = |k: &str| match lifted.remove(k) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let id = take_text("caseId");
    let name = take_text("displayName");
    let status = take_text("status");
    let summary = take_text("summary");
    let number = |k: &str| lifted.get(k).and_then(Value::as_f64);
    let cost_usd = number("costUsd").or_else(|| cell.and_then(|c| c["costUsd"].as_f64()));
    let duration_ms = number("durationMs");
    let score = number("assertionScore");
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
    let assertions = match lifted.remove("assertions") {
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|a| serde_json::from_value(a).unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    };
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
        let header = header_of(
            &serde_json::json!({"suiteId": "s"}),
            "run",
            Path::new("."),
            &[row],
        );
        assert_eq!(header.title, "s");
        assert_eq!(header.targets, vec!["openai / m / h".to_string()]);
        assert_eq!(header.counts["failed"], 1);
        assert_eq!(header.cost_usd, Some(0.5));
    }
}
