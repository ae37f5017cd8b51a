//! Evidence read models: what a project's records say over time, as typed
//! data for the tools that show it: `cautilus mcp` ([`mcp`]) and `cautilus
//! serve` ([`serve`], which adds a few wrappers of its own). Each model has a versioned schema id and a committed JSON
//! Schema under `schemas/`:
//!
//! | model | schema id | module |
//! |---|---|---|
//! | the runs of the project (or of one suite), newest first, paged | `cautilus.run_list.v1` | [`list`] |
//! | one run: what the Markdown report shows, as data | `cautilus.run_detail.v1` | [`detail`] |
//! | one case (one cell): ledger, checks, sources, output, baseline, repro | `cautilus.cell_evidence.v1` | [`cell`] |
//! | two runs (or two variants of one run) compared | `cautilus.evidence_comparison.v1` | [`compare`] |
//! | one suite's runs over time, with the promoted baseline | `cautilus.suite_progress.v1` | [`progress`] |
//!
//! The records stay the source of truth: every model is derived from the
//! run directories under the project's records root (`<dir>/runs/`) and its
//! promoted baselines (`<dir>/baselines/`), read through
//! [`crate::report::load`] (the loader of the HTML, JUnit and Markdown
//! reports), never from re-running anything. Strings are carried as the
//! records hold them (already redacted by the run). A run id given by a
//! client is untrusted: it is checked and resolved beneath the runs
//! directory ([`records`]); nothing else is read but a run's own fixture
//! (for where an assertion was written), and only inside the project root.
//!
//! The comparison's id is not `cautilus.run_comparison.v1`: that id is
//! `eval compare --json`'s (verdict changes and harness parity), and a
//! schema id names one shape.

pub mod cell;
pub mod checks;
pub mod compare;
pub mod detail;
pub mod index;
pub mod list;
pub mod mcp;
pub mod progress;
pub mod records;
pub mod serve;
pub mod source;
pub mod summary;

pub use records::{Records, RunRef};

/// The run list's schema id.
pub const RUN_LIST: &str = "cautilus.run_list.v1";
/// The run detail's schema id.
pub const RUN_DETAIL: &str = "cautilus.run_detail.v1";
/// The cell evidence's schema id.
pub const CELL_EVIDENCE: &str = "cautilus.cell_evidence.v1";
/// The comparison's schema id.
pub const COMPARISON: &str = "cautilus.evidence_comparison.v1";
/// The suite progress's schema id.
pub const SUITE_PROGRESS: &str = "cautilus.suite_progress.v1";

/// What a read model could not be made of, and what to do.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// A run id that is not one: malformed, or naming a path outside the
    /// runs directory.
    #[error(
        "run id `{id}` is not a run id: {reason}; take an id from the run list (MCP `list_runs`, `/api/runs` of `cautilus serve`) or `latest`"
    )]
    BadRunId { id: String, reason: String },
    /// A well-formed id naming no finished run.
    #[error(
        "no finished run `{id}` under {runs}; take an id from the run list (MCP `list_runs`, `/api/runs` of `cautilus serve`) or `latest`"
    )]
    UnknownRun { id: String, runs: String },
    /// No such case (cell) in the run.
    #[error("run `{run}` has no case {what}; its cases are: {known}")]
    UnknownCase {
        run: String,
        what: String,
        known: String,
    },
    /// The case has several cells: a variant or trial is needed.
    #[error(
        "case `{case}` of run `{run}` has {count} cells ({cells}); name one with `variant` and `trial`"
    )]
    Ambiguous {
        run: String,
        case: String,
        count: usize,
        cells: String,
    },
    /// The run's records could not be read.
    #[error("the records of run `{run}` cannot be read: {source}")]
    Read {
        run: String,
        #[source]
        source: crate::report::ReportError,
    },
    /// A request that does not fit the records (two runs of different
    /// suites without a variant each, a variant the run does not have …).
    #[error("{0}")]
    Request(String),
}

/// The JSON Schema of the read model with id `id`, generated from its type
/// (the catalog of [`crate::schema`] serves and commits them).
pub fn schema(id: &str) -> Option<serde_json::Value> {
    use crate::schema::{generate, pinned};
    let schema = match id {
        RUN_LIST => generate::<list::RunList>(),
        RUN_DETAIL => generate::<detail::RunDetail>(),
        CELL_EVIDENCE => generate::<cell::CellEvidence>(),
        COMPARISON => generate::<compare::Comparison>(),
        SUITE_PROGRESS => generate::<progress::SuiteProgress>(),
        _ => return serve::models::schema(id),
    };
    Some(pinned(id, schema, &[]))
}

/// Every read model's schema id, and `cautilus serve`'s wrappers', in a
/// stable order.
pub const IDS: &[&str] = &[
    RUN_LIST,
    RUN_DETAIL,
    CELL_EVIDENCE,
    COMPARISON,
    SUITE_PROGRESS,
    serve::models::RUN_PAGE,
    serve::models::RUN_CASES,
    serve::models::CASE_OUTPUTS,
    serve::models::SOURCE_LINES,
    serve::models::LIVE,
    serve::models::ERROR,
];
