//! What a finished experiment is ([`ExperimentOutcome`]) and the name and
//! schema of its record (`experiment.json`): below the runner, the record
//! writer, the baseline, resume and merge, which all name them.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::aggregate::{Aggregate, Comparison};
use super::gates::GateResult;

/// The record's schema and file name.
pub const SCHEMA: &str = "cautilus.experiment.v1";
pub const FILE: &str = "experiment.json";

/// A finished experiment.
#[derive(Debug)]
pub struct ExperimentOutcome {
    pub output_dir: PathBuf,
    pub record: PathBuf,
    pub passed: bool,
    pub interrupted: Option<&'static str>,
    pub variants: Vec<(String, Aggregate)>,
    pub baseline: Option<String>,
    pub comparisons: Vec<Comparison>,
    pub gates: Vec<GateResult>,
    pub filtered: bool,
    pub cells: usize,
    /// The claim on the run directory, held as long as the outcome.
    pub(crate) _claim: Option<crate::eval::records::run_dir::RunDir>,
}

impl ExperimentOutcome {
    /// Cells by status over every variant (with `total`), as a project
    /// summary counts them.
    pub fn counts(&self) -> Map<String, Value> {
        let mut counts = Map::new();
        counts.insert("total".into(), json!(self.cells));
        for (_, aggregate) in &self.variants {
            for (status, n) in &aggregate.statuses {
                let entry = counts.entry(status.clone()).or_insert(json!(0));
                *entry = json!(entry.as_u64().unwrap_or(0) + *n as u64);
            }
        }
        counts
    }
}
