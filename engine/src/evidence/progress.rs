//! `cautilus.suite_progress.v1`: one suite's runs over time, oldest first
//! (a series to plot), each with its pass rate, mean score ± SEM, cost and
//! latency ([`super::summary::stats`]), and the promoted baseline's values
//! computed the same way from its cells, to overlay.
//!
//! At most [`MAX_POINTS`] runs: the newest. [`suite_progress`] reads every
//! run to count the older ones (`omitted`); [`newest`] (what `cautilus
//! serve` answers) stops reading at its `limit`th run of the suite (a few
//! more read at once may be indexed) and says `truncated` when older runs
//! were left unread. A run not yet indexed whose records name another
//! suite is passed over without being read whole
//! ([`crate::report::suite_of`]).

use schemars::JsonSchema;
use serde::Serialize;

use super::summary::{CellStat, Stats, plain_mean, stats};
use super::{Records, SUITE_PROGRESS};
use crate::quality::aggregate::CellFacts;

/// The most runs a series holds (the newest).
pub const MAX_POINTS: usize = 200;

/// A suite over time.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuiteProgress {
    pub schema_version: String,
    pub suite_id: String,
    /// Oldest first.
    pub runs: Vec<ProgressPoint>,
    /// Runs of the suite before the first point (past [`MAX_POINTS`]),
    /// of those read.
    pub omitted: usize,
    /// Older runs of the project were not read (the series stopped at its
    /// limit): the suite may have runs before the first point.
    #[serde(default)]
    pub truncated: bool,
    /// The promoted baseline, when the suite has one.
    pub baseline: Option<BaselineOverlay>,
}

/// One run of the suite.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProgressPoint {
    pub run: String,
    pub started_at: Option<String>,
    pub kind: String,
    pub status: String,
    pub recommendation: Option<String>,
    pub passed: Option<bool>,
    pub stats: Stats,
}

/// The promoted baseline's values.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaselineOverlay {
    pub variant: String,
    pub promoted_at: String,
    pub stats: Stats,
}

/// The progress of suite `suite_id`.
pub fn suite_progress(records: &Records, suite_id: &str) -> SuiteProgress {
    series(records, suite_id, None)
}

/// The progress of suite `suite_id` over its newest `limit` runs (at most
/// [`MAX_POINTS`]), reading no run older than the oldest of them.
pub fn newest(records: &Records, suite_id: &str, limit: usize) -> SuiteProgress {
    series(records, suite_id, Some(limit.clamp(1, MAX_POINTS)))
}

fn series(records: &Records, suite_id: &str, limit: Option<usize>) -> SuiteProgress {
    let mut points = Vec::new();
    let runs = records.runs();
    let mut read = 0;
    for summary in records.summarized_of(&runs, suite_id) {
        if limit.is_some_and(|l| points.len() >= l) {
            break;
        }
        read += 1;
        // Of another suite (told by its records' suite alone), or unreadable.
        let Some(Ok(summary)) = summary else {
            continue;
        };
        if summary.suite_id != suite_id {
            continue;
        }
        points.push(ProgressPoint {
            run: summary.id,
            started_at: summary.started_at,
            kind: summary.kind,
            status: summary.status,
            recommendation: summary.recommendation,
            passed: summary.passed,
            stats: summary.stats,
        });
    }
    records.settle_index(&runs);
    // Newest first from the records; keep the newest, then oldest first.
    let omitted = points.len().saturating_sub(MAX_POINTS);
    points.truncate(MAX_POINTS);
    points.reverse();
    let baseline = crate::quality::baseline::read(records.root(), suite_id)
        .ok()
        .flatten()
        .map(|b| BaselineOverlay {
            stats: baseline_stats(&b.cells),
            variant: b.variant,
            promoted_at: b.promoted_at,
        });
    SuiteProgress {
        schema_version: SUITE_PROGRESS.into(),
        suite_id: suite_id.into(),
        runs: points,
        omitted,
        truncated: read < runs.len(),
        baseline,
    }
}

/// The statistics of a promoted baseline's cells.
pub fn baseline_stats(cells: &[CellFacts]) -> Stats {
    let cells: Vec<CellStat> = cells
        .iter()
        .map(|c| {
            let scores: Vec<f64> = c.scores.iter().map(|(_, s)| *s).collect();
            CellStat {
                passed: c.status == "passed",
                score: plain_mean(&scores),
                duration_ms: c.duration_ms,
                cost_usd: c.cost_usd,
            }
        })
        .collect();
    stats(&cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(status: &str, scores: &[f64], ms: f64, usd: f64) -> CellFacts {
        CellFacts {
            case_id: "c".into(),
            trial: 1,
            status: status.into(),
            recommendation: "accept-now".into(),
            scores: scores
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("a{i}"), *s))
                .collect(),
            unscored: Vec::new(),
            assertions_errored: 0,
            duration_ms: Some(ms),
            first_byte_ms: None,
            cost_usd: Some(usd),
            input_tokens: 0,
            output_tokens: 0,
        }
    }

    #[test]
    fn a_baseline_is_summed_up_as_a_run_is() {
        let s = baseline_stats(&[
            facts("passed", &[1.0, 0.5], 10.0, 0.1),
            facts("failed", &[0.0], 30.0, 0.2),
        ]);
        assert_eq!(s.cells, 2);
        assert_eq!(s.pass_rate, Some(0.5));
        let m = s.mean_score.unwrap();
        // Cell scores 0.75 and 0.0.
        assert_eq!((m.n, m.mean), (2, 0.375));
        assert!((m.sem.unwrap() - 0.375).abs() < 1e-12);
        assert!((s.cost_usd.unwrap() - 0.3).abs() < 1e-12);
        assert_eq!(s.mean_latency_ms, Some(20.0));
        assert!((s.p95_latency_ms.unwrap() - 29.0).abs() < 1e-9);
    }
}
