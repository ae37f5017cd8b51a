//! What every report shows (its types; `load` reads them from a run's
//! records, `case_rows` builds each case): a plain run's
//! directory (`run.json` + `eval-summary.json`) or an experiment's
//! (`experiment.json`, whose cells name the group directory holding each
//! cell's full evaluation).
//!
//! The model knows the packet fields every preset's evaluations share
//! (`caseId`, `status`, `summary`, `assertions`, `snapshotDiff`,
//! `artifactRefs`, …); the rest of an evaluation (what was asked, what came
//! back, what was expected) is carried as it is, for the HTML report to
//! show.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::quality::gates::GateResult;

/// A run or an experiment, ready to render.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub header: Header,
    pub cases: Vec<CaseRow>,
    /// Per variant (experiments): name, baseline flag and aggregates.
    pub variants: Vec<Variant>,
    /// Each candidate against the baseline, as the experiment recorded it.
    pub comparison: Vec<Value>,
    pub gates: Vec<GateResult>,
    /// Cases the fixture skipped: `{caseId, reason}`.
    pub skipped: Vec<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// `run` or `experiment`.
    pub kind: &'static str,
    pub suite_id: String,
    pub title: String,
    pub surface: String,
    pub preset: String,
    pub fixture_ref: String,
    /// Distinct `provider / model / harness` of the cases.
    pub targets: Vec<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Total of the cases' costs, when any reported one.
    pub cost_usd: Option<f64>,
    /// A plain run's recommendation.
    pub recommendation: Option<String>,
    /// An experiment's verdict (its gates).
    pub passed: Option<bool>,
    /// Cases (cells) per status, and `total`.
    pub counts: BTreeMap<String, u64>,
    /// `completed`, or how the run ended early.
    pub status: String,
    pub records: String,
}

/// One case (one cell of an experiment).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRow {
    pub id: String,
    pub name: String,
    pub variant: Option<String>,
    pub trial: Option<u32>,
    pub status: String,
    pub summary: String,
    pub duration_ms: Option<f64>,
    pub cost_usd: Option<f64>,
    /// The weighted assertion score in [0, 1], when the case has one.
    pub score: Option<f64>,
    pub tags: Vec<String>,
    pub assertions: Vec<Assertion>,
    /// The evaluation's other members (observed, expected, provider, …).
    pub fields: Map<String, Value>,
    pub snapshot_diff: Option<Value>,
    pub transcript: Option<Transcript>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Assertion {
    pub name: String,
    pub status: String,
    pub passed: Option<bool>,
    pub score: Option<f64>,
    pub required: Option<bool>,
    /// Its weight in the case's assertion score.
    pub weight: Option<f64>,
    pub detail: Option<String>,
    pub label: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    pub path: String,
    pub text: String,
    /// Bytes left out (the report shows the first 256 KiB).
    pub truncated: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    pub name: String,
    pub baseline: bool,
    pub aggregate: Value,
    /// The suite fields this variant sets (model, system, settings …), as
    /// the experiment recorded them; empty for the suite as written.
    pub overrides: Map<String, Value>,
}

impl Variant {
    /// Each override as `field: value` (strings as they are, anything else
    /// as compact JSON), in the recorded order.
    pub fn override_lines(&self) -> Vec<String> {
        self.overrides
            .iter()
            .map(|(field, value)| match value {
                Value::String(text) => format!("{field}: {text}"),
                other => format!("{field}: {other}"),
            })
            .collect()
    }
}

impl CaseRow {
    /// Passed, or failed/errored/… with the reason.
    pub fn passed(&self) -> bool {
        self.status == "passed"
    }

    /// `id` or `id [variant, trial n]` for a cell.
    pub fn label(&self) -> String {
        match (&self.variant, self.trial) {
            (Some(v), Some(t)) => format!("{} [{v}, trial {t}]", self.id),
            (Some(v), None) => format!("{} [{v}]", self.id),
            _ => self.id.clone(),
        }
    }
}
