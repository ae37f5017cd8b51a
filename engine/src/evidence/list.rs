//! `cautilus.run_list.v1`: the project's finished runs (or one suite's),
//! newest first, a page at a time. Each run's summary comes from the run
//! index ([`super::index`]: made from the records through
//! [`crate::report::outline`], again whenever a run's records change); a run
//! whose records cannot be read is counted in `unreadable` (with its id)
//! rather than failing the list.

use schemars::JsonSchema;
use serde::Serialize;

use super::summary::RunSummary;
use super::{RUN_LIST, Records};

/// Runs a page holds unless asked otherwise.
pub const DEFAULT_LIMIT: usize = 20;
/// The most runs one page holds.
pub const MAX_LIMIT: usize = 200;

/// A page of runs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunList {
    pub schema_version: String,
    /// The suite the list is of, when one was asked for.
    pub suite: Option<String>,
    /// Runs in the whole list.
    pub total: usize,
    pub offset: usize,
    pub limit: usize,
    /// The offset of the next page, when there is one.
    pub next_offset: Option<usize>,
    /// Newest first.
    pub runs: Vec<RunSummary>,
    /// Runs whose records could not be read: `id: why`.
    pub unreadable: Vec<String>,
}

/// The page of `limit` runs (at most [`MAX_LIMIT`]) from `offset`, of
/// suite `suite` when given.
pub fn run_list(
    records: &Records,
    suite: Option<&str>,
    offset: usize,
    limit: Option<usize>,
) -> RunList {
    let limit = limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let mut all = Vec::new();
    let mut unreadable = Vec::new();
    let every = records.runs();
    for summary in records.summaries(&every) {
        match summary {
            Ok(summary) => {
                if suite.is_none_or(|s| s == summary.suite_id) {
                    all.push(summary);
                }
            }
            Err(why) => unreadable.push(why),
        }
    }
    records.settle_index(&every);
    let total = all.len();
    let runs: Vec<RunSummary> = all.into_iter().skip(offset).take(limit).collect();
    let next = offset.saturating_add(runs.len());
    RunList {
        schema_version: RUN_LIST.into(),
        suite: suite.map(str::to_string),
        total,
        offset,
        limit,
        next_offset: (next < total).then_some(next),
        runs,
        unreadable,
    }
}
