//! Committed baselines: `cautilus eval promote <run>` writes
//! `<records root>/baselines/<suiteId>.json` (`cautilus.baseline.v1`), the
//! cells of one variant of a finished, unfiltered run. Commit it: later
//! runs of the suite compare every variant with it, cell by cell (paired
//! by case and trial), when the suite declares no baseline variant of its
//! own. A baseline promoted from a suite whose cases or scoring have
//! changed since (its fingerprints differ) is still compared, but the
//! comparison is informational: its delta gates never block.
//!
//! The file name is made from the suite id by [`crate::file_names::stem`]
//! (bounded, and distinct per id, even ignoring case), and the file records
//! its `suiteId`: a baseline whose `suiteId` is not the suite's is refused,
//! naming both (another suite's file, copied or colliding). A suite whose
//! id earlier versions named otherwise (sanitized, unbounded: `a/b` and
//! `a_b` shared `a_b.json`) still finds its baseline under that legacy
//! name, only when the file there records its `suiteId`; `promote` writes
//! the new name.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::aggregate::CellFacts;
use super::plan::Spec;
use crate::eval::files;
use crate::eval::{EvalError, records::journal, records::run_state, verdict::tally};
use crate::fixture::Suite;
use crate::schema::experiment::{BaselineCell, BaselineRecord, Fingerprints};

pub const SCHEMA: &str = "cautilus.baseline.v1";

/// The largest baseline read (a million cases' cells fit well within it).
const MAX_RECORD_BYTES: u64 = 1 << 30;

/// Where the baseline of `suite_id` lives under the records root.
pub fn path(records_root: &Path, suite_id: &str) -> PathBuf {
    let name = crate::file_names::stem(suite_id);
    records_root.join("baselines").join(format!("{name}.json"))
}

/// Where earlier versions wrote it, when that differs.
fn legacy_path(records_root: &Path, suite_id: &str) -> Option<PathBuf> {
    let name = crate::file_names::legacy(suite_id, '_', false);
    // A name no file system holds (past 255 bytes) names no file.
    if name.len() + ".json".len() > 255 {
        return None;
    }
    let legacy = records_root.join("baselines").join(format!("{name}.json"));
    (legacy != path(records_root, suite_id)).then_some(legacy)
}

/// A committed baseline, as a run compares with it.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub path: PathBuf,
    /// The suite it was promoted from.
    pub suite_id: String,
    pub variant: String,
    pub promoted_at: String,
    pub config: String,
    pub task: String,
    pub cells: Vec<CellFacts>,
}

/// (`config`, `task`) fingerprints of a suite: how its cells are scored
/// (suite-level assertions, judge, gates, trials) and what they are (every
/// case as written). A variant's model or prompt is in neither: comparing
/// those is the point of a baseline.
pub fn fingerprints(suite: &Suite, spec: &Spec) -> Result<(String, String), EvalError> {
    let mut config = Sha256::new();
    for key in ["assertions", "judge"] {
        config.update(key);
        config.update(
            suite
                .body
                .get(key)
                .map(Value::to_string)
                .unwrap_or_default(),
        );
    }
    config.update(format!("{:?}|{:?}", spec.gates, spec.trials));
    let mut task = Sha256::new();
    for case in suite.cases.open() {
        // Where a case was read from is the checkout's, not the case's.
        let case = case?.case;
        task.update(case.to_string());
        task.update(b"\n");
    }
    Ok((hex::encode(config.finalize()), hex::encode(task.finalize())))
}

fn input_error(path: &Path, message: impl Into<String>) -> EvalError {
    EvalError::Input {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Reads the baseline of `suite_id`, if one was promoted: under its name,
/// else under its legacy name when the file there is this suite's.
pub fn read(records_root: &Path, suite_id: &str) -> Result<Option<Baseline>, EvalError> {
    if let Some(baseline) = read_file(&path(records_root, suite_id), suite_id)? {
        return Ok(Some(baseline));
    }
    let Some(legacy) = legacy_path(records_root, suite_id) else {
        return Ok(None);
    };
    match read_any(&legacy) {
        Ok(Some(baseline)) if baseline.suite_id == suite_id => Ok(Some(baseline)),
        // Another suite's (the legacy names collided), or none.
        Ok(_) => Ok(None),
        Err(error) => {
            crate::term_eprintln!("warning: not read as the baseline of `{suite_id}`: {error}");
            Ok(None)
        }
    }
}

/// Reads the baseline record at `path`, if there is one, refusing one
/// promoted from another suite than `suite_id`.
pub fn read_file(path: &Path, suite_id: &str) -> Result<Option<Baseline>, EvalError> {
    let Some(baseline) = read_any(path)? else {
        return Ok(None);
    };
    if baseline.suite_id != suite_id {
        let recorded = if baseline.suite_id.is_empty() {
            "records no `suiteId`".to_string()
        } else {
            format!("is the baseline of suite `{}`", baseline.suite_id)
        };
        return Err(input_error(
            path,
            format!(
                "{recorded}, not of suite `{suite_id}`, whose baseline this file would be: it was copied or named for another suite, and comparing with it would compare two suites; promote a run of `{suite_id}` with `cautilus eval promote <run-dir>` (or remove the file)"
            ),
        ));
    }
    Ok(Some(baseline))
}

/// Reads the baseline record at `path`, if there is one, whatever its suite.
fn read_any(path: &Path) -> Result<Option<Baseline>, EvalError> {
    let path = path.to_path_buf();
    let text = match crate::regular_file::read_to_string(&path, MAX_RECORD_BYTES) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(e) => return Err(input_error(&path, format!("cannot read the baseline: {e}"))),
    };
    let broken = |what: &str| {
        input_error(
            &path,
            format!(
                "not a {SCHEMA} record ({what}); promote the baseline again with `cautilus eval promote <run-dir>`"
            ),
        )
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| broken(&e.to_string()))?;
    if value["schemaVersion"] != SCHEMA {
        return Err(broken("schemaVersion"));
    }
    let text_of = |key: &str| value[key].as_str().unwrap_or_default().to_string();
    let cells = value["cells"]
        .as_array()
        .ok_or_else(|| broken("cells"))?
        .iter()
        .map(|cell| CellFacts::from_record_cell(cell).ok_or_else(|| broken("a cell")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(Baseline {
        suite_id: text_of("suiteId"),
        variant: text_of("variant"),
        promoted_at: text_of("promotedAt"),
        config: value["fingerprints"]["config"]
            .as_str()
            .unwrap_or_default()
            .into(),
        task: value["fingerprints"]["task"]
            .as_str()
            .unwrap_or_default()
            .into(),
        cells,
        path,
    }))
}

fn cell_record(cell: &CellFacts) -> BaselineCell {
    BaselineCell {
        case_id: cell.case_id.clone(),
        trial: cell.trial,
        status: cell.status.clone(),
        recommendation: cell.recommendation.clone(),
        scores: cell.scores.iter().cloned().collect(),
        duration_ms: cell.duration_ms,
        cost_usd: cell.cost_usd,
    }
}

/// What `promote` wrote.
#[derive(Debug)]
pub struct Promoted {
    pub path: PathBuf,
    pub suite_id: String,
    pub variant: String,
    pub cells: usize,
}

/// Promotes `variant` (default: the run's baseline variant, else its only
/// one) of the finished, unfiltered run in `run_dir`.
pub fn promote(
    run_dir: &Path,
    variant: Option<&str>,
    records_root: &Path,
) -> Result<Promoted, EvalError> {
    let record_path = run_dir.join(super::outcome::FILE);
    let (suite_id, variant, cells, fingerprints) = if record_path.exists() {
        from_experiment(&record_path, variant)?
    } else {
        from_plain_run(run_dir, variant)?
    };
    let path = path(records_root, &suite_id);
    let baseline = BaselineRecord {
        schema_version: SCHEMA.into(),
        suite_id: suite_id.clone(),
        variant: variant.clone(),
        promoted_at: files::now_rfc3339(),
        from_run: run_dir.to_string_lossy().into_owned(),
        fingerprints: Fingerprints {
            config: fingerprints.0,
            task: fingerprints.1,
        },
        cells: cells.iter().map(cell_record).collect(),
    };
    files::write_json(&path, &serde_json::to_value(&baseline).unwrap_or_default())?;
    Ok(Promoted {
        path,
        suite_id,
        variant,
        cells: cells.len(),
    })
}

type Promotable = (String, String, Vec<CellFacts>, (String, String));

fn from_experiment(record_path: &Path, variant: Option<&str>) -> Result<Promotable, EvalError> {
    let text = std::fs::read_to_string(record_path)
        .map_err(|e| input_error(record_path, format!("cannot read: {e}")))?;
    let record: Value = serde_json::from_str(&text)
        .map_err(|e| input_error(record_path, format!("not an experiment record: {e}")))?;
    if record["status"] != "completed" {
        return Err(input_error(
            record_path,
            "the run was interrupted; only a completed run can be promoted (resume or rerun it)",
        ));
    }
    if record["filtered"] == true {
        return Err(input_error(
            record_path,
            "the run was filtered (--case, --variant, --tag or `only`), so it holds only part of the suite; promote an unfiltered run",
        ));
    }
    let names: Vec<&str> = record["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    let chosen = match variant {
        Some(name) if names.contains(&name) => name.to_string(),
        Some(name) => {
            return Err(input_error(
                record_path,
                format!(
                    "the run has no variant `{name}`; variants: {}",
                    names.join(", ")
                ),
            ));
        }
        None => match (record["baseline"].as_str(), names.as_slice()) {
            (Some(baseline), _) => baseline.to_string(),
            (None, [only]) => (*only).to_string(),
            (None, _) => {
                return Err(input_error(
                    record_path,
                    format!(
                        "the run has several variants; say which with --variant ({})",
                        names.join(", ")
                    ),
                ));
            }
        },
    };
    let cells = record["cells"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["variant"] == chosen.as_str())
        .filter_map(CellFacts::from_record_cell)
        .collect();
    let fingerprint = |k: &str| {
        record["fingerprints"][k]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    Ok((
        record["suiteId"].as_str().unwrap_or_default().to_string(),
        chosen,
        cells,
        (fingerprint("config"), fingerprint("task")),
    ))
}

/// A plain run (one variant, one trial, no record of its own): its cells
/// from the journal, its fingerprints from the fixture it ran.
fn from_plain_run(run_dir: &Path, variant: Option<&str>) -> Result<Promotable, EvalError> {
    let state = run_state::RunState::read(run_dir)?;
    if state.status != run_state::RunStatus::Completed {
        return Err(input_error(
            &run_dir.join(run_state::FILE),
            "the run did not complete; only a completed run can be promoted (resume or rerun it)",
        ));
    }
    if let Some(name) = variant.filter(|v| *v != super::plan::DEFAULT_VARIANT) {
        return Err(input_error(
            run_dir,
            format!("the run has one variant, `default`; there is no `{name}`"),
        ));
    }
    let mut suite = match crate::fixture::load_fixture_within(
        &state.options.fixture,
        state.options.path_root.as_deref(),
    )? {
        crate::fixture::Fixture::Suite(suite) => suite,
        crate::fixture::Fixture::Steps(..) => {
            return Err(input_error(
                &state.options.fixture,
                "a steps fixture has no baseline; promote a run of one suite",
            ));
        }
    };
    let spec = super::plan::take_spec(&mut suite)?;
    let fingerprints = fingerprints(&suite, &spec)?;
    let mut journal = journal::Journal::load(&run_dir.join(journal::FILE), state.total_cases)?;
    let mut cells = Vec::new();
    for index in 0..state.total_cases {
        if !journal.contains(index) {
            continue;
        }
        let verdict = journal.read(index)?.verdict;
        let evaluation: Value = serde_json::from_str(&verdict.body).unwrap_or(Value::Null);
        cells.push(CellFacts::from_evaluation(
            &evaluation,
            1,
            tally::status_name(verdict.status),
            tally::recommendation_name(verdict.recommendation),
        ));
    }
    Ok((
        suite.suite_id.clone(),
        super::plan::DEFAULT_VARIANT.to_string(),
        cells,
        fingerprints,
    ))
}
