//! `cautilus.evidence_comparison.v1`: two runs compared, or two variants
//! of one experiment (the same run on both sides, a variant each).
//!
//! - **Cases** are keyed by case id, and by variant when neither side
//!   names one and a side has several (two experiments of the same
//!   variants). A case's verdict
//!   on a side is `passed` when every trial passed, else the worst status
//!   of its trials (`errored` > `failed`/`blocked` > `degraded` >
//!   `unchecked`), as `eval compare` reads it. Cases whose verdict changed
//!   come first (`regressed`: passed before and not after; `fixed`: the
//!   reverse; `changed`: another change), then cases whose verdict held
//!   but whose score moved (largest move first), then cases on one side
//!   only.
//! - **Scores**: per assertion name, the mean score on each side and the
//!   delta (B − A); per case, the mean of its cells' scores (a cell's score
//!   being the plain mean of its assertions', as in [`super::summary`]).
//! - **Cost and latency**: each side's [`Stats`] and their deltas.
//! - **Who answered**: each side's distinct provider / model / harness.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::summary::{CellStat, Mean, Stats, plain_mean, stats};
use super::{COMPARISON, EvidenceError, Records};
use crate::quality::stats::mean_sem;
use crate::report::Report;
use crate::report::model::CaseRow;

/// Two runs (or variants) compared.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub schema_version: String,
    pub a: Side,
    pub b: Side,
    /// Both sides are runs of one suite.
    pub same_suite: bool,
    /// Cases whose verdict changed: regressed, then fixed, then changed.
    pub changed: Vec<CaseChange>,
    /// Cases whose verdict held and whose score moved, largest move first.
    pub score_moved: Vec<CaseChange>,
    /// Cases on side B only.
    pub added: Vec<CaseChange>,
    /// Cases on side A only.
    pub removed: Vec<CaseChange>,
    pub regressed: usize,
    pub fixed: usize,
    /// Cases with the same verdict and score on both sides.
    pub unchanged: usize,
    /// Per assertion name: each side's mean score and the delta (B − A).
    pub assertions: Vec<AssertionDelta>,
    pub pass_rate: Delta,
    pub mean_score: Delta,
    pub cost_usd: Delta,
    pub mean_latency_ms: Delta,
    pub p95_latency_ms: Delta,
}

/// One side.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Side {
    pub run: String,
    pub variant: Option<String>,
    pub suite_id: String,
    pub started_at: Option<String>,
    /// Distinct provider / model / harness of its cells.
    pub targets: Vec<Target>,
    pub stats: Stats,
}

/// Who answered.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub harness: Option<String>,
}

/// A number on both sides.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// B − A, when both are known.
    pub delta: Option<f64>,
}

impl Delta {
    pub fn of(a: Option<f64>, b: Option<f64>) -> Self {
        let delta = a.zip(b).map(|(a, b)| b - a);
        Self { a, b, delta }
    }
}

/// One assertion's scores on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssertionDelta {
    pub name: String,
    pub a: Option<Mean>,
    pub b: Option<Mean>,
    pub delta: Option<f64>,
}

/// One case on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaseChange {
    pub case_id: String,
    pub variant: Option<String>,
    /// `regressed`, `fixed`, `changed`, `score`, `added`, `removed`.
    pub change: String,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Trials passed, `passed/total`.
    pub before_passed: Option<String>,
    pub after_passed: Option<String>,
    pub score: Delta,
}

/// What the comparison needs of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub variant: String,
    pub case_id: String,
    pub status: String,
    /// `(assertion name, score)` in ledger order.
    pub scores: Vec<(String, Option<f64>)>,
}

impl Cell {
    fn of_row(row: &CaseRow, keyed_by_variant: bool) -> Self {
        Self {
            variant: if keyed_by_variant {
                row.variant.clone().unwrap_or_default()
            } else {
                String::new()
            },
            case_id: row.id.clone(),
            status: row.status.clone(),
            scores: row
                .assertions
                .iter()
                .map(|a| (a.name.clone(), a.score))
                .collect(),
        }
    }

    fn score(&self) -> Option<f64> {
        let scores: Vec<f64> = self.scores.iter().filter_map(|(_, s)| *s).collect();
        plain_mean(&scores)
    }
}

/// A case's verdict over its trials (see the module docs).
pub fn verdict(statuses: &[&str]) -> String {
    let rank = |s: &str| match s {
        "passed" => 0,
        "unchecked" => 1,
        "degraded" => 2,
        "errored" => 4,
        _ => 3,
    };
    statuses
        .iter()
        .max_by_key(|s| rank(s))
        .map(|s| s.to_string())
        .unwrap_or_default()
}

/// Compares run `a` (its variant `variant_a`, when given) with run `b`.
/// Cases are keyed by variant too when no variant is named and a side has
/// several (two experiments of the same variants); otherwise by case id
/// alone, so a plain run and a one-variant experiment of the same suite
/// (a run compared with a promoted baseline, a selection) line up.
pub fn compare_runs(
    records: &Records,
    a: &str,
    variant_a: Option<&str>,
    b: &str,
    variant_b: Option<&str>,
) -> Result<Comparison, EvidenceError> {
    let (side_a, report_a, several_a) = side(records, a, variant_a)?;
    let (side_b, report_b, several_b) = side(records, b, variant_b)?;
    let keyed = variant_a.is_none() && variant_b.is_none() && (several_a || several_b);
    let cells = |report: &Report, variant: Option<&str>| -> Vec<Cell> {
        rows_of(report, variant)
            .map(|r| Cell::of_row(r, keyed))
            .collect()
    };
    Ok(compare_cells(
        side_a,
        &cells(&report_a, variant_a),
        side_b,
        &cells(&report_b, variant_b),
    ))
}

/// A run's rows of `variant` (all when none is given).
fn rows_of<'a>(report: &'a Report, variant: Option<&'a str>) -> impl Iterator<Item = &'a CaseRow> {
    report
        .cases
        .iter()
        .filter(move |r| variant.is_none_or(|v| r.variant.as_deref() == Some(v)))
}

/// One side: its summary, its run read whole (its rows of `variant`, when
/// given, are the side's) and whether the run has several variants.
fn side(
    records: &Records,
    id: &str,
    variant: Option<&str>,
) -> Result<(Side, Arc<Report>, bool), EvidenceError> {
    let run = records.resolve(id)?;
    let report = records.report(&run)?;
    let several = report.variants.len() > 1;
    let rows: Vec<&CaseRow> = rows_of(&report, variant).collect();
    if let Some(v) = variant
        && rows.is_empty()
    {
        let known: Vec<&str> = report.variants.iter().map(|v| v.name.as_str()).collect();
        return Err(EvidenceError::Request(format!(
            "run `{}` has no cells of variant `{v}`; its variants are: {}",
            run.id,
            if known.is_empty() {
                "none (it is not an experiment with variants)".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    let mut targets: Vec<Target> = Vec::new();
    for row in &rows {
        let text = |k: &str| {
            row.fields
                .get(k)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let target = Target {
            provider: text("provider"),
            model: text("model"),
            harness: text("harness"),
        };
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    let stat: Vec<CellStat> = rows.iter().map(|r| CellStat::of_row(r)).collect();
    let side = Side {
        run: run.id.clone(),
        variant: variant.map(str::to_string),
        suite_id: report.header.suite_id.clone(),
        started_at: report.header.started_at.clone(),
        targets,
        stats: stats(&stat),
    };
    drop(rows);
    Ok((side, report, several))
}

type Key = (String, String);

/// Each case's cells, by (variant, case id), in first-seen order.
fn by_case(cells: &[Cell]) -> (Vec<Key>, BTreeMap<Key, Vec<&Cell>>) {
    let mut order = Vec::new();
    let mut map: BTreeMap<Key, Vec<&Cell>> = BTreeMap::new();
    for cell in cells {
        let key = (cell.variant.clone(), cell.case_id.clone());
        if !map.contains_key(&key) {
            order.push(key.clone());
        }
        map.entry(key).or_default().push(cell);
    }
    (order, map)
}

fn case_verdict(cells: &[&Cell]) -> (String, String, Option<f64>) {
    let statuses: Vec<&str> = cells.iter().map(|c| c.status.as_str()).collect();
    let passed = statuses.iter().filter(|s| **s == "passed").count();
    let scores: Vec<f64> = cells.iter().filter_map(|c| c.score()).collect();
    (
        verdict(&statuses),
        format!("{passed}/{}", statuses.len()),
        plain_mean(&scores),
    )
}

/// The comparison of two sides' cells (see the module docs).
pub fn compare_cells(a: Side, cells_a: &[Cell], b: Side, cells_b: &[Cell]) -> Comparison {
    let (order_a, map_a) = by_case(cells_a);
    let (order_b, map_b) = by_case(cells_b);
    let (mut changed, mut moved, mut added, mut removed) = (vec![], vec![], vec![], vec![]);
    let (mut regressed, mut fixed, mut unchanged) = (0, 0, 0);
    let entry = |key: &Key, change: &str| CaseChange {
        case_id: key.1.clone(),
        variant: (!key.0.is_empty()).then(|| key.0.clone()),
        change: change.into(),
        before: None,
        after: None,
        before_passed: None,
        after_passed: None,
        score: Delta::default(),
    };
    for key in &order_a {
        let (was, was_passed, was_score) = case_verdict(&map_a[key]);
        let Some(after) = map_b.get(key) else {
            removed.push(CaseChange {
                before: Some(was),
                before_passed: Some(was_passed),
                score: Delta::of(was_score, None),
                ..entry(key, "removed")
            });
            continue;
        };
        let (is, is_passed, is_score) = case_verdict(after);
        let score = Delta::of(was_score, is_score);
        let kind = match (was == "passed", is == "passed") {
            _ if was == is && was_passed == is_passed => {
                if score.delta.is_some_and(|d| d.abs() > 1e-9) {
                    "score"
                } else {
                    "unchanged"
                }
            }
            (true, false) => "regressed",
            (false, true) => "fixed",
            _ => "changed",
        };
        let line = CaseChange {
            before: Some(was),
            after: Some(is),
            before_passed: Some(was_passed),
            after_passed: Some(is_passed),
            score,
            ..entry(key, kind)
        };
        match kind {
            "unchanged" => unchanged += 1,
            "score" => moved.push(line),
            _ => {
                regressed += usize::from(kind == "regressed");
                fixed += usize::from(kind == "fixed");
                changed.push(line);
            }
        }
    }
    for key in &order_b {
        if !map_a.contains_key(key) {
            let (is, is_passed, is_score) = case_verdict(&map_b[key]);
            added.push(CaseChange {
                after: Some(is),
                after_passed: Some(is_passed),
                score: Delta::of(None, is_score),
                ..entry(key, "added")
            });
        }
    }
    let rank = |c: &CaseChange| match c.change.as_str() {
        "regressed" => 0,
        "fixed" => 1,
        _ => 2,
    };
    changed.sort_by_key(rank);
    let size = |c: &CaseChange| c.score.delta.map_or(0.0, f64::abs);
    moved.sort_by(|x, y| size(y).total_cmp(&size(x)));
    let mean = |s: &Stats| s.mean_score.map(|m| m.mean);
    Comparison {
        schema_version: COMPARISON.into(),
        same_suite: a.suite_id == b.suite_id,
        changed,
        score_moved: moved,
        added,
        removed,
        regressed,
        fixed,
        unchanged,
        assertions: assertion_deltas(cells_a, cells_b),
        pass_rate: Delta::of(a.stats.pass_rate, b.stats.pass_rate),
        mean_score: Delta::of(mean(&a.stats), mean(&b.stats)),
        cost_usd: Delta::of(a.stats.cost_usd, b.stats.cost_usd),
        mean_latency_ms: Delta::of(a.stats.mean_latency_ms, b.stats.mean_latency_ms),
        p95_latency_ms: Delta::of(a.stats.p95_latency_ms, b.stats.p95_latency_ms),
        a,
        b,
    }
}

/// Per assertion name (in first-seen order, A's then B's), each side's
/// mean score ± SEM and the delta.
fn assertion_deltas(cells_a: &[Cell], cells_b: &[Cell]) -> Vec<AssertionDelta> {
    let mut names: Vec<&str> = Vec::new();
    for cell in cells_a.iter().chain(cells_b) {
        for (name, _) in &cell.scores {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    let of = |cells: &[Cell], name: &str| {
        let values: Vec<f64> = cells
            .iter()
            .flat_map(|c| &c.scores)
            .filter(|(n, _)| n == name)
            .filter_map(|(_, s)| *s)
            .collect();
        mean_sem(&values).map(|m| Mean {
            n: m.n as u64,
            mean: m.mean,
            sem: m.sem,
        })
    };
    names
        .into_iter()
        .map(|name| {
            let (a, b) = (of(cells_a, name), of(cells_b, name));
            AssertionDelta {
                name: name.to_string(),
                delta: a.zip(b).map(|(a, b)| b.mean - a.mean),
                a,
                b,
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
