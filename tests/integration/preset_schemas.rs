//! The built-in presets' schemas, generated from the types below: the
//! observed and summary packets of each preset (over the host's packet
//! frame, `cautilus::schema::packets`) and the shape of each preset's
//! fixture cases (the host adds its own case fields when it composes the
//! fixture schema). The presets publish the committed files in their suite
//! contract (`include_str!`), so the host knows none of these shapes.
//!
//! After changing a type, regenerate with
//! `CAUTILUS_BLESS=1 cargo test --test integration schemas`.

#![allow(dead_code)]

use std::collections::BTreeMap;

use cautilus::schema::packets::{
    Header, Identity, ObservedPacket, Status, SummaryPacket, SummaryTrailer, Verdict,
};
use cautilus::schema::{file_name, generate, pinned};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

/// A repo/skill packet's header adds the skill's identity.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SkillIdentity {
    /// The skill under test.
    skill_id: Option<String>,
    skill_display_name: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct SkillObservedPacket {
    #[serde(flatten)]
    header: Header,
    #[serde(flatten)]
    skill: SkillIdentity,
    evaluations: Vec<SkillEvaluation>,
}

#[derive(Serialize, JsonSchema)]
struct SkillSummaryPacket {
    #[serde(flatten)]
    header: Header,
    #[serde(flatten)]
    skill: SkillIdentity,
    evaluations: Vec<SkillScored>,
    #[serde(flatten)]
    trailer: SummaryTrailer,
}

/// A packet schema pinned to its id and pair.
fn packet(id: &str, schema: Value, surface: &str, preset: &str) -> Value {
    let mut schema = pinned(id, schema, &[("surface", surface), ("preset", preset)]);
    let kind = if id.ends_with("summary.v1") {
        "summary"
    } else {
        "observed"
    };
    schema["description"] = json!(format!(
        "The {kind} packet of {surface}/{preset}, as cautilus writes it."
    ));
    schema
}

/// A fixture case's own fields (no `$schema`/`title`: the host embeds it).
fn case(schema: Value, description: &str) -> Value {
    let mut schema = schema;
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema["description"] = json!(description);
    schema
}

/// Every file the built-in presets publish: (path under `schemas/`, schema).
pub fn generated() -> Vec<(String, Value)> {
    let packets = [
        (
            "cautilus.app_chat_evaluation_inputs.v1",
            generate::<ObservedPacket<AppEvaluation>>(),
            "app",
            "chat",
        ),
        (
            "cautilus.app_chat_evaluation_summary.v1",
            generate::<SummaryPacket<AppScored>>(),
            "app",
            "chat",
        ),
        (
            "cautilus.app_prompt_evaluation_inputs.v1",
            generate::<ObservedPacket<AppEvaluation>>(),
            "app",
            "prompt",
        ),
        (
            "cautilus.app_prompt_evaluation_summary.v1",
            generate::<SummaryPacket<AppScored>>(),
            "app",
            "prompt",
        ),
        (
            "cautilus.evaluation_observed.v1",
            generate::<ObservedPacket<WholeRepoEvaluation>>(),
            "repo",
            "whole-repo",
        ),
        (
            "cautilus.evaluation_summary.v1",
            generate::<SummaryPacket<WholeRepoScored>>(),
            "repo",
            "whole-repo",
        ),
        (
            "cautilus.skill_evaluation_inputs.v1",
            generate::<SkillObservedPacket>(),
            "repo",
            "skill",
        ),
        (
            "cautilus.skill_evaluation_summary.v1",
            generate::<SkillSummaryPacket>(),
            "repo",
            "skill",
        ),
    ];
    let mut files: Vec<(String, Value)> = packets
        .into_iter()
        .map(|(id, schema, surface, preset)| {
            (
                format!("presets/{}", file_name(id)),
                packet(id, schema, surface, preset),
            )
        })
        .collect();
    files.push((
        "presets/app-prompt.case.schema.json".into(),
        case(generate::<AppPromptCase>(), "One app/prompt case."),
    ));
    files.push((
        "presets/app-chat.case.schema.json".into(),
        case(generate::<AppChatCase>(), "One app/chat case."),
    ));
    files.push((
        "presets/repo-whole-repo.case.schema.json".into(),
        case(
            generate::<WholeRepoCase>(),
            "One repo/whole-repo case; expectations are case fields.",
        ),
    ));
    files.push((
        "presets/repo-skill.case.schema.json".into(),
        case(
            generate::<SkillCase>(),
            "One repo/skill case: a `trigger` or an `execution` case.",
        ),
    ));
    files
}

/// One app/prompt case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AppPromptCase {
    /// Default: a 12-hex-digit hash of the case's input.
    case_id: Option<String>,
    display_name: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    system: Option<String>,
    /// The single user turn.
    input: String,
    expected: Option<AppExpected>,
    metadata: Option<serde_json::Map<String, Value>>,
}

/// One app/chat case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AppChatCase {
    /// Default: a 12-hex-digit hash of the case's input.
    case_id: Option<String>,
    display_name: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    system: Option<String>,
    /// The conversation so far; the last message is the user's.
    messages: Vec<Message>,
    expected: Option<AppExpected>,
    /// Free-form data carried to the records and to scorers.
    metadata: Option<serde_json::Map<String, Value>>,
}

/// A chat message.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Message {
    /// `user` or `assistant` (system text goes in `system`).
    role: String,
    content: String,
}

/// What an app case expects: a substring, or a golden file; and/or the
/// sources a retrieval step should find (for the retrieval scorers).
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum AppExpected {
    FinalText(ExpectedFinalText),
    Snapshot(ExpectedSnapshot),
    Sources(ExpectedSources),
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedSources {
    sources: Vec<ExpectedSource>,
}

/// A source id, or `{sourceId, chunkId?}`.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum ExpectedSource {
    Id(String),
    Chunk(SourceChunk),
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SourceChunk {
    source_id: String,
    chunk_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedFinalText {
    /// A case-sensitive substring the final text must contain.
    final_text: String,
    sources: Option<Vec<ExpectedSource>>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedSnapshot {
    /// A golden file relative to the fixture (or the case's directory);
    /// byte-equal, or structurally equal for `.json`. Written only with
    /// `--update-snapshots`.
    snapshot: String,
    sources: Option<Vec<ExpectedSource>>,
}

/// One repo/whole-repo case; expectations are case fields.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WholeRepoCase {
    /// Default: a 12-hex-digit hash of the case's input.
    case_id: Option<String>,
    display_name: Option<String>,
    /// The task given to the agent.
    prompt: String,
    task_path: Option<String>,
    /// `{surfaceLabel, files}` of the instruction surface under test.
    instruction_surface: Option<Value>,
    /// Matches the observed entry file exactly or as a prefix followed by ` `, `(` or `:`.
    expected_entry_file: Option<String>,
    required_instruction_files: Option<Vec<String>>,
    forbidden_instruction_files: Option<Vec<String>>,
    required_supporting_files: Option<Vec<String>>,
    forbidden_supporting_files: Option<Vec<String>>,
    /// The first tool call must be one of these, exactly.
    allowed_first_tool_calls: Option<Vec<String>>,
    expected_routing: Option<ExpectedRouting>,
}

/// Routing expectations; tokens match when equal or equal after the last `:`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedRouting {
    selected_skill: Option<String>,
    bootstrap_helper: Option<String>,
    work_skill: Option<String>,
    selected_support: Option<String>,
    /// A substring of the observed first tool call.
    first_tool_call_pattern: Option<String>,
}

/// One repo/skill case: a `trigger` or an `execution` case.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SkillCase {
    /// Default: a 12-hex-digit hash of the case's input.
    case_id: Option<String>,
    display_name: Option<String>,
    /// `trigger` or `execution`.
    evaluation_kind: String,
    /// Default `public_skill`.
    target_kind: Option<String>,
    /// Default: the suite's `skillId`.
    target_id: Option<String>,
    /// Required unless an execution case gives `turns`.
    prompt: Option<String>,
    /// A multi-turn execution episode (`[{input}]`).
    turns: Option<Vec<Value>>,
    /// Trigger cases: `must_invoke` or `must_not_invoke`.
    expected_trigger: Option<String>,
    /// Execution limits; an overrun turns `passed` into `degraded`.
    thresholds: Option<SkillThresholds>,
    #[schemars(range(min = 1, max = 100))]
    repeat_count: Option<u32>,
    #[schemars(range(min = 1, max = 100))]
    min_consensus_count: Option<u32>,
    required_summary_fragments: Option<Vec<String>>,
    forbidden_summary_fragments: Option<Vec<String>>,
    required_command_fragments: Option<Vec<String>>,
    forbidden_command_fragments: Option<Vec<String>>,
    /// Requires `turns`.
    audit_kind: Option<String>,
}

/// Execution thresholds (non-negative numbers).
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkillThresholds {
    max_total_tokens: Option<f64>,
    max_uncached_tokens: Option<f64>,
    max_median_run_uncached_tokens: Option<f64>,
    max_peak_run_uncached_tokens: Option<f64>,
    max_duration_ms: Option<f64>,
    max_cost_usd: Option<f64>,
}

/// What an app case's provider returned.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AppObserved {
    /// The whole conversation, the answer last.
    messages: Vec<Message>,
    /// The answer (null when the provider failed).
    final_text: Option<String>,
    /// app/prompt: the case's input.
    input: Option<String>,
    /// Structured output, when the provider returned JSON.
    structured: Option<Value>,
}

/// An app evaluation of the observed packet.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AppEvaluation {
    #[serde(flatten)]
    identity: Identity,
    observed: AppObserved,
    expected: Option<AppExpected>,
}

/// A scored app evaluation.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AppScored {
    #[serde(flatten)]
    evaluation: AppEvaluation,
    #[serde(flatten)]
    verdict: Verdict,
    /// Whether the final text contained `expected.finalText`.
    #[serde(rename = "match")]
    matched: Option<bool>,
}

/// A repo/whole-repo evaluation of the observed packet.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WholeRepoEvaluation {
    /// Same as `caseId`.
    evaluation_id: String,
    #[serde(flatten)]
    identity: Identity,
    prompt: Option<String>,
    task_path: Option<String>,
    /// `observed` or `blocked`.
    observation_status: String,
    blocker_kind: Option<String>,
    summary: Option<String>,
    entry_file: Option<String>,
    loaded_instruction_files: Option<Vec<String>>,
    loaded_supporting_files: Option<Vec<String>>,
    /// `{selectedSkill, bootstrapHelper, workSkill, selectedSupport, firstToolCall, reasonSummary}`.
    routing_decision: Option<Value>,
    /// `{surfaceLabel, files}`.
    instruction_surface: Option<Value>,
    reasoning_soundness: Option<Value>,
    artifact_refs: Option<Vec<Value>>,
    expected_entry_file: Option<String>,
    required_instruction_files: Option<Vec<String>>,
    forbidden_instruction_files: Option<Vec<String>>,
    required_supporting_files: Option<Vec<String>>,
    forbidden_supporting_files: Option<Vec<String>>,
    allowed_first_tool_calls: Option<Vec<String>>,
    expected_routing: Option<ExpectedRouting>,
}

/// A scored repo/whole-repo evaluation (`summary` is the verdict's reason).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WholeRepoScored {
    #[serde(flatten)]
    evaluation: WholeRepoEvaluation,
    status: Status,
    /// One entry per checked expectation (`entryFile`, `routing` …).
    expectation_results: BTreeMap<String, ExpectationResult>,
}

#[derive(Serialize, JsonSchema)]
struct ExpectationResult {
    /// `passed` or `failed`.
    status: String,
    detail: Option<String>,
}

/// A repo/skill evaluation of the observed packet: the case and its samples'
/// aggregate.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SkillEvaluation {
    /// Same as `caseId`.
    evaluation_id: String,
    #[serde(flatten)]
    identity: Identity,
    /// `trigger` or `execution`.
    evaluation_kind: String,
    target_kind: String,
    target_id: String,
    prompt: Option<String>,
    turns: Option<Vec<Value>>,
    expected_trigger: Option<String>,
    thresholds: Option<SkillThresholds>,
    repeat_count: u32,
    min_consensus_count: u32,
    required_summary_fragments: Option<Vec<String>>,
    forbidden_summary_fragments: Option<Vec<String>>,
    required_command_fragments: Option<Vec<String>>,
    forbidden_command_fragments: Option<Vec<String>>,
    audit_kind: Option<String>,
    /// The aggregate: whether the skill was invoked (by consensus).
    invoked: bool,
    /// Execution cases: the consensus outcome.
    outcome: Option<String>,
    /// Trigger cases without consensus because samples produced nothing.
    blocked: Option<bool>,
    sampling: Sampling,
    /// The first sample's summary.
    summary: String,
    /// Every sample's commands, in order.
    commands: Vec<Value>,
    /// Summed metrics (`total_tokens`, `duration_ms`, `cost_usd`, `uncached_tokens` …).
    metrics: BTreeMap<String, f64>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Sampling {
    sample_count: u32,
    consensus_count: u32,
    invoked_count: u32,
    /// Trigger cases: samples that matched the expectation.
    matching_count: Option<u32>,
    /// Trigger cases: samples without an observation.
    errored_count: Option<u32>,
    /// Execution cases: samples per outcome.
    status_counts: Option<BTreeMap<String, u32>>,
    /// Consensus was reached.
    stable: bool,
}

/// A scored repo/skill evaluation (`summary` is the verdict's reason).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SkillScored {
    #[serde(flatten)]
    evaluation: SkillEvaluation,
    status: Status,
    /// The samples disagreed (no consensus): the suite defers at least.
    unstable: Option<bool>,
    /// Execution thresholds that were exceeded.
    threshold_findings: Option<Vec<ThresholdFinding>>,
}

#[derive(Serialize, JsonSchema)]
struct ThresholdFinding {
    metric: String,
    actual: f64,
    limit: f64,
}
