//! The experiment record (`cautilus.experiment.v1`, `experiment.json`):
//! every cell of a run of variants × trials, the per-variant aggregates,
//! the comparison with the baseline, the gates and the verdict. Written by
//! `crate::quality::experiment`; additive-only within v1.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use indexmap::IndexMap;

/// The whole record as its schema describes it: the header, the cells
/// (streamed one per line between them), then the trailer.
#[derive(Serialize, JsonSchema)]
pub struct ExperimentRecord {
    #[serde(flatten)]
    pub header: ExperimentHeader,
    /// One per case × variant × trial that finished, in run order.
    pub cells: Vec<Cell>,
    #[serde(flatten)]
    pub trailer: ExperimentTrailer,
}

/// What the record starts with, in the order it is written.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentHeader {
    pub schema_version: String,
    pub surface: String,
    pub preset: String,
    pub suite_id: String,
    pub suite_display_name: String,
    pub fixture_ref: String,
    pub started_at: String,
    /// The baseline variant, when it ran.
    pub baseline: Option<String>,
    pub variants: Vec<VariantEntry>,
    /// The promoted baseline compared with, when the run has no baseline
    /// variant of its own.
    pub committed_baseline: Option<CommittedBaseline>,
    /// Most trials any case ran.
    pub trials: u32,
    /// `--case`, `--variant`, `--tag` or `only` narrowed the run (gates
    /// informational).
    pub filtered: bool,
    /// The suite's `tags` (every cell's `tags` starts with them).
    #[serde(default)]
    #[schemars(required)]
    pub suite_tags: Vec<String>,
    /// `--shard K/N`: `{index, count}` (gates informational); null for a
    /// whole or merged run.
    pub shard: Option<ShardInfo>,
    pub filters: Filters,
    /// The fixture's `gates` as written (null: the default policy), so
    /// shards merge without the fixture.
    pub declared_gates: Option<Value>,
    pub skipped: Vec<Skipped>,
    /// `eval merge`: the shard records it joined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<String>>,
}

/// What the record ends with, after its cells.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentTrailer {
    pub finished_at: String,
    /// `completed` or `interrupted`.
    pub status: String,
    /// The signal that interrupted the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    /// By variant name, in the run's order of variants.
    pub aggregates: IndexMap<String, Aggregate>,
    /// Each candidate against the baseline.
    pub comparison: Vec<Comparison>,
    pub gates: Vec<Gate>,
    /// No gate blocked and the run was not interrupted (exit 0).
    pub passed: bool,
    pub fingerprints: Fingerprints,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommittedBaseline {
    pub path: String,
    pub variant: String,
    pub promoted_at: String,
    /// The suite's cases or scoring changed since (fingerprints differ):
    /// the comparison is informational.
    pub changed_since: bool,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct VariantEntry {
    pub name: String,
    pub baseline: bool,
    pub overrides: Map<String, Value>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct ShardInfo {
    pub index: u32,
    pub count: u32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Filters {
    pub cases: Vec<String>,
    pub variants: Vec<String>,
    pub tags: Vec<String>,
    pub trials: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// The case's 0-based position in the suite.
    pub case_index: u64,
    pub case_id: String,
    /// Empty for `skip: true`.
    pub reason: String,
}

/// One cell: a case's trial through one variant. What the preset or the
/// provider reported (its summary, output, usage, cost, timings, identity)
/// is kept as they wrote it; the schema says what each should be.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cell {
    pub case_id: String,
    /// The case's 0-based position in the suite.
    pub case_index: u64,
    pub variant: String,
    /// 1-based.
    pub trial: u32,
    /// `passed`, `failed`, `errored`, `blocked`, `degraded` or `unchecked`.
    pub status: String,
    pub passed: bool,
    pub recommendation: String,
    #[schemars(with = "Option<String>")]
    pub summary: Value,
    /// The suite's tags, then the case's own.
    pub tags: Vec<String>,
    /// The final text (or the preset's output).
    pub output: Option<Value>,
    /// By assertion name (several of one name: their mean), in the order
    /// first seen.
    pub scores: IndexMap<String, f64>,
    /// The assertion ledger, in order: name, status (`passed`, `failed`,
    /// `uncaptured`, `errored`, `not-evaluated`), score, required, weight, detail.
    #[schemars(with = "Vec<Value>")]
    pub assertions: Value,
    #[schemars(with = "Option<Value>")]
    pub usage: Value,
    #[schemars(with = "Option<f64>")]
    pub cost_usd: Value,
    #[schemars(with = "Option<f64>")]
    pub duration_ms: Value,
    /// The host's time to the first content of the answer (HTTP providers).
    #[schemars(with = "Option<f64>")]
    pub first_byte_ms: Value,
    #[schemars(with = "Option<String>")]
    pub provider: Value,
    #[schemars(with = "Option<String>")]
    pub model: Value,
    #[schemars(with = "Option<String>")]
    pub harness: Value,
    /// The group's run directory, relative to the experiment's.
    pub record: String,
}

#[derive(Serialize, JsonSchema)]
pub struct MeanSem {
    /// Cells that gave the score.
    pub n: u64,
    /// Null when no cell gave it.
    pub mean: Option<f64>,
    /// Null below two values.
    pub sem: Option<f64>,
    /// Cells where the assertion gave no score (it errored, or the case was
    /// never answered): left out of `n` and `mean`, never silently.
    pub dropped: u64,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Aggregate {
    pub cells: u64,
    pub cases: u64,
    /// Cells by status, in the order first seen.
    pub statuses: IndexMap<String, u64>,
    pub pass_rate: Option<f64>,
    /// Assertions that could not be carried out (an optional one, or one
    /// beside a failure, included), and the cells holding them.
    pub assertions_errored: AssertionsErrored,
    /// By assertion name, in the order first seen.
    pub scores: IndexMap<String, MeanSem>,
    pub trials: u32,
    /// By k (1..=trials): the unbiased pass@k over cases that ran k trials.
    pub pass_at_k: IndexMap<String, f64>,
    /// By k: pass^k (all k drawn trials pass).
    pub pass_hat_k: IndexMap<String, f64>,
    pub all_trials_passed: Option<f64>,
    pub latency: Option<Latency>,
    /// The same of the cells' `firstByteMs`, over the cells that have one.
    pub first_byte: Option<Latency>,
    pub tokens: Tokens,
    pub cost: Option<Cost>,
}

#[derive(Serialize, JsonSchema)]
pub struct AssertionsErrored {
    pub assertions: u64,
    pub cells: u64,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    pub n: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

#[derive(Serialize, JsonSchema)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub total: u64,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    pub cells: u64,
    pub total_usd: f64,
    pub max_cell_usd: f64,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub baseline: String,
    pub candidate: String,
    /// `run` (a variant of this run) or `committed` (a promoted baseline).
    pub source: String,
    /// Its delta gates never block.
    pub informational: bool,
    /// Cells paired by (case, trial).
    pub pairs: u64,
    pub unpaired: u64,
    pub pass_rate: Option<Paired>,
    pub mcnemar: McNemar,
    /// Per score present in both cells of a pair, in the order first seen.
    pub scores: IndexMap<String, Paired>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Paired {
    pub n: u64,
    /// Candidate − baseline.
    pub mean_delta: f64,
    pub sem: Option<f64>,
    pub ci_low: f64,
    pub ci_high: f64,
    /// `bootstrap` (seeded, 2,000 resamples) or `normal` (above 5,000 pairs).
    pub ci_method: String,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McNemar {
    pub regressions: u64,
    pub improvements: u64,
    pub p_value: f64,
}

/// One gate's result for one variant (as the record writes it, and as a
/// report reads it back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gate {
    pub variant: String,
    /// `errored`, `assertions` (the default policy), `passRate.min`,
    /// `scores.<name>.min` …
    pub gate: String,
    pub value: Option<f64>,
    pub threshold: Option<f64>,
    pub passed: bool,
    /// Shown, never blocking (filtered runs, a delta with no baseline).
    pub informational: bool,
    pub message: String,
}

impl Gate {
    /// Whether it stops the run from passing.
    pub fn blocks(&self) -> bool {
        !self.passed && !self.informational
    }
}

#[derive(Serialize, JsonSchema)]
pub struct Fingerprints {
    /// The suite's fields, variants, gates and trials.
    pub config: String,
    /// The checked cases of the first group.
    pub task: String,
}

/// A committed baseline (`cautilus.baseline.v1`,
/// `<records>/baselines/<suiteId>.json`), written by `eval promote`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaselineRecord {
    pub schema_version: String,
    pub suite_id: String,
    pub variant: String,
    pub promoted_at: String,
    pub from_run: String,
    pub fingerprints: Fingerprints,
    pub cells: Vec<BaselineCell>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaselineCell {
    pub case_id: String,
    pub trial: u32,
    pub status: String,
    pub recommendation: String,
    pub scores: IndexMap<String, f64>,
    pub duration_ms: Option<f64>,
    pub cost_usd: Option<f64>,
}
