//! The answers of `cautilus serve` that are not one of the evidence read
//! models themselves: small typed wrappers over the same records, each
//! with its own schema id (committed under `schemas/` like the others).
//!
//! | schema id | what | route |
//! |---|---|---|
//! | `cautilus.serve.run_page.v1` | a suite's finished runs, newest first, a page before a run | `/api/runs` |
//! | `cautilus.serve.run_cases.v1` | every case (cell) of one run with its status, paged, filtered by status | `/api/cases` |
//! | `cautilus.serve.case_outputs.v1` | one case's outputs on two sides of a comparison | `/api/outputs` |
//! | `cautilus.serve.source_lines.v1` | the lines around each assertion of one cell where it was written | `/api/source` |
//! | `cautilus.serve.live.v1` | runs in progress: cases done so far, counts, elapsed | `/api/live` |
//! | `cautilus.serve.error.v1` | what was wrong with a request, and what to do | every route |

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::evidence::source::Source;
use crate::evidence::summary::RunSummary;

pub const RUN_PAGE: &str = "cautilus.serve.run_page.v1";
pub const RUN_CASES: &str = "cautilus.serve.run_cases.v1";
pub const CASE_OUTPUTS: &str = "cautilus.serve.case_outputs.v1";
pub const SOURCE_LINES: &str = "cautilus.serve.source_lines.v1";
pub const LIVE: &str = "cautilus.serve.live.v1";
pub const ERROR: &str = "cautilus.serve.error.v1";

/// Every wrapper's schema id.
pub const IDS: &[&str] = &[RUN_PAGE, RUN_CASES, CASE_OUTPUTS, SOURCE_LINES, LIVE, ERROR];

/// The JSON Schema of wrapper `id`, generated from its type.
pub fn schema(id: &str) -> Option<serde_json::Value> {
    use crate::schema::{generate, pinned};
    let schema = match id {
        RUN_PAGE => generate::<RunPage>(),
        RUN_CASES => generate::<RunCases>(),
        CASE_OUTPUTS => generate::<CaseOutputs>(),
        SOURCE_LINES => generate::<SourceLines>(),
        LIVE => generate::<Live>(),
        ERROR => generate::<ApiError>(),
        _ => return None,
    };
    Some(pinned(id, schema, &[]))
}

/// A page of one suite's (or every suite's) finished runs, newest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunPage {
    pub schema_version: String,
    pub suite: Option<String>,
    /// The page holds runs older than this one.
    pub before: Option<String>,
    pub limit: usize,
    pub runs: Vec<RunSummary>,
    /// The `before` of the next (older) page, when older runs remain.
    pub next: Option<String>,
    /// Runs whose records could not be read: `id: why`.
    pub unreadable: Vec<String>,
}

/// One run's cases (cells).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunCases {
    pub schema_version: String,
    pub run: String,
    /// Only cases of this status, when asked.
    pub status: Option<String>,
    /// Cells per status in the whole run.
    pub counts: BTreeMap<String, u64>,
    /// Cases matching the filter.
    pub total: usize,
    pub offset: usize,
    pub limit: usize,
    pub next_offset: Option<usize>,
    /// In the run's order.
    pub cases: Vec<CaseEntry>,
}

/// A case (cell) in a line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaseEntry {
    pub case_id: String,
    pub display_name: String,
    pub variant: Option<String>,
    pub trial: Option<u32>,
    pub status: String,
    pub summary: String,
    pub score: Option<f64>,
    pub duration_ms: Option<f64>,
    pub cost_usd: Option<f64>,
    /// Its assertions that did not pass, in ledger order.
    pub failed_assertions: Vec<String>,
}

/// One case on both sides of a comparison: what each side answered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaseOutputs {
    pub schema_version: String,
    pub case_id: String,
    pub a: OutputSide,
    pub b: OutputSide,
}

/// One side's cells of the case.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutputSide {
    pub run: String,
    pub variant: Option<String>,
    /// Its cells of the case (every variant and trial unless one variant
    /// was asked for), in the run's order; empty when the side lacks it.
    pub cells: Vec<OutputCell>,
}

/// One cell's answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutputCell {
    pub variant: Option<String>,
    pub trial: Option<u32>,
    pub status: String,
    pub summary: String,
    /// The first [`crate::evidence::cell::EXCERPT_CHARS`] characters of
    /// the final text.
    pub final_text: Option<String>,
    pub final_text_chars: Option<usize>,
}

/// Where each assertion of one cell was written, with the lines around it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceLines {
    pub schema_version: String,
    pub run: String,
    pub case_id: String,
    pub variant: Option<String>,
    pub trial: Option<u32>,
    /// In ledger order.
    pub assertions: Vec<AssertionLines>,
}

/// One assertion's place and lines.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssertionLines {
    pub index: usize,
    pub name: String,
    pub status: String,
    /// Its place (as `cautilus.cell_evidence.v1` gives it).
    pub source: Option<Source>,
    /// The lines around it (its own `marked`), when they could be read.
    pub lines: Vec<SourceLine>,
    /// Why no lines are given.
    pub unavailable: Option<String>,
}

/// One line of a fixture or case file, as text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceLine {
    /// 1-based.
    pub number: usize,
    pub text: String,
    /// The assertion's own line.
    pub marked: bool,
}

/// Runs in progress (or the one asked for, finished or not).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Live {
    pub schema_version: String,
    pub runs: Vec<LiveRun>,
}

/// A run as far as it got.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiveRun {
    pub id: String,
    /// The fixture it runs, relative to the project root when inside it.
    pub fixture: Option<String>,
    /// `running`, `completed`, `interrupted`, `failed`.
    pub status: String,
    /// It holds its final record: polling can stop.
    pub finished: bool,
    /// Cases (cells) the run will have, of the groups started so far.
    pub total_cases: usize,
    /// Cases finished so far (its journals' lines).
    pub finished_cases: usize,
    /// Finished cases per status.
    pub counts: BTreeMap<String, u64>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// From its start to its end, or to now.
    pub elapsed_ms: Option<i64>,
    /// Milliseconds since its journal last grew (a run killed without its
    /// final record stops growing).
    pub idle_ms: Option<i64>,
    /// The most recently finished cases, newest last (at most 100).
    pub cases: Vec<LiveCase>,
}

/// A finished case of a run in progress.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiveCase {
    pub case_id: String,
    /// The variant (and trial) of an experiment's group: `name/trial-n`.
    pub group: Option<String>,
    pub status: String,
    pub summary: String,
}

/// What was wrong with a request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    pub schema_version: String,
    /// What was wrong (naming the value).
    pub error: String,
    /// What to do.
    pub hint: String,
}
