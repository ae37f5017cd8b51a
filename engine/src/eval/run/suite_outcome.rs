//! What a finished suite run hands back ([`SuiteOutcome`]): its tally,
//! where its records are, and whether it was interrupted.

use std::path::PathBuf;

use serde_json::Value;

use crate::eval::verdict::tally::Tally;

/// A finished run.
#[derive(Debug)]
pub struct SuiteOutcome {
    pub tally: Tally,
    /// The summary packet on disk.
    pub summary_path: PathBuf,
    /// Where the records were written (`eval test`).
    pub output_dir: Option<PathBuf>,
    /// Each case's output node, in case order, when asked for (steps).
    pub outputs: Vec<Value>,
    /// The signal that interrupted the run (its records hold the finished cases).
    pub interrupted: Option<&'static str>,
    /// Cases written, of `total`.
    pub finished: usize,
    pub total: usize,
    /// Holds a summary written only for printing (`eval evaluate` without `--output`).
    pub(crate) _scratch: Option<tempfile::TempDir>,
    /// The claim on the run directory, held until the outcome is dropped
    /// (after the reports made of the records are written).
    pub(crate) _claim: Option<crate::eval::records::run_dir::RunDir>,
}

impl SuiteOutcome {
    pub fn recommendation(&self) -> &str {
        self.tally.recommendation()
    }
}
