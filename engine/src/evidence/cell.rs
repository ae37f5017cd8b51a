//! `cautilus.cell_evidence.v1`: one case of a run (one cell of an
//! experiment: its variant and trial) with everything that says why it
//! ended as it did:
//!
//! - its verdict and summary, as recorded;
//! - the ordered assertion ledger: name, required, weight, status, score,
//!   the threshold its fixture set and the check sentence made of the two
//!   ([`super::checks`]), the scorer's detail, and where the assertion was
//!   written ([`super::source`], placed now);
//! - what was observed: an excerpt of the final text, tool calls, usage,
//!   cost, duration and time to first byte, and who answered;
//! - the promoted baseline's cell for the same case and trial, when the
//!   suite has one (`<records>/baselines/`), with the score deltas;
//! - the command that reruns this case alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::checks::{Check, floor};
use super::source::{Source, written};
use super::summary::plain_mean;
use super::{CELL_EVIDENCE, EvidenceError, Records};
use crate::report::model::CaseRow;

/// Characters of the final text carried (the records keep it whole).
pub const EXCERPT_CHARS: usize = 2_000;

/// One case's evidence.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CellEvidence {
    pub schema_version: String,
    pub run: String,
    pub suite_id: String,
    pub case_id: String,
    pub display_name: String,
    pub variant: Option<String>,
    pub trial: Option<u32>,
    /// `passed`, `failed`, `errored`, …
    pub status: String,
    pub summary: String,
    /// The weighted assertion score in [0, 1] the run recorded.
    pub score: Option<f64>,
    pub assertions: Vec<LedgerEntry>,
    pub observed: Observed,
    /// The promoted baseline's cell for this case and trial.
    pub baseline: Option<BaselineCell>,
    pub repro: Repro,
}

/// One assertion of the ledger.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    /// 0-based, in the order the case's assertions ran (its own, then
    /// the suite's).
    pub index: usize,
    pub name: String,
    /// `passed`, `failed`, `errored`, `uncaptured`, …
    pub status: String,
    pub required: Option<bool>,
    pub weight: Option<f64>,
    pub score: Option<f64>,
    /// The floor the fixture set (`threshold`), when it set one.
    pub threshold: Option<f64>,
    /// The score against the threshold, as a sentence.
    pub check: Option<Check>,
    /// What the scorer said.
    pub detail: Option<String>,
    /// The scorer's label (a judge's class).
    pub label: Option<String>,
    /// Where it was written, when the fixture still says so.
    pub source: Option<Source>,
}

/// What came back.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub harness: Option<String>,
    /// The first [`EXCERPT_CHARS`] characters of the final text.
    pub final_text: Option<String>,
    /// Characters of the whole final text.
    pub final_text_chars: Option<usize>,
    pub tool_calls: Vec<Value>,
    pub usage: Option<Value>,
    pub cost_usd: Option<f64>,
    pub duration_ms: Option<f64>,
    pub first_byte_ms: Option<f64>,
}

/// The promoted baseline's cell.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaselineCell {
    pub variant: String,
    pub promoted_at: String,
    pub trial: u32,
    pub status: String,
    pub recommendation: String,
    /// The plain mean of its assertion scores.
    pub score: Option<f64>,
    pub duration_ms: Option<f64>,
    pub cost_usd: Option<f64>,
    /// This cell's score minus the baseline's, per assertion both scored.
    pub score_deltas: BTreeMap<String, f64>,
    /// The verdict changed since the baseline.
    pub verdict_changed: bool,
}

/// How to rerun this case alone.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Repro {
    /// The command, quoted for a POSIX shell, run from the project root.
    pub command: String,
    pub argv: Vec<String>,
}

/// The evidence of case `case` (of `variant` and `trial`, when the run has
/// several cells of it) in run `run`.
pub fn cell_evidence(
    records: &Records,
    run: &str,
    case: &str,
    variant: Option<&str>,
    trial: Option<u32>,
) -> Result<CellEvidence, EvidenceError> {
    let run = records.resolve(run)?;
    let report = records.report(&run)?;
    let matching: Vec<&CaseRow> = report
        .cases
        .iter()
        .filter(|c| c.id == case)
        .filter(|c| variant.is_none_or(|v| c.variant.as_deref() == Some(v)))
        .filter(|c| trial.is_none_or(|t| c.trial == Some(t)))
        .collect();
    let row = match matching.as_slice() {
        [row] => *row,
        [] => {
            let mut known: Vec<&str> = report.cases.iter().map(|c| c.id.as_str()).collect();
            known.dedup();
            let shown = known.len().min(20);
            return Err(EvidenceError::UnknownCase {
                run: run.id,
                what: match (variant, trial) {
                    (None, None) => format!("`{case}`"),
                    _ => format!(
                        "`{case}` [variant {}, trial {}]",
                        variant.unwrap_or("any"),
                        trial.map_or("any".into(), |t| t.to_string())
                    ),
                },
                known: format!(
                    "{}{}",
                    known[..shown].join(", "),
                    if known.len() > shown { ", …" } else { "" }
                ),
            });
        }
        rows => {
            return Err(EvidenceError::Ambiguous {
                run: run.id,
                case: case.into(),
                count: rows.len(),
                cells: rows
                    .iter()
                    .map(|r| r.label())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    };
    let options = run_options(&run.dir);
    let fixture = options
        .as_ref()
        .and_then(|o| o["fixture"].as_str())
        .map(PathBuf::from);
    let written = fixture
        .as_deref()
        .and_then(|f| written(f, records.project_root(), &row.id))
        .filter(|w| w.len() == row.assertions.len());
    let assertions = row
        .assertions
        .iter()
        .enumerate()
        .map(|(index, a)| {
            let place = written.as_ref().map(|w| &w[index]);
            let threshold = place.and_then(|p| p.threshold);
            LedgerEntry {
                index,
                name: a.name.clone(),
                status: a.status.clone(),
                required: a.required,
                weight: a.weight,
                score: a.score,
                threshold,
                check: floor(a.score, threshold),
                detail: a.detail.clone(),
                label: a.label.clone(),
                source: place.map(|p| p.source.clone()),
            }
        })
        .collect();
    let baseline = baseline_cell(records, &report.header.suite_id, row);
    let repro = repro(
        records.project_root(),
        fixture.as_deref(),
        &report.header.fixture_ref,
        options.as_ref(),
        row,
        report.variants.len() > 1,
    );
    Ok(CellEvidence {
        schema_version: CELL_EVIDENCE.into(),
        run: run.id,
        suite_id: report.header.suite_id.clone(),
        case_id: row.id.clone(),
        display_name: row.name.clone(),
        variant: row.variant.clone(),
        trial: row.trial,
        status: row.status.clone(),
        summary: row.summary.clone(),
        score: row.score,
        assertions,
        observed: observed(row),
        baseline,
        repro,
    })
}

/// The options a run (or, for an experiment, its first group) recorded in
/// `run.json`.
fn run_options(dir: &Path) -> Option<Value> {
    fn find(dir: &Path, depth: usize) -> Option<PathBuf> {
        // Its own file, never a link to one elsewhere.
        let file = dir.join(crate::eval::records::run_state::FILE);
        if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
            return Some(file);
        }
        if depth == 0 {
            return None;
        }
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        dirs.iter().find_map(|d| find(d, depth - 1))
    }
    let file = find(dir, 3)?;
    let text = crate::regular_file::read_to_string(&file, 1 << 20).ok()??;
    let state: Value = serde_json::from_str(&text).ok()?;
    Some(state.get("options")?.clone())
}

pub(crate) fn observed(row: &CaseRow) -> Observed {
    let f = &row.fields;
    let text = |key: &str| f.get(key).and_then(Value::as_str).map(str::to_string);
    let observed = f.get("observed");
    let final_text = observed
        .and_then(|o| o.get("finalText"))
        .or_else(|| f.get("finalText"))
        .and_then(Value::as_str);
    let tool_calls = observed
        .and_then(|o| o.get("toolCalls"))
        .or_else(|| f.get("toolCalls"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Observed {
        provider: text("provider"),
        model: text("model"),
        harness: text("harness"),
        final_text: final_text.map(|t| t.chars().take(EXCERPT_CHARS).collect()),
        final_text_chars: final_text.map(|t| t.chars().count()),
        tool_calls,
        usage: f.get("usage").filter(|u| !u.is_null()).cloned(),
        cost_usd: row.cost_usd,
        duration_ms: row.duration_ms,
        first_byte_ms: f.get("firstByteMs").and_then(Value::as_f64),
    }
}

fn baseline_cell(records: &Records, suite_id: &str, row: &CaseRow) -> Option<BaselineCell> {
    let baseline = crate::quality::baseline::read(records.root(), suite_id).ok()??;
    let trial = row.trial.unwrap_or(1);
    let cell = baseline
        .cells
        .iter()
        .find(|c| c.case_id == row.id && c.trial == trial)?;
    let mut deltas = BTreeMap::new();
    for a in &row.assertions {
        let before = cell
            .scores
            .iter()
            .find(|(n, _)| *n == a.name)
            .map(|(_, s)| *s);
        if let (Some(now), Some(before)) = (a.score, before) {
            deltas.entry(a.name.clone()).or_insert(now - before);
        }
    }
    let scores: Vec<f64> = cell.scores.iter().map(|(_, s)| *s).collect();
    Some(BaselineCell {
        variant: baseline.variant.clone(),
        promoted_at: baseline.promoted_at.clone(),
        trial,
        status: cell.status.clone(),
        recommendation: cell.recommendation.clone(),
        score: plain_mean(&scores),
        duration_ms: cell.duration_ms,
        cost_usd: cell.cost_usd,
        score_deltas: deltas,
        verdict_changed: cell.status != row.status,
    })
}

/// `cautilus eval test` rerunning this case alone (its variant, when the
/// suite has several), with what the run recorded of its provider, replay
/// and canned results.
fn repro(
    project_root: &Path,
    fixture: Option<&Path>,
    fixture_ref: &str,
    options: Option<&Value>,
    row: &CaseRow,
    several_variants: bool,
) -> Repro {
    let shown = |path: &Path| {
        let root = std::fs::canonicalize(project_root).unwrap_or(project_root.to_path_buf());
        path.strip_prefix(&root)
            .or_else(|_| path.strip_prefix(project_root))
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let fixture = fixture.map_or_else(|| fixture_ref.to_string(), shown);
    let mut argv: Vec<String> = ["cautilus", "eval", "test", "--fixture"]
        .map(String::from)
        .into();
    argv.push(fixture);
    argv.extend(["--case".into(), row.id.clone()]);
    // A suite without variants runs as its one `default`: no flag.
    if let Some(variant) = row.variant.as_ref().filter(|_| several_variants) {
        argv.extend(["--variant".into(), variant.clone()]);
    }
    let option = |key: &str| options.and_then(|o| o.get(key)).and_then(Value::as_str);
    for (key, flag) in [
        ("provider", "--provider"),
        ("replay", "--replay"),
        ("cassette", "--cassette"),
    ] {
        if let Some(value) = option(key).filter(|v| !v.is_empty()) {
            argv.extend([flag.into(), value.into()]);
        }
    }
    if let Some(results) = option("fixtureResults") {
        argv.extend(["--fixture-results".into(), shown(Path::new(results))]);
    }
    Repro {
        command: argv.iter().map(|a| quoted(a)).collect::<Vec<_>>().join(" "),
        argv,
    }
}

/// `arg` as a POSIX shell reads it back.
fn quoted(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_for_a_shell() {
        assert_eq!(quoted("evals/a.fixture.json"), "evals/a.fixture.json");
        assert_eq!(quoted("two words"), "'two words'");
        assert_eq!(quoted("it's"), r"'it'\''s'");
        assert_eq!(quoted(""), "''");
        assert_eq!(quoted("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
