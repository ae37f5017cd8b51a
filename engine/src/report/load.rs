//! Reading a report from a run's records: a plain run's directory
//! (`run.json` + `eval-summary.json`) or an experiment's (`experiment.json`,
//! whose cells name the group directory holding each cell's full
//! evaluation).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::ReportError;
use super::case_rows::{case_row, contained_file, safe_join, target_of};
use super::model::{CaseRow, Header, Report, Variant};

/// Reads the report of `path`: a run directory, an experiment's directory,
/// or its `experiment.json` / `eval-summary.json`.
pub fn load(path: &Path) -> Result<Report, ReportError> {
    let (dir, file) = locate(path)?;
    let root = read_json(&file)?;
    if is_experiment(&root) {
        experiment(&dir, root)
    } else {
        plain(&dir, &file, root)
    }
}

/// The run directory of `path` and the record a report is read from
/// (`experiment.json` when there is one, else `eval-summary.json`).
pub(super) fn locate(path: &Path) -> Result<(PathBuf, PathBuf), ReportError> {
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
    Ok((dir, file))
}

/// Whether a record's root (its members) is an experiment's.
pub(super) fn is_experiment(root: &Value) -> bool {
    root.get("schemaVersion").and_then(Value::as_str) == Some("cautilus.experiment.v1")
}

/// The bytes of `path` (read whole: parsing from memory is several times
/// faster than through a reader).
pub(super) fn read_bytes(path: &Path) -> Result<Vec<u8>, ReportError> {
    std::fs::read(path).map_err(|e| ReportError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The error of a record that is not valid JSON.
fn invalid_json(path: &Path, e: &serde_json::Error) -> ReportError {
    ReportError::Read {
        path: path.to_path_buf(),
        message: format!("not valid JSON ({e}); was the run interrupted while writing it?"),
    }
}

pub(super) fn read_json(path: &Path) -> Result<Value, ReportError> {
    serde_json::from_slice(&read_bytes(path)?).map_err(|e| invalid_json(path, &e))
}

pub(super) fn text(value: &Value, key: &str) -> String {
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
    let cases: Vec<CaseRow> = evaluations
        .into_iter()
        .map(|e| case_row(e, dir, None, None, None))
        .collect();
    let header = plain_header(&root, dir, Tally::of_rows(&cases));
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
    let header = experiment_header(&root, dir, Tally::of_rows(&cases));
    let baseline = text(&root, "baseline");
    // What each variant changes, from the header's `variants` list.
    let mut overrides: Map<String, Value> = root
        .get("variants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| Some((v["name"].as_str()?.to_string(), v["overrides"].clone())))
        .collect();
    let variants = match root.get_mut("aggregates").map(Value::take) {
        Some(Value::Object(aggregates)) => aggregates
            .into_iter()
            .map(|(name, aggregate)| Variant {
                baseline: name == baseline,
                overrides: match overrides.remove(&name) {
                    Some(Value::Object(fields)) => fields,
                    _ => Map::new(),
                },
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
    let Some(file) = group_file(dir, group) else {
        return HashMap::new();
    };
    let Ok(Value::Object(mut summary)) = read_json(&file) else {
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

/// A plain run's header: of its summary's members `root` (the
/// evaluations aside), its cases' `tally` and its `run.json`.
pub(super) fn plain_header(root: &Value, dir: &Path, tally: Tally) -> Header {
    let mut header = header_of(root, "run", dir, tally);
    header.recommendation = root
        .get("recommendation")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Ok(run) = &read_json(&dir.join("run.json")) {
        header.started_at = run.get("startedAt").and_then(Value::as_str).map(Into::into);
        header.finished_at = run.get("endedAt").and_then(Value::as_str).map(Into::into);
        header.status = text(run, "status");
    }
    if root.get("interrupted").is_some() {
        header.status = "interrupted".into();
    }
    header
}

/// An experiment's header: of its members `root` (the cells aside) and
/// its cells' `tally`.
pub(super) fn experiment_header(root: &Value, dir: &Path, tally: Tally) -> Header {
    let mut header = header_of(root, "experiment", dir, tally);
    header.passed = root.get("passed").and_then(Value::as_bool);
    header.started_at = root
        .get("startedAt")
        .and_then(Value::as_str)
        .map(Into::into);
    header.finished_at = root
        .get("finishedAt")
        .and_then(Value::as_str)
        .map(Into::into);
    header.status = text(root, "status");
    header
}

/// What a header sums up of its cases: how many of each status, their
/// distinct targets in the order met, their total cost.
#[derive(Debug, Default)]
pub(super) struct Tally {
    counts: BTreeMap<String, u64>,
    targets: Vec<String>,
    cost: Option<f64>,
    cases: u64,
}

impl Tally {
    /// Counts one case.
    pub(super) fn add(&mut self, status: &str, target: Option<String>, cost: Option<f64>) {
        self.cases += 1;
        match self.counts.get_mut(status) {
            Some(n) => *n += 1,
            None => {
                self.counts.insert(status.to_string(), 1);
            }
        }
        if let Some(target) = target
            && !self.targets.contains(&target)
        {
            self.targets.push(target);
        }
        if let Some(c) = cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + c);
        }
    }

    fn of_rows(cases: &[CaseRow]) -> Self {
        let mut tally = Self::default();
        for case in cases {
            tally.add(
                &case.status,
                target_of(|k| case.fields.get(k)),
                case.cost_usd,
            );
        }
        tally
    }
}

/// The `eval-summary.json` of group directory `group` of the experiment
/// in `dir`, when it is a file inside `dir`.
pub(super) fn group_file(dir: &Path, group: &str) -> Option<PathBuf> {
    let file = safe_join(dir, group)?.join("eval-summary.json");
    contained_file(dir, &file).then_some(file)
}

fn header_of(root: &Value, kind: &'static str, dir: &Path, tally: Tally) -> Header {
    let mut counts = tally.counts;
    counts.insert("total".into(), tally.cases);
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
        targets: tally.targets,
        cost_usd: tally.cost,
        counts,
        records: dir.display().to_string(),
        ..Header::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_header_names_the_suite_and_sums_its_cases() {
        let row = case_row(
            serde_json::json!({
                "caseId": "c1", "status": "failed", "costUsd": 0.5,
                "provider": "openai", "model": "m", "harness": "h",
            }),
            Path::new("."),
            None,
            None,
            None,
        );
        let header = header_of(
            &serde_json::json!({"suiteId": "s"}),
            "run",
            Path::new("."),
            Tally::of_rows(&[row]),
        );
        assert_eq!(header.title, "s");
        assert_eq!(header.targets, vec!["openai / m / h".to_string()]);
        assert_eq!(header.counts["failed"], 1);
        assert_eq!(header.cost_usd, Some(0.5));
    }
}
