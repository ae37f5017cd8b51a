//! The fixture (`cautilus.evaluation_input.v1`): suite fields and the case
//! shape of each preset. The host checks the suite fields
//! (`crate::fixture`); each preset plugin checks its cases.

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
    /// `model`, `system`, `agent`, `judge`, `assertions`, `replay`,
    /// `fixtureResults`. Without variants the suite runs as itself.
    pub variants: Option<std::collections::BTreeMap<String, serde_json::Map<String, Value>>>,
    /// The variant the others are compared with, cell by cell.
    pub baseline: Option<String>,
    /// The pass policy that sets the exit code (without it: every cell
    /// passes its expectations and assertions).
    pub gates: Option<Gates>,
    /// Canned answers for the fixture backend (a JSON object keyed by
    /// caseId), relative to this file; `--fixture-results` wins.
    pub fixture_results: Option<String>,
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

/// Cases inline, or a path (relative to this file): a directory with one
/// subdirectory per case (each with `case.yaml`), or a `.yaml`/`.json`/
/// `.jsonl`/`.csv` file of cases. `tests` is an alias.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "CasesOf{T}")]
pub enum Cases<T> {
    Inline(Vec<T>),
    Path(String),
}

/// An app/prompt fixture: a system prompt and one `input` per case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppPromptFixture {
    #[serde(flatten)]
    pub suite: SuiteFields,
    #[serde(flatten)]
    pub app: AppSuiteFields,
    /// Required (here or as `tests`).
    pub cases: Option<Cases<AppPromptCase>>,
    /// Alias of `cases`.
    pub tests: Option<Cases<AppPromptCase>>,
}

/// An app/chat fixture: a system prompt and a `messages` list per case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppChatFixture {
    #[serde(flatten)]
    pub suite: SuiteFields,
    #[serde(flatten)]
    pub app: AppSuiteFields,
    /// Required (here or as `tests`).
    pub cases: Option<Cases<AppChatCase>>,
    /// Alias of `cases`.
    pub tests: Option<Cases<AppChatCase>>,
}

/// Suite-level defaults of the app presets (a case may override each).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppSuiteFields {
    /// Provider family of the application under test (`anthropic`, `openai` …).
    pub provider: Option<String>,
    /// The model the application pins.
    pub model: Option<String>,
    /// The application's system prompt.
    pub system: Option<String>,
}

/// One app/prompt case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppPromptCase {
    /// Default: a 12-hex-digit hash of the case's input.
    pub case_id: Option<String>,
    pub display_name: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub system: Option<String>,
    /// The single user turn.
    pub input: String,
    pub expected: Option<AppExpected>,
    pub metadata: Option<serde_json::Map<String, Value>>,
    pub assertions: Option<Vec<Assertion>>,
    #[serde(flatten)]
    pub host: CaseHostFields,
}

/// One app/chat case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppChatCase {
    /// Default: a 12-hex-digit hash of the case's input.
    pub case_id: Option<String>,
    pub display_name: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub system: Option<String>,
    /// The conversation so far; the last message is the user's.
    pub messages: Vec<Message>,
    pub expected: Option<AppExpected>,
    /// Free-form data carried to the records and to scorers.
    pub metadata: Option<serde_json::Map<String, Value>>,
    pub assertions: Option<Vec<Assertion>>,
    #[serde(flatten)]
    pub host: CaseHostFields,
}

/// A chat message.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// `user` or `assistant` (system text goes in `system`).
    pub role: String,
    pub content: String,
}

/// What an app case expects: a substring, or a golden file; and/or the
/// sources a retrieval step should find (for the retrieval scorers).
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AppExpected {
    FinalText(ExpectedFinalText),
    Snapshot(ExpectedSnapshot),
    Sources(ExpectedSources),
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectedSources {
    pub sources: Vec<ExpectedSource>,
}

/// A source id, or `{sourceId, chunkId?}`.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ExpectedSource {
    Id(String),
    Chunk(SourceChunk),
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceChunk {
    pub source_id: String,
    pub chunk_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectedFinalText {
    /// A case-sensitive substring the final text must contain.
    pub final_text: String,
    pub sources: Option<Vec<ExpectedSource>>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectedSnapshot {
    /// A golden file relative to the fixture (or the case's directory);
    /// byte-equal, or structurally equal for `.json`. Written only with
    /// `--update-snapshots`.
    pub snapshot: String,
    pub sources: Option<Vec<ExpectedSource>>,
}

/// A repo/whole-repo fixture: an agent routed through a real workspace.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WholeRepoFixture {
    #[serde(flatten)]
    pub suite: SuiteFields,
    pub agent: Option<Agent>,
    /// Required (here or as `tests`).
    pub cases: Option<Cases<WholeRepoCase>>,
    /// Alias of `cases`.
    pub tests: Option<Cases<WholeRepoCase>>,
}

/// One repo/whole-repo case; expectations are case fields.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WholeRepoCase {
    /// Default: a 12-hex-digit hash of the case's input.
    pub case_id: Option<String>,
    pub display_name: Option<String>,
    /// The task given to the agent.
    pub prompt: String,
    pub task_path: Option<String>,
    /// `{surfaceLabel, files}` of the instruction surface under test.
    pub instruction_surface: Option<Value>,
    /// Matches the observed entry file exactly or as a prefix followed by ` `, `(` or `:`.
    pub expected_entry_file: Option<String>,
    pub required_instruction_files: Option<Vec<String>>,
    pub forbidden_instruction_files: Option<Vec<String>>,
    pub required_supporting_files: Option<Vec<String>>,
    pub forbidden_supporting_files: Option<Vec<String>>,
    /// The first tool call must be one of these, exactly.
    pub allowed_first_tool_calls: Option<Vec<String>>,
    pub expected_routing: Option<ExpectedRouting>,
    pub assertions: Option<Vec<Assertion>>,
    #[serde(flatten)]
    pub host: CaseHostFields,
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

/// Routing expectations; tokens match when equal or equal after the last `:`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectedRouting {
    pub selected_skill: Option<String>,
    pub bootstrap_helper: Option<String>,
    pub work_skill: Option<String>,
    pub selected_support: Option<String>,
    /// A substring of the observed first tool call.
    pub first_tool_call_pattern: Option<String>,
}

/// A repo/skill fixture: does one skill trigger and execute as expected?
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillFixture {
    #[serde(flatten)]
    pub suite: SuiteFields,
    pub agent: Option<Agent>,
    /// The skill under test (default: `suiteId`).
    pub skill_id: Option<String>,
    pub skill_display_name: Option<String>,
    /// Default samples per case (1–100).
    #[schemars(range(min = 1, max = 100))]
    pub repeat_count: Option<u32>,
    /// Default samples that must agree (1–100, at most `repeatCount`).
    #[schemars(range(min = 1, max = 100))]
    pub min_consensus_count: Option<u32>,
    /// Required (here or as `tests`).
    pub cases: Option<Cases<SkillCase>>,
    /// Alias of `cases`.
    pub tests: Option<Cases<SkillCase>>,
}

/// One repo/skill case: a `trigger` or an `execution` case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillCase {
    /// Default: a 12-hex-digit hash of the case's input.
    pub case_id: Option<String>,
    pub display_name: Option<String>,
    /// `trigger` or `execution`.
    pub evaluation_kind: String,
    /// Default `public_skill`.
    pub target_kind: Option<String>,
    /// Default: the suite's `skillId`.
    pub target_id: Option<String>,
    /// Required unless an execution case gives `turns`.
    pub prompt: Option<String>,
    /// A multi-turn execution episode (`[{input}]`).
    pub turns: Option<Vec<Value>>,
    /// Trigger cases: `must_invoke` or `must_not_invoke`.
    pub expected_trigger: Option<String>,
    /// Execution limits; an overrun turns `passed` into `degraded`.
    pub thresholds: Option<SkillThresholds>,
    #[schemars(range(min = 1, max = 100))]
    pub repeat_count: Option<u32>,
    #[schemars(range(min = 1, max = 100))]
    pub min_consensus_count: Option<u32>,
    pub required_summary_fragments: Option<Vec<String>>,
    pub forbidden_summary_fragments: Option<Vec<String>>,
    pub required_command_fragments: Option<Vec<String>>,
    pub forbidden_command_fragments: Option<Vec<String>>,
    /// Requires `turns`.
    pub audit_kind: Option<String>,
    pub assertions: Option<Vec<Assertion>>,
    #[serde(flatten)]
    pub host: CaseHostFields,
}

/// Execution thresholds (non-negative numbers).
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillThresholds {
    pub max_total_tokens: Option<f64>,
    pub max_uncached_tokens: Option<f64>,
    pub max_median_run_uncached_tokens: Option<f64>,
    pub max_peak_run_uncached_tokens: Option<f64>,
    pub max_duration_ms: Option<f64>,
    pub max_cost_usd: Option<f64>,
}
