//! translate, collect and evaluate for repo/whole-repo.

use cautilus_sdk::preset::packet::{copy_fields, evaluation_id, run_fields};
use cautilus_sdk::preset::{CasePlan, CaseRun, CaseStatus, Verdict};
use cautilus_sdk::{FieldError, Message};
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
    for key in object.keys().filter(|k| !CASE_FIELDS.contains(&k.as_str())) {
        let hint = if key == "expected" {
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
    plan.messages = vec![Message {
        role: "user".into(),
        content: text("prompt").unwrap_or_default(),
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
    let structured = run
        .samples
        .first()
        .and_then(|s| s.outcome.as_ref().ok())
        .and_then(|o| o.structured.as_deref())
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_object);
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
            e.insert("blockerKind".into(), json!("no_observation"));
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
