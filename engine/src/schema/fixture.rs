//! The host's part of the fixture (`cautilus.evaluation_input.v1`): its
//! suite fields, its case fields, `agent` (repo surface) and multi-step
//! fixtures. Each preset declares its own suite fields and case shape in
//! its contract; [`super::fixture_schema`] composes them.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// Suite fields every preset shares.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SuiteFields {
    /// Always `cautilus.evaluation_input.v1`.
    pub schema_version: String,
    /// `app` or `repo` (the taxonomy's surface axis).
    pub surface: String,
    /// `chat`, `prompt`, `whole-repo` or `skill` (valid pairs only).
    pub preset: String,
    /// Stable id of the suite; recorded on every packet. Without it, the
    /// fixture's path in its project (the directory of the nearest
    /// cautilus.toml), suffix stripped, `/` as `.`
    /// (`evals/support/refunds.fixture.yaml` → `evals.support.refunds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite_id: Option<String>,
    /// Readable name (default: `suiteId`).
    pub suite_display_name: Option<String>,
    /// A base fixture, relative to this file's directory, or an installed
    /// pack's template (`pack:<pack>/<template>`), deep-merged under this
    /// one (objects merge; arrays and scalars here replace the base's).
    pub extends: Option<String>,
    /// An installed pack whose preset serves this suite's surface/preset
    /// (instead of the built-in one).
    pub preset_pack: Option<String>,
    /// Assertions appended after every case's own.
    pub assertions: Option<Vec<Assertion>>,
    /// The model that grades natural-language criteria.
    pub judge: Option<Judge>,
    /// How provider and judge calls use the suite's cassette
    /// (`.cautilus/cassettes/<suiteId>.json`); `--replay` overrides it.
    pub replay: Option<ReplayMode>,
    /// Executions of every case (a case's own `trials` wins; `--trials`
    /// overrides both; 1 under replay-strict).
    #[schemars(range(min = 1, max = 100))]
    pub trials: Option<u32>,
    /// Named variants, each deep-merged over the suite: `provider`,
    /// `model`, `settings`, `system`, `agent`, `judge`, `assertions`,
    /// `replay`, `fixtureResults`. Without variants the suite runs as itself.
    pub variants: Option<std::collections::BTreeMap<String, serde_json::Map<String, Value>>>,
    /// The variant the others are compared with, cell by cell.
    pub baseline: Option<String>,
    /// The pass policy that sets the exit code (without it: every cell
    /// passes its expectations and assertions).
    pub gates: Option<Gates>,
    /// Canned answers for the fixture backend (a JSON object keyed by
    /// caseId), relative to this file; `--fixture-results` wins.
    pub fixture_results: Option<String>,
    /// Labels every case of the suite carries: `--tag T` selects a case
    /// when the case or its suite carries `T` (non-empty strings).
    pub tags: Option<Vec<String>>,
}

/// Gates, per variant other than the baseline.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Gates {
    pub pass_rate: Option<MinGate>,
    /// By score (assertion) name.
    pub scores: Option<std::collections::BTreeMap<String, ScoreGate>>,
    pub latency: Option<LatencyGate>,
    pub cost: Option<CostGate>,
    pub consistency: Option<ConsistencyGate>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MinGate {
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min: f64,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScoreGate {
    /// The mean over the variant's cells.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The mean paired delta against the baseline.
    pub min_delta_vs_baseline: Option<f64>,
    /// The lower end of that delta's 95% confidence interval.
    pub min_delta_ci_low: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LatencyGate {
    pub p95_ms: Option<f64>,
    pub mean_ms: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CostGate {
    /// The costliest single cell.
    pub max_per_case_usd: Option<f64>,
    pub max_total_usd: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConsistencyGate {
    /// pass@k at k = the trials run.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub pass_at_k: Option<f64>,
    /// The share of cases passing every trial (`true`: all of them).
    pub pass_all_trials: Option<Value>,
}

/// Case fields the host owns, on every preset's cases.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaseHostFields {
    /// Checks after the preset's expectations (the suite's follow them).
    pub assertions: Option<Vec<Assertion>>,
    /// Executions of this case (wins over the suite's `trials`).
    #[schemars(range(min = 1, max = 100))]
    pub trials: Option<u32>,
    pub tags: Option<Vec<String>>,
    /// `true`, or the reason the case is skipped.
    pub skip: Option<Skip>,
    /// Run only cases marked `only` (the run counts as filtered).
    pub only: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Skip {
    Flag(bool),
    Reason(String),
}

/// `live` (no cassette), `record-new`, `replay-strict` or `refresh`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayMode {
    Live,
    RecordNew,
    ReplayStrict,
    Refresh,
}

/// A check run after the preset's expectations: a natural-language
/// criterion (graded by the judge), or `{type, ...config}`.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Assertion {
    Criterion(String),
    Check(AssertionCheck),
}

/// `{type, ...config}`: a built-in scorer id, a `.wasm` path,
/// `code-grader` or `execution-metrics`, with its config.
#[derive(Serialize, JsonSchema)]
pub struct AssertionCheck {
    #[serde(rename = "type")]
    pub kind: String,
    /// Shown in records (default: the type).
    pub name: Option<String>,
    /// Weight in `assertionScore` (default 1).
    #[schemars(range(min = 0))]
    pub weight: Option<f64>,
    /// A failed required assertion fails the case (default true).
    pub required: Option<bool>,
    /// Flip pass and fail.
    pub negate: Option<bool>,
    /// The type's own config.
    #[serde(flatten)]
    pub config: serde_json::Map<String, Value>,
}

/// `judge: {provider, model}`.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Judge {
    /// A provider id or a `.wasm` path (`fixture` judges deterministically).
    pub provider: String,
    pub model: String,
}

/// A multi-step fixture: steps instead of cases.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepsFixture {
    /// Always `cautilus.evaluation_input.v1`.
    pub schema_version: String,
    /// Default: the file name without `.fixture` and extension.
    pub suite_id: Option<String>,
    pub suite_display_name: Option<String>,
    pub extends: Option<String>,
    /// Run in order; a later step reads `${steps[i].output…}`.
    pub steps: Vec<Step>,
}

/// A step: `$ref` to a fixture and/or inline fixture keys merged over it.
#[derive(Serialize, JsonSchema)]
pub struct Step {
    #[serde(rename = "$ref")]
    pub reference: Option<String>,
    #[serde(flatten)]
    pub inline: serde_json::Map<String, Value>,
}

/// How the coding agent (`claude-code`, `codex`) runs each case, in its own
/// copy of the workspace.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Agent {
    /// What the agent may do in its copy: `read-only` (default), `edit`
    /// (change files) or `full` (no permission checks).
    pub permissions: Option<AgentPermissions>,
    /// Pin the agent's model; by default it uses the operator's own setup.
    pub model: Option<String>,
    /// Codex: the operator's `CODEX_HOME` (`inherit`, default) or a
    /// temporary one with only its auth and config (`isolated`).
    pub codex_home: Option<CodexHome>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AgentPermissions {
    ReadOnly,
    Edit,
    Full,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CodexHome {
    Inherit,
    Isolated,
}
