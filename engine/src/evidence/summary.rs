//! One run in a line of numbers ([`RunSummary`]), shared by the run list,
//! the run detail and the suite progress, and the statistics of a set of
//! cells ([`stats`]) that a run, a variant and a promoted baseline are all
//! summed up with, so their numbers compare:
//!
//! - pass rate: cells `passed` over all cells;
//! - mean score ± SEM: over the cells that have a score, a cell's score
//!   being the plain mean of its assertions' scores (a promoted baseline
//!   records scores by assertion, not the weighted case score, so the
//!   plain mean is what both sides have);
//! - cost: the sum of the cells' reported costs (absent when none did);
//! - latency: mean and p95 of the cells' `durationMs` (linear
//!   interpolation, as the experiment's aggregates compute it).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::RunRef;
use crate::quality::stats::{mean_sem, percentile};
use crate::report::model::CaseRow;
use crate::report::{CellOutline, Outline, Report};

/// A mean with its standard error and sample size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mean {
    pub n: u64,
    pub mean: f64,
    /// Absent below two values.
    pub sem: Option<f64>,
}

/// The statistics of a set of cells (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub cells: u64,
    pub pass_rate: Option<f64>,
    pub mean_score: Option<Mean>,
    pub cost_usd: Option<f64>,
    pub mean_latency_ms: Option<f64>,
    pub p95_latency_ms: Option<f64>,
}

/// What [`stats`] needs of one cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellStat {
    pub passed: bool,
    pub score: Option<f64>,
    pub duration_ms: Option<f64>,
    pub cost_usd: Option<f64>,
}

impl CellStat {
    /// A report's case row.
    pub fn of_row(row: &CaseRow) -> Self {
        let scores: Vec<f64> = row.assertions.iter().filter_map(|a| a.score).collect();
        Self {
            passed: row.passed(),
            score: plain_mean(&scores),
            duration_ms: row.duration_ms,
            cost_usd: row.cost_usd,
        }
    }

    /// A case of a run's outline (as [`CellStat::of_row`] reads its row).
    pub fn of_outline(cell: &CellOutline) -> Self {
        Self {
            passed: cell.status == "passed",
            score: plain_mean(&cell.scores),
            duration_ms: cell.duration_ms,
            cost_usd: cell.cost_usd,
        }
    }
}

/// The mean of `values`, `None` for none.
pub fn plain_mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The statistics of `cells`.
pub fn stats(cells: &[CellStat]) -> Stats {
    if cells.is_empty() {
        return Stats::default();
    }
    let passed = cells.iter().filter(|c| c.passed).count();
    let scores: Vec<f64> = cells.iter().filter_map(|c| c.score).collect();
    let mut durations: Vec<f64> = cells.iter().filter_map(|c| c.duration_ms).collect();
    durations.sort_by(f64::total_cmp);
    let costs: Vec<f64> = cells.iter().filter_map(|c| c.cost_usd).collect();
    Stats {
        cells: cells.len() as u64,
        pass_rate: Some(passed as f64 / cells.len() as f64),
        mean_score: mean_sem(&scores).map(|m| Mean {
            n: m.n as u64,
            mean: m.mean,
            sem: m.sem,
        }),
        cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
        mean_latency_ms: plain_mean(&durations),
        p95_latency_ms: percentile(&durations, 0.95),
    }
}

/// One run in a line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// The run's id (its directory beneath `<records>/runs/`).
    pub id: String,
    pub suite_id: String,
    pub title: String,
    /// `run` (one fixture's run) or `experiment` (variants, trials, gates
    /// or a selection of cases).
    pub kind: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// `completed`, or how the run ended early.
    pub status: String,
    /// The run stopped before every case ran.
    pub interrupted: bool,
    /// A plain run's recommendation (`accept-now`, `defer`, `reject`).
    pub recommendation: Option<String>,
    /// An experiment's verdict (its gates).
    pub passed: Option<bool>,
    /// Cells per status, and `total`.
    pub counts: BTreeMap<String, u64>,
    /// An experiment's variants.
    pub variants: Vec<String>,
    /// Distinct `provider / model / harness` of its cases.
    pub targets: Vec<String>,
    pub stats: Stats,
}

impl RunSummary {
    /// The summary of `run`, whose records read as `report`.
    pub fn of(run: &RunRef, report: &Report) -> Self {
        Self::of_outline(run, &Outline::of(report))
    }

    /// The summary of `run`, whose records outline as `outline`
    /// ([`crate::report::outline`]: what [`RunSummary::of`] reads of its
    /// report, read without the rest).
    pub fn of_outline(run: &RunRef, outline: &Outline) -> Self {
        let h = &outline.header;
        let cells: Vec<CellStat> = outline.cells.iter().map(CellStat::of_outline).collect();
        Self {
            id: run.id.clone(),
            suite_id: h.suite_id.clone(),
            title: h.title.clone(),
            kind: h.kind.to_string(),
            started_at: h.started_at.clone(),
            finished_at: h.finished_at.clone(),
            status: h.status.clone(),
            interrupted: h.status == "interrupted",
            recommendation: h.recommendation.clone(),
            passed: h.passed,
            counts: h.counts.clone(),
            variants: outline.variants.clone(),
            targets: h.targets.clone(),
            stats: stats(&cells),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(passed: bool, score: Option<f64>, ms: Option<f64>, usd: Option<f64>) -> CellStat {
        CellStat {
            passed,
            score,
            duration_ms: ms,
            cost_usd: usd,
        }
    }

    #[test]
    fn statistics_of_cells() {
        let s = stats(&[
            cell(true, Some(1.0), Some(10.0), Some(0.5)),
            cell(false, Some(0.5), Some(20.0), None),
            cell(true, None, Some(30.0), Some(0.25)),
            cell(false, Some(0.0), None, None),
        ]);
        assert_eq!(s.cells, 4);
        assert_eq!(s.pass_rate, Some(0.5));
        let m = s.mean_score.unwrap();
        assert_eq!((m.n, m.mean), (3, 0.5));
        // Sample sd 0.5, over √3.
        assert!((m.sem.unwrap() - 0.5 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.cost_usd, Some(0.75));
        assert_eq!(s.mean_latency_ms, Some(20.0));
        // 0.95 × 2 = 1.9: 20 + 0.9 × 10.
        assert!((s.p95_latency_ms.unwrap() - 29.0).abs() < 1e-9);
    }

    #[test]
    fn no_cells_no_numbers() {
        let s = stats(&[]);
        assert_eq!(s, Stats::default());
        let s = stats(&[cell(true, None, None, None)]);
        assert_eq!(s.pass_rate, Some(1.0));
        assert!(s.mean_score.is_none() && s.cost_usd.is_none() && s.p95_latency_ms.is_none());
    }
}
