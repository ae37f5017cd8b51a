//! `translate`: validates app cases and writes the cases packet.

use crate::preset::{CasePlan, packet};
use crate::{FieldError, Message};
use serde_json::{Map, Value, json};

use crate::app::{Problems, Shape, kind, non_empty_str};

/// Case fields each shape accepts.
fn case_fields(shape: Shape) -> &'static [&'static str] {
    match shape {
        Shape::Chat => &[
            "caseId",
            "displayName",
            "provider",
            "model",
            "system",
            "messages",
            "expected",
            "metadata",
        ],
        Shape::Prompt => &[
            "caseId",
            "displayName",
            "provider",
            "model",
            "system",
            "input",
            "expected",
            "metadata",
        ],
    }
}

/// Validates one case and returns its plan (the normalized case and its turns).
pub fn translate(
    shape: Shape,
    suite: &Map<String, Value>,
    case: &Value,
    at: &str,
) -> Result<CasePlan, Vec<FieldError>> {
    let mut problems = Problems::default();
    let Some(case) = case.as_object() else {
        problems.add(at, format!("a case must be an object, got {}", kind(case)));
        return Err(problems.0);
    };
    match check_case(shape, suite, case, at, &mut problems) {
        Some(normalized) if problems.0.is_empty() => Ok(plan(shape, normalized)),
        _ => Err(problems.0),
    }
}

/// The invocation fields of a normalized case.
fn plan(shape: Shape, body: Value) -> CasePlan {
    let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_string);
    let messages = match shape {
        Shape::Chat => body["messages"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|m| Message {
                        role: m["role"].as_str().unwrap_or_default().to_string(),
                        content: m["content"].as_str().unwrap_or_default().to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        Shape::Prompt => vec![Message {
            role: "user".into(),
            content: text("input").unwrap_or_default(),
        }],
    };
    let mut plan = CasePlan::new(text("caseId").unwrap_or_default(), Value::Null);
    plan.messages = messages;
    plan.system = text("system");
    plan.provider = text("provider");
    plan.model = text("model");
    plan.input = body.get("input").cloned();
    plan.expected = body.get("expected").filter(|v| !v.is_null()).cloned();
    plan.reference = packet::at(&body, &["expected", "finalText"])
        .or_else(|| packet::at(&body, &["expected", "snapshotText"]))
        .or_else(|| packet::at(&body, &["expected", "sources"]))
        .cloned();
    plan.body = body;
    plan
}

fn check_case(
    shape: Shape,
    suite: &Map<String, Value>,
    case: &Map<String, Value>,
    at: &str,
    problems: &mut Problems,
) -> Option<Value> {
    let before = problems.0.len();
    // Fields a misspelled key stands for: their own "is missing" would say
    // the same thing twice.
    let mut misspelled: Vec<&str> = Vec::new();
    for key in case.keys() {
        if !case_fields(shape).contains(&key.as_str()) {
            let guess = crate::suggest::unknown_case_field(key, case_fields(shape), |g| {
                case.contains_key(g)
            });
            misspelled.extend(guess.as_ref().map(|(field, _)| *field));
            let hint = match (shape, key.as_str(), guess) {
                (_, _, Some((_, hint))) => format!("; {hint}"),
                (Shape::Chat, "input", None) => {
                    "; app/chat cases take `messages` (use preset `prompt` for a single `input`)"
                        .to_string()
                }
                (Shape::Prompt, "messages", None) => {
                    "; app/prompt cases take one `input` (use preset `chat` for `messages`)"
                        .to_string()
                }
                _ => format!("; case fields are: {}", case_fields(shape).join(", ")),
            };
            problems.add(
                format!("{at}.{key}"),
                format!("unknown case field `{key}`{hint}"),
            );
        }
    }
    let case_id = match case.get("caseId") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        Some(Value::String(_)) => {
            problems.add(format!("{at}.caseId"), "must not be empty");
            String::new()
        }
        Some(other) => {
            problems.add(
                format!("{at}.caseId"),
                format!("must be a string, got {}", kind(other)),
            );
            String::new()
        }
        None => {
            if !misspelled.contains(&"caseId") {
                problems.add(format!("{at}.caseId"), "is missing (required)");
            }
            String::new()
        }
    };
    let string_field = |key: &str, problems: &mut Problems| -> Option<String> {
        match case.get(key).or_else(|| suite.get(key)) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                problems.add(
                    format!("{at}.{key}"),
                    format!("must be a string, got {}", kind(other)),
                );
                None
            }
        }
    };
    let provider = string_field("provider", problems);
    let model = string_field("model", problems);
    let system = string_field("system", problems);
    let display_name = string_field("displayName", problems).unwrap_or_else(|| case_id.clone());
    if provider.as_deref().is_none_or(|p| p.trim().is_empty()) {
        problems.add(
            format!("{at}.provider"),
            "is missing: set `provider` on the suite or the case (e.g. anthropic, openai)",
        );
    }
    if model.as_deref().is_none_or(|m| m.trim().is_empty()) {
        problems.add(
            format!("{at}.model"),
            "is missing: set `model` on the suite or the case (the app surface pins its model)",
        );
    }

    let mut normalized = json!({
        "caseId": case_id,
        "displayName": display_name,
        "provider": provider,
        "model": model,
        "system": system,
    });
    match shape {
        Shape::Chat if misspelled.contains(&"messages") => {}
        Shape::Chat => normalized["messages"] = check_messages(case.get("messages"), at, problems),
        Shape::Prompt => match non_empty_str(case.get("input")) {
            Some(input) => normalized["input"] = json!(input),
            None if misspelled.contains(&"input") => {}
            None => problems.add(
                format!("{at}.input"),
                "is missing or empty: app/prompt cases need an `input` string",
            ),
        },
    }
    if let Some(expected) = case.get("expected") {
        normalized["expected"] = check_expected(expected, at, problems);
    }
    match case.get("metadata") {
        None | Some(Value::Null) => {}
        Some(metadata @ Value::Object(_)) => normalized["metadata"] = metadata.clone(),
        Some(other) => problems.add(
            format!("{at}.metadata"),
            format!(
                "must be an object (free-form data carried to the records and scorers), got {}",
                kind(other)
            ),
        ),
    }
    (problems.0.len() == before).then_some(normalized)
}

fn check_messages(messages: Option<&Value>, at: &str, problems: &mut Problems) -> Value {
    let path = format!("{at}.messages");
    let Some(list) = messages.and_then(Value::as_array) else {
        problems.add(
            &path,
            "is missing: app/chat cases need a non-empty `messages` list",
        );
        return Value::Null;
    };
    if list.is_empty() {
        problems.add(&path, "is empty: give at least one user message");
        return Value::Null;
    }
    for (j, message) in list.iter().enumerate() {
        let at = format!("{path}[{j}]");
        let Some(message) = message.as_object() else {
            problems.add(
                &at,
                format!(
                    "a message must be an object with `role` and `content`, got {}",
                    kind(message)
                ),
            );
            continue;
        };
        match message.get("role").and_then(Value::as_str) {
            Some("user" | "assistant") => {}
            Some(other) => problems.add(
                format!("{at}.role"),
                format!(
                    "must be `user` or `assistant`, got `{other}` (put system text in `system`)"
                ),
            ),
            None => problems.add(format!("{at}.role"), "is missing: `user` or `assistant`"),
        }
        if non_empty_str(message.get("content")).is_none() {
            problems.add(format!("{at}.content"), "is missing or empty");
        }
        for key in message.keys().filter(|k| *k != "role" && *k != "content") {
            problems.add(
                format!("{at}.{key}"),
                format!("unknown message field `{key}`; messages have `role` and `content`"),
            );
        }
    }
    if let Some(last) = list
        .last()
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
        && last != "user"
    {
        problems.add(
            format!("{path}[{}].role", list.len() - 1),
            format!("the last message must be from `user` (got `{last}`): the model answers the last user turn"),
        );
    }
    Value::Array(list.clone())
}

/// `expected.sources`: what a retrieval scorer compares the retrieved
/// list with, `[{sourceId, chunkId?}]` or source ids.
fn check_sources(sources: &Value, path: &str, problems: &mut Problems) {
    let Some(list) = sources.as_array() else {
        problems.add(
            path,
            format!("must be a list of sources, got {}", kind(sources)),
        );
        return;
    };
    for (i, source) in list.iter().enumerate() {
        let ok = match source {
            Value::String(id) => !id.is_empty(),
            Value::Object(o) => {
                o.get("sourceId")
                    .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                    && o.keys().all(|k| k == "sourceId" || k == "chunkId")
            }
            _ => false,
        };
        if !ok {
            problems.add(
                format!("{path}[{i}]"),
                "a source is a non-empty id or `{sourceId, chunkId?}`",
            );
        }
    }
}

fn check_expected(expected: &Value, at: &str, problems: &mut Problems) -> Value {
    let path = format!("{at}.expected");
    let Some(object) = expected.as_object() else {
        problems.add(
            &path,
            format!("must be an object with `finalText`, got {}", kind(expected)),
        );
        return Value::Null;
    };
    match (object.get("finalText"), object.get("snapshot")) {
        (Some(_), Some(_)) => problems.add(
            &path,
            "declares both `finalText` and `snapshot`; they are mutually exclusive, keep one",
        ),
        (None, Some(snapshot)) => {
            if non_empty_str(Some(snapshot)).is_none() {
                problems.add(
                    format!("{path}.snapshot"),
                    "must be a path to a golden file, relative to the fixture",
                );
            } else if !object.get("snapshotText").is_some_and(Value::is_string) {
                problems.add(
                    format!("{path}.snapshot"),
                    "the golden file was not read: run the fixture through `cautilus eval test`, which reads it into `snapshotText`",
                );
            }
        }
        // Sources alone: what retrieval scorers compare with.
        (None, None) if object.contains_key("sources") => {}
        (None, None) => problems.add(&path, "must declare `finalText`, `snapshot` or `sources`"),
        (Some(text), None) => {
            if non_empty_str(Some(text)).is_none() {
                problems.add(format!("{path}.finalText"), "must be a non-empty string");
            }
        }
    }
    if let Some(sources) = object.get("sources") {
        check_sources(sources, &format!("{path}.sources"), problems);
    }
    for key in object
        .keys()
        .filter(|k| !["finalText", "snapshot", "snapshotText", "sources"].contains(&k.as_str()))
    {
        problems.add(
            format!("{path}.{key}"),
            format!(
                "unknown expectation `{key}`; app presets expect `finalText`, `snapshot` or `sources`"
            ),
        );
    }
    expected.clone()
}
