//! translate, collect and evaluate for repo/whole-repo.

use cautilus_sdk::preset::packet::{copy_fields, evaluation_id, run_fields};
use cautilus_sdk::preset::{CasePlan, CaseRun, CaseStatus, Verdict};
use cautilus_sdk::{FieldError, Message, Observation, ToolCall};
use serde_json::{Map, Value, json};

const CASE_FIELDS: &[&str] = &[
    "caseId",
    "displayName",
    "prompt",
    "taskPath",
    "instructionSurface",
    "expectedEntryFile",
    "requiredInstructionFiles",
    "forbiddenInstructionFiles",
    "requiredSupportingFiles",
    "forbiddenSupportingFiles",
    "allowedFirstToolCalls",
    "expectedRouting",
];
const LIST_FIELDS: &[&str] = &[
    "requiredInstructionFiles",
    "forbiddenInstructionFiles",
    "requiredSupportingFiles",
    "forbiddenSupportingFiles",
    "allowedFirstToolCalls",
];
const ROUTING_KEYS: &[&str] = &[
    "selectedSkill",
    "bootstrapHelper",
    "workSkill",
    "selectedSupport",
    "firstToolCallPattern",
];
/// Expectation fields copied into the observed packet so it scores on its own.
const EXPECTATIONS: &[&str] = &[
    "expectedEntryFile",
    "requiredInstructionFiles",
    "forbiddenInstructionFiles",
    "requiredSupportingFiles",
    "forbiddenSupportingFiles",
    "allowedFirstToolCalls",
    "expectedRouting",
];
/// Appended to the prompt of a case that expects a route.
pub const ROUTING_REQUEST: &str = "\n\nWhen you are done, end your answer with one JSON object on its own line: {\"selectedSkill\": \"<the route or skill you chose, or none>\", \"reasonSummary\": \"<one sentence>\"}";

/// Routing fields an agent reports about itself.
const SELF_REPORTED: &[&str] = &[
    "selectedSkill",
    "bootstrapHelper",
    "workSkill",
    "selectedSupport",
    "reasonSummary",
];

/// Observation fields a runner (or canned result) reports.
const OBSERVATION_FIELDS: &[&str] = &[
    "observationStatus",
    "blockerKind",
    "summary",
    "entryFile",
    "loadedInstructionFiles",
    "loadedSupportingFiles",
    "routingDecision",
    "instructionSurface",
    "reasoningSoundness",
    "artifactRefs",
];

fn problem(errors: &mut Vec<FieldError>, path: String, message: impl Into<String>) {
    errors.push(FieldError {
        path,
        message: message.into(),
    });
}

pub fn translate(case: &Value, at: &str) -> Result<CasePlan, Vec<FieldError>> {
    let mut errors = Vec::new();
    let Some(object) = case.as_object() else {
        problem(&mut errors, at.to_string(), "a case must be an object");
        return Err(errors);
    };
    let mut misspelled: Vec<&str> = Vec::new();
    for key in object.keys().filter(|k| !CASE_FIELDS.contains(&k.as_str())) {
        let guess =
            cautilus_sdk::suggest::unknown_case_field(key, CASE_FIELDS, |g| object.contains_key(g));
        let hint = if let Some((field, hint)) = guess {
            misspelled.push(field);
            hint
        } else if key == "expected" {
            "repo/whole-repo states expectations as case fields (expectedEntryFile, requiredInstructionFiles, expectedRouting, …); `expected` and snapshots apply to app presets".to_string()
        } else {
            format!("case fields are: {}", CASE_FIELDS.join(", "))
        };
        problem(
            &mut errors,
            format!("{at}.{key}"),
            format!("unknown case field `{key}`; {hint}"),
        );
    }
    for key in ["caseId", "prompt"] {
        if object
            .get(key)
            .and_then(Value::as_str)
            .is_none_or(|s| s.trim().is_empty())
            && !misspelled.contains(&key)
        {
            problem(
                &mut errors,
                format!("{at}.{key}"),
                "is missing or empty (required)",
            );
        }
    }
    for key in LIST_FIELDS {
        if let Some(value) = object.get(*key)
            && !value
                .as_array()
                .is_some_and(|l| l.iter().all(Value::is_string))
        {
            problem(
                &mut errors,
                format!("{at}.{key}"),
                "must be a list of strings",
            );
        }
    }
    if let Some(value) = object.get("expectedEntryFile")
        && !value.is_string()
    {
        problem(
            &mut errors,
            format!("{at}.expectedEntryFile"),
            "must be a string",
        );
    }
    if let Some(routing) = object.get("expectedRouting") {
        match routing.as_object() {
            Some(r) if r.is_empty() => problem(
                &mut errors,
                format!("{at}.expectedRouting"),
                format!("declare at least one of {}", ROUTING_KEYS.join(", ")),
            ),
            Some(r) => {
                for (key, value) in r {
                    if !ROUTING_KEYS.contains(&key.as_str()) {
                        problem(
                            &mut errors,
                            format!("{at}.expectedRouting.{key}"),
                            format!("unknown routing key; use {}", ROUTING_KEYS.join(", ")),
                        );
                    } else if !value.is_string() {
                        problem(
                            &mut errors,
                            format!("{at}.expectedRouting.{key}"),
                            "must be a string",
                        );
                    }
                }
            }
            None => problem(
                &mut errors,
                format!("{at}.expectedRouting"),
                "must be an object",
            ),
        }
    }
    let mut normalized = object.clone();
    if !normalized.contains_key("displayName") {
        normalized.insert(
            "displayName".into(),
            object.get("caseId").cloned().unwrap_or(Value::Null),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
    let mut plan = CasePlan::new(text("caseId").unwrap_or_default(), Value::Null);
    let mut prompt = text("prompt").unwrap_or_default();
    // A route is a decision only the agent can report: ask for it, the way
    // upstream runners give the agent an output schema.
    if object
        .get("expectedRouting")
        .and_then(Value::as_object)
        .is_some_and(|r| r.keys().any(|k| k != "firstToolCallPattern"))
    {
        prompt.push_str(ROUTING_REQUEST);
    }
    plan.messages = vec![Message {
        role: "user".into(),
        content: prompt,
    }];
    plan.body = Value::Object(normalized);
    Ok(plan)
}

pub fn collect(case: Value, run: CaseRun) -> Value {
    let mut e = Map::new();
    e.insert("evaluationId".into(), case["caseId"].clone());
    copy_fields(
        &case,
        &mut e,
        &["caseId", "displayName", "prompt", "taskPath"],
    );
    e.insert("surface".into(), json!("repo"));
    e.insert("preset".into(), json!("whole-repo"));
    e.insert("fixtureRef".into(), json!(run.fixture_ref));
    let mut runtime = run_fields(&run);
    let error = runtime.remove("error");
    e.extend(runtime);
    let observed = run.samples.first().and_then(|s| s.outcome.as_ref().ok());
    let structured = observed
        .and_then(|o| o.structured.as_deref())
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_object);
    // A real agent run: what it did comes from its trace, what it decided
    // from its own report.
    let structured = match observed {
        Some(o) if o.trace.is_some() => Some(from_trace(o, structured.as_ref())),
        _ => structured,
    };
    if let Some(transcript) = run.samples.first().and_then(|s| s.transcript.as_deref()) {
        e.insert(
            "artifactRefs".into(),
            json!([{"kind": "transcript", "path": transcript}]),
        );
    }
    match structured.as_ref() {
        Some(observation) => {
            copy_fields(observation, &mut e, OBSERVATION_FIELDS);
            e.entry("observationStatus").or_insert(json!("observed"));
        }
        None => {
            e.insert("observationStatus".into(), json!("blocked"));
            let why = error
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or("the runner returned no observation");
            // A runner that is not logged in says so first (`runner_auth_missing: …`).
            let kind = if why.starts_with("runner_auth_missing")
                || why.contains(": runner_auth_missing")
            {
                "runner_auth_missing"
            } else {
                "no_observation"
            };
            e.insert("blockerKind".into(), json!(kind));
            e.insert("summary".into(), json!(why));
        }
    }
    let surface = case
        .get("instructionSurface")
        .cloned()
        .unwrap_or(json!({"surfaceLabel": "workspace_default", "files": []}));
    e.entry("instructionSurface").or_insert(surface);
    copy_fields(&case, &mut e, EXPECTATIONS);
    Value::Object(e)
}

/// The whole-repo observation of a real agent run: the entry file is the
/// first instruction file that reached the agent, the loaded instruction
/// files are those, the supporting files every other file it read, the
/// first tool call is rendered `Tool(main argument)` (`Read(AGENTS.md)`,
/// `Bash(cargo test)`); the route is what the agent reported in its
/// final JSON object, else the first skill it invoked.
fn from_trace(o: &Observation, report: Option<&Value>) -> Value {
    let trace = o.trace.as_ref().expect("checked by the caller");
    let mut routing = Map::new();
    for key in SELF_REPORTED {
        if let Some(value) = report.and_then(|r| r.get(*key)).filter(|v| v.is_string()) {
            routing.insert((*key).into(), value.clone());
        }
    }
    if !routing.contains_key("selectedSkill")
        && let Some(skill) = trace.skills.first()
    {
        routing.insert("selectedSkill".into(), json!(skill));
    }
    if let Some(call) = o.tool_calls.as_ref().and_then(|c| c.first()) {
        routing.insert("firstToolCall".into(), json!(render_call(call)));
    }
    let supporting: Vec<&String> = trace
        .files_read
        .iter()
        .filter(|f| !trace.instruction_files.contains(f))
        .collect();
    let mut observation = json!({
        "observationStatus": "observed",
        "summary": o.final_text.as_deref().map(|t| cautilus_sdk::excerpt(t, 400)),
        "loadedInstructionFiles": trace.instruction_files,
        "loadedSupportingFiles": supporting,
        "routingDecision": routing,
    });
    if let Some(entry) = trace.instruction_files.first() {
        observation["entryFile"] = json!(entry);
    }
    observation
}

/// `Read(AGENTS.md)`, `exec_command(cat AGENTS.md)`: a call's name and its
/// main argument.
fn render_call(call: &ToolCall) -> String {
    let arguments: Value = call
        .arguments
        .as_deref()
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or(Value::Null);
    let main = [
        "file_path",
        "path",
        "command",
        "cmd",
        "skill",
        "pattern",
        "url",
        "description",
    ]
    .iter()
    .find_map(|key| arguments.get(*key).and_then(Value::as_str));
    match main {
        Some(argument) => format!("{}({argument})", call.name),
        None => call.name.clone(),
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `charness:impl` matches `impl`: equal, or equal after the last `:`.
pub fn tokens_match(expected: &str, observed: &str) -> bool {
    let tail = |s: &str| s.rsplit(':').next().unwrap_or(s).trim().to_string();
    expected == observed || tail(expected) == tail(observed)
}

fn entry_file_matches(expected: &str, observed: &str) -> bool {
    observed == expected
        || [" ", "(", ":"]
            .iter()
            .any(|sep| observed.starts_with(&format!("{expected}{sep}")))
}

struct Outcome {
    name: &'static str,
    passed: bool,
    detail: String,
}

fn score(e: &Value) -> (CaseStatus, Value, String) {
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut loaded_instructions = strings(e.get("loadedInstructionFiles"));
    if let Some(expected) = text(e, "/expectedEntryFile") {
        let observed = text(e, "/entryFile");
        let passed = observed.is_some_and(|o| entry_file_matches(expected, o));
        if passed {
            loaded_instructions.push(expected.to_string());
        }
        outcomes.push(Outcome {
            name: "entryFile",
            passed,
            detail: format!("expected entry file `{expected}`, observed {observed:?}"),
        });
    }
    for (kind, loaded) in [
        ("instructionFiles", &loaded_instructions),
        ("supportingFiles", &strings(e.get("loadedSupportingFiles"))),
    ] {
        let cap = if kind == "instructionFiles" {
            "Instruction"
        } else {
            "Supporting"
        };
        let required = strings(e.get(format!("required{cap}Files").as_str()));
        let forbidden = strings(e.get(format!("forbidden{cap}Files").as_str()));
        if required.is_empty() && forbidden.is_empty() {
            continue;
        }
        let missing: Vec<&String> = required.iter().filter(|f| !loaded.contains(f)).collect();
        let violations: Vec<&String> = forbidden.iter().filter(|f| loaded.contains(f)).collect();
        outcomes.push(Outcome {
            name: if kind == "instructionFiles" {
                "instructionFiles"
            } else {
                "supportingFiles"
            },
            passed: missing.is_empty() && violations.is_empty(),
            detail: format!("missing required {missing:?}, loaded forbidden {violations:?}"),
        });
    }
    if let Some(routing) = e.get("expectedRouting").and_then(Value::as_object) {
        let observed = e.get("routingDecision").cloned().unwrap_or(Value::Null);
        let get = |key: &str| text(&observed, &format!("/{key}"));
        let mut mismatches = Vec::new();
        for (key, want) in routing {
            let Some(want) = want.as_str() else { continue };
            let got = match key.as_str() {
                "selectedSkill" => get("selectedSkill")
                    .or_else(|| get("workSkill"))
                    .or_else(|| get("bootstrapHelper")),
                "workSkill" => get("workSkill").or_else(|| get("selectedSkill")),
                "bootstrapHelper" | "selectedSupport" => get(key),
                "firstToolCallPattern" => {
                    let call = get("firstToolCall");
                    if !call.is_some_and(|c| c.contains(want)) {
                        mismatches
                            .push(format!("firstToolCall {call:?} does not contain {want:?}"));
                    }
                    continue;
                }
                _ => continue,
            };
            if !got.is_some_and(|g| tokens_match(want, g)) {
                mismatches.push(format!("{key}: expected `{want}`, observed {got:?}"));
            }
        }
        outcomes.push(Outcome {
            name: "routing",
            passed: mismatches.is_empty(),
            detail: mismatches.join("; "),
        });
    }
    let allowed = strings(e.get("allowedFirstToolCalls"));
    if !allowed.is_empty() {
        let call = text(e, "/routingDecision/firstToolCall");
        outcomes.push(Outcome {
            name: "firstToolCall",
            passed: call.is_some_and(|c| allowed.iter().any(|a| a == c)),
            detail: format!("first tool call {call:?} is not one of {allowed:?}"),
        });
    }
    // A judge's verdict on the reasoning is a check too (upstream lists it
    // among the expectation results).
    match text(e, "/reasoningSoundness/verdict") {
        Some("unsound") => outcomes.push(Outcome {
            name: "reasoningSoundness",
            passed: false,
            detail: "the reasoning was judged unsound".into(),
        }),
        Some("sound") => outcomes.push(Outcome {
            name: "reasoningSoundness",
            passed: true,
            detail: String::new(),
        }),
        _ => {}
    }
    let results: Map<String, Value> = outcomes
        .iter()
        .map(|o| {
            (
                o.name.to_string(),
                json!({"status": if o.passed { "passed" } else { "failed" }}),
            )
        })
        .collect();
    let failures: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.passed)
        .map(|o| format!("{}: {}", o.name, o.detail))
        .collect();
    if text(e, "/observationStatus") == Some("blocked") {
        let why = text(e, "/summary").unwrap_or("blocked");
        return (
            CaseStatus::Blocked,
            Value::Object(results),
            format!("blocked: {why}"),
        );
    }
    if outcomes.is_empty() {
        // Nothing to check is not a pass: the case was observed, no more.
        (
            CaseStatus::Unchecked,
            Value::Object(results),
            format!(
                "observed, but nothing was checked: the evaluation declares no expectations \
                 ({}, or assertions in the fixture)",
                EXPECTATIONS.join(", ")
            ),
        )
    } else if failures.is_empty() {
        let checked: Vec<&str> = outcomes.iter().map(|o| o.name).collect();
        (
            CaseStatus::Passed,
            Value::Object(results),
            format!("matched {}", checked.join(", ")),
        )
    } else {
        (
            CaseStatus::Failed,
            Value::Object(results),
            failures.join("; "),
        )
    }
}

pub fn evaluate(mut e: Value) -> Verdict {
    let case_id = evaluation_id(&e);
    let (status, results, summary) = score(&e);
    e["expectationResults"] = results;
    let body = e;
    Verdict::new(case_id, status, summary, body)
}
