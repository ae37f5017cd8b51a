//! The host's part of the observed and summary packets: the header, the
//! summary's counts and recommendation, each evaluation's cross-runtime
//! identity and verdict fields, and the multi-step summary. Each preset
//! publishes its packets' full schemas in its suite contract (generated
//! from types in `tests/integration/preset_schemas.rs` over these).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use indexmap::IndexMap;

/// Fields every packet starts with, in the order they are written: the
/// host's identity fields (each as the suite or the scored packet gave it;
/// absent when it gave none), then those the preset's contract declares as
/// identity.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// The packet's schema id.
    pub schema_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", required)]
    pub surface: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", required)]
    pub preset: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", required)]
    pub suite_id: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub suite_display_name: Option<Value>,
    /// The fixture's path relative to the workspace (`/`-separated).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub fixture_ref: Option<Value>,
    /// The identity fields the preset's contract declares (`skillId`, …):
    /// each preset's packet schemas describe its own.
    #[serde(flatten)]
    #[schemars(skip)]
    pub declared: Map<String, Value>,
}

/// Fields a summary adds after its evaluations.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryTrailer {
    /// `total` and one count per status and tag.
    pub evaluation_counts: EvaluationCounts,
    /// The most severe recommendation any case asks for.
    pub recommendation: Recommendation,
    /// RFC 3339, UTC.
    pub evaluated_at: String,
    /// Present when the run was interrupted: the summary holds the cases
    /// that finished (its recommendation is never `accept-now`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interrupted>,
}

/// How far an interrupted run got.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Interrupted {
    /// `SIGINT` or `SIGTERM`.
    pub signal: String,
    pub finished_cases: u64,
    pub total_cases: u64,
}

/// Case counts: `total` plus one key per status (`passed`, `failed`, …) and
/// tag, in the order the tally keeps them, and `assertionsErrored`
/// (assertions that could not be carried out, over all cases) when there
/// are any.
#[derive(Serialize, JsonSchema)]
pub struct EvaluationCounts {
    pub total: u64,
    #[serde(flatten)]
    pub by_key: IndexMap<String, u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Recommendation {
    AcceptNow,
    Defer,
    Reject,
}

/// A case's status after its expectations. `unchecked`: observed, but the
/// case declares nothing to check (not a pass; the suite is not `accept-now`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Failed,
    Errored,
    Blocked,
    Degraded,
    Unchecked,
}

/// The cross-runtime identity of an evaluation: `surface`, `preset`,
/// `fixtureRef`, `caseId` are byte-equal across harnesses; `provider`,
/// `model`, `harness`, `mode`, `durationMs` must be present.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub case_id: String,
    pub display_name: Option<String>,
    pub surface: String,
    pub preset: String,
    pub fixture_ref: Option<String>,
    pub provider: String,
    /// Absent only when no sample produced an observation that names one
    /// (e.g. a blocked repo case); `eval evaluate` requires it.
    pub model: Option<String>,
    pub harness: String,
    /// `messaging` (app) or `workspace` (repo).
    pub mode: String,
    pub duration_ms: u64,
    /// Time from the start of the provider call to the first content of its
    /// answer (the first byte of the body; of a server-sent event stream,
    /// the first `data:` line), measured by the host for providers that
    /// speak HTTP through it; absent otherwise. Never written by a preset.
    pub first_byte_ms: Option<u64>,
    pub cost_usd: Option<f64>,
    /// Where `costUsd` comes from: `reported` by the provider, or
    /// `derived:<price table>` from token counts (or `mixed` over samples).
    pub cost_source: Option<String>,
    /// Calls repeated after a rate limit or a transient error (when any).
    pub retries: Option<u32>,
    /// Token accounting, when the provider captured it.
    pub usage: Option<Usage>,
    /// Why the provider failed, when it did.
    pub error: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_input_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    pub llm_calls: Option<u64>,
}

/// A case's status and why.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub status: Status,
    /// One line: why this status.
    pub summary: String,
    /// The fixture's assertions on the case, in order (its own, then the
    /// suite's), when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assertions: Option<Vec<AssertionOutcome>>,
    /// Weighted mean of the assertion scores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assertion_score: Option<f64>,
    /// What the case's judge calls took (their cost is in `costUsd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_usage: Option<JudgeUsage>,
    /// How many of its assertions could not be carried out (required or
    /// optional), when any: each is also named in `summary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assertions_errored: Option<u64>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JudgeUsage {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
}

/// One assertion's result on one case.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertionOutcome {
    pub name: String,
    /// `errored`: the check could not be carried out (the case is errored);
    /// `uncaptured`: it needs a signal the provider did not capture (a
    /// failure: an unmeasured check never passes).
    pub status: AssertionStatus,
    pub passed: bool,
    pub score: Option<f64>,
    pub required: bool,
    pub weight: f64,
    /// The scorer's label (a judge's chosen class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// What its judge calls cost.
    #[serde(rename = "costUsd", skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AssertionStatus {
    Passed,
    Failed,
    Errored,
    Uncaptured,
    /// The case was never answered (errored or blocked before its checks).
    NotEvaluated,
}

/// A packet: header, its evaluations, and (summaries) the trailer.
#[derive(Serialize, JsonSchema)]
pub struct ObservedPacket<E> {
    #[serde(flatten)]
    pub header: Header,
    pub evaluations: Vec<E>,
}

#[derive(Serialize, JsonSchema)]
pub struct SummaryPacket<E> {
    #[serde(flatten)]
    pub header: Header,
    pub evaluations: Vec<E>,
    #[serde(flatten)]
    pub trailer: SummaryTrailer,
}

/// The summary of a multi-step run (`steps:` fixture).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepsSummary {
    pub schema_version: String,
    pub suite_id: String,
    pub suite_display_name: String,
    /// `accept-now` when every step passed or had nothing to check (and one
    /// passed), `defer` when no step checked anything, else `reject`.
    pub recommendation: String,
    /// Summed over the steps that ran.
    pub evaluation_counts: StepsCounts,
    pub steps: Vec<StepEntry>,
    pub evaluated_at: String,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepsCounts {
    pub total: u64,
    pub passed: u64,
    pub failed: u64,
}

/// One step of a multi-step run.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepEntry {
    pub step_index: u64,
    pub surface: String,
    pub preset: String,
    pub suite_id: String,
    /// `passed`, `unchecked` (nothing in it to check; the run went on),
    /// `failed`, `errored` or `not-run`.
    pub status: String,
    /// What later steps read as `${steps[i].output…}` (null if not run).
    pub output: Value,
    /// The step's records, relative to the run directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_dir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_file: Option<String>,
    /// Why the step could not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
