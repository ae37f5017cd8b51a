//! The `fixture` provider (harness `fixture-backend`): deterministic
//! observations for tests and smoke runs, without any model.
//!
//! The host passes the case's canned result (from `--fixture-results`, keyed
//! by caseId) as `options.canned`:
//! - messaging mode (app presets): a string is the final text; an object may
//!   give `finalText` and `messages`. Without one, the answer is
//!   `Fixture response includes <expected.finalText>.`, or
//!   `Fixture response for <caseId>.` when the case expects nothing.
//! - workspace mode (repo presets): the canned value (an observation object,
//!   or for skill an array with one observation per repeat sample) is
//!   returned as structured output; without one the case is blocked.
//! - in both modes a canned object may give `toolCalls`, the calls the
//!   answer made (`[{name, arguments?, output?, succeeded?, durationMs?}]`),
//!   so tool-trajectory assertions can be tried without an agent. Without
//!   it, tool calls are not captured (`none`), never an empty list.
//!
//! Judge mode: when the host calls this provider as the run's judge model
//! (messaging mode, `options.purpose == "judge"`, no `canned` value), it
//! answers the `judge` scorer deterministically. It reads `criterion` and
//! `answer` from the last user message (the judge scorer's JSON message) and
//! applies [`fixture_verdict`]: every phrase quoted in the criterion ("…",
//! `…` or “…”) must occur in the answer, ignoring case; a criterion without
//! quoted phrases passes any non-empty answer. The final text is the verdict
//! `{"passed": …, "score": 1.0 or 0.0, "reasoning": "fixture judge: …"}`;
//! when the message lists `choices` (the judge's choice mode, best first),
//! `{"reasoning": …, "choice": <the first label if it passes, else the last>}`.
//! This is a stand-in that makes judge runs reproducible in tests and smoke
//! runs, not a semantic judgement.
//!
//! Embeddings: as the run's judge it gives stand-in vectors for the
//! `embedding-similarity` scorer ([`embed`]: a hashed bag of words, model
//! `fixture-embedding`).

mod embed;

use cautilus_sdk::provider::{
    EmbedRequest, EmbedResponse, Embedder, Invocation, Needs, Provider, ProviderInfo,
};
use cautilus_sdk::{
    Message, Observation, PluginError, ToolCall, Usage, export_provider, plugin_info,
};
use serde_json::{Value, json};

struct Fixture;

fn observation(mode: &str) -> Observation {
    Observation {
        // Deterministic, like the upstream fixture backend.
        duration_ms: Some(1),
        harness: Some("fixture-backend".into()),
        mode: Some(mode.into()),
        ..Observation::empty()
    }
}

fn messaging(request: &Invocation, canned: Option<Value>) -> Result<Observation, PluginError> {
    let mut out = observation("messaging");
    let canned_calls = canned.as_ref().and_then(|c| c.get("toolCalls")).cloned();
    let identity = canned.clone().filter(Value::is_object);
    let mut messages = request.messages.clone();
    let final_text = match canned {
        Some(Value::String(text)) => text,
        Some(Value::Object(object)) => {
            if let Some(list) = object.get("messages") {
                messages = Vec::new();
                for (i, m) in list.as_array().into_iter().flatten().enumerate() {
                    let role = m.get("role").and_then(Value::as_str);
                    let content = m.get("content").and_then(Value::as_str);
                    match (role, content) {
                        (Some(role), Some(content)) => messages.push(Message {
                            role: role.into(),
                            content: content.into(),
                        }),
                        _ => {
                            return Err(PluginError::input(
                                format!("{}.messages[{i}]", request.case_id),
                                "a canned message needs string `role` and `content`",
                            ));
                        }
                    }
                }
            }
            match object.get("finalText") {
                Some(Value::String(text)) => text.clone(),
                _ => messages
                    .last()
                    .map(|m| m.content.clone())
                    .unwrap_or_default(),
            }
        }
        Some(other) => {
            return Err(PluginError::input(
                request.case_id.clone(),
                format!("a canned app result must be a string or an object, got {other}"),
            ));
        }
        None => {
            let expected: Option<Value> = request
                .expected
                .as_deref()
                .and_then(|e| serde_json::from_str(e).ok());
            match expected
                .as_ref()
                .and_then(|e| e.get("finalText"))
                .and_then(Value::as_str)
            {
                Some(want) => format!("Fixture response includes {want}."),
                None => format!("Fixture response for {}.", request.case_id),
            }
        }
    };
    if messages
        .last()
        .is_none_or(|m| m.role != "assistant" || m.content != final_text)
    {
        messages.push(Message {
            role: "assistant".into(),
            content: final_text.clone(),
        });
    }
    out.final_text = Some(final_text);
    out.messages = messages;
    out.tool_calls = canned_tool_calls(request, canned_calls.as_ref())?;
    if let Some(Value::Object(object)) = &identity {
        apply_identity(&mut out, object);
    }
    Ok(out)
}

/// What a canned object says of the answer it stands for (a recorded
/// output reused, `--reuse-outputs`): who answered, usage, cost, time.
fn apply_identity(out: &mut Observation, object: &serde_json::Map<String, Value>) {
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
    if let Some(provider) = text("provider") {
        out.provider = Some(provider);
    }
    if let Some(model) = text("model") {
        out.model = Some(model);
    }
    if let Some(harness) = text("harness") {
        out.harness = Some(harness);
    }
    if let Some(ms) = object.get("durationMs").and_then(Value::as_u64) {
        out.duration_ms = Some(ms);
    }
    if let Some(usd) = object.get("costUsd").and_then(Value::as_f64) {
        out.cost_usd = Some(usd);
        out.cost_source = text("costSource").or(Some("reported".into()));
    }
    if let Some(usage) = object.get("usage").and_then(Value::as_object) {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        out.usage = Some(Usage {
            input_tokens: count("inputTokens"),
            output_tokens: count("outputTokens"),
            cached_input_tokens: count("cachedInputTokens"),
            reasoning_tokens: count("reasoningTokens"),
            llm_calls: count("llmCalls").and_then(|n| u32::try_from(n).ok()),
        });
    }
}

/// A canned result's `toolCalls`, if it gives them.
fn canned_tool_calls(
    request: &Invocation,
    calls: Option<&Value>,
) -> Result<Option<Vec<ToolCall>>, PluginError> {
    let Some(calls) = calls else {
        return Ok(None);
    };
    let at = |i: usize| format!("{}.toolCalls[{i}]", request.case_id);
    let Some(list) = calls.as_array() else {
        return Err(PluginError::input(
            format!("{}.toolCalls", request.case_id),
            "must be a list of {name, arguments?, output?, succeeded?, durationMs?}",
        ));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, call) in list.iter().enumerate() {
        let Some(name) = call.get("name").and_then(Value::as_str) else {
            return Err(PluginError::input(
                at(i),
                "a tool call needs a string `name`",
            ));
        };
        for key in call.as_object().into_iter().flat_map(|o| o.keys()) {
            if !["name", "arguments", "output", "succeeded", "durationMs"].contains(&key.as_str()) {
                return Err(PluginError::input(
                    format!("{}.{key}", at(i)),
                    "unknown field; a tool call has name, arguments, output, succeeded, durationMs",
                ));
            }
        }
        out.push(ToolCall {
            name: name.to_string(),
            arguments: call.get("arguments").map(Value::to_string),
            output: call
                .get("output")
                .and_then(Value::as_str)
                .map(str::to_string),
            succeeded: call.get("succeeded").and_then(Value::as_bool),
            duration_ms: call.get("durationMs").and_then(Value::as_u64),
        });
    }
    Ok(Some(out))
}

/// The phrases quoted in `criterion`: text between "…", `…` or “…”, in
/// order (empty quotes are skipped, an unclosed quote is ignored).
pub fn quoted_phrases(criterion: &str) -> Vec<String> {
    let mut phrases = Vec::new();
    let mut rest = criterion;
    while let Some((start, open)) = rest
        .char_indices()
        .find(|(_, c)| matches!(c, '"' | '`' | '“'))
    {
        let close = if open == '“' { '”' } else { open };
        let inner = &rest[start + open.len_utf8()..];
        let Some(end) = inner.find(close) else {
            // An unclosed quote: look for other quotes after it.
            rest = inner;
            continue;
        };
        let phrase = inner[..end].trim();
        if !phrase.is_empty() {
            phrases.push(phrase.to_string());
        }
        rest = &inner[end + close.len_utf8()..];
    }
    phrases
}

/// The fixture judge's rule: with quoted phrases in the criterion, passed =
/// the answer contains every one (ignoring case); without any, passed = the
/// answer is not blank. Returns the verdict and its reasoning.
pub fn fixture_verdict(criterion: &str, answer: &str) -> (bool, String) {
    let phrases = quoted_phrases(criterion);
    if phrases.is_empty() {
        let passed = !answer.trim().is_empty();
        let what = if passed { "non-empty" } else { "empty" };
        return (
            passed,
            format!("fixture judge: no quoted phrases in the criterion; the answer is {what}"),
        );
    }
    let haystack = answer.to_lowercase();
    let (found, missing): (Vec<&String>, Vec<&String>) = phrases
        .iter()
        .partition(|p| haystack.contains(&p.to_lowercase()));
    let mut reasoning = String::from("fixture judge:");
    if !found.is_empty() {
        reasoning.push_str(&format!(" found {found:?}"));
    }
    if !missing.is_empty() {
        if !found.is_empty() {
            reasoning.push(';');
        }
        reasoning.push_str(&format!(" missing {missing:?}"));
    }
    (missing.is_empty(), reasoning)
}

/// Answers the `judge` scorer's request with [`fixture_verdict`].
fn judge(request: &Invocation) -> Result<Observation, PluginError> {
    let need = "the fixture judge needs the judge scorer's JSON message \
        ({\"criterion\": string, \"answer\": string, …}) as the last user message";
    let Some((index, message)) = request
        .messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.role == "user")
    else {
        return Err(PluginError::input(
            format!("{}.messages", request.case_id),
            format!("no user message; {need}"),
        ));
    };
    let parsed: Option<Value> = serde_json::from_str(&message.content).ok();
    let field = |name: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(name))
            .and_then(Value::as_str)
    };
    let (Some(criterion), Some(answer)) = (field("criterion"), field("answer")) else {
        return Err(PluginError::input(
            format!("{}.messages[{index}].content", request.case_id),
            format!(
                "{need}; got {}",
                cautilus_sdk::excerpt(&message.content, 120)
            ),
        ));
    };
    let (passed, reasoning) = fixture_verdict(criterion, answer);
    // Choice mode: the best label when the verdict passes, else the worst.
    let choices: Vec<&str> = parsed
        .as_ref()
        .and_then(|v| v.get("choices"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = match (choices.first(), choices.last()) {
        (Some(best), Some(worst)) => json!({
            "reasoning": reasoning,
            "choice": if passed { best } else { worst },
        }),
        _ => json!({
            "passed": passed,
            "score": if passed { 1.0 } else { 0.0 },
            "reasoning": reasoning,
        }),
    }
    .to_string();
    let mut out = observation("messaging");
    out.model = Some(request.model.clone().unwrap_or_else(|| "fixture".into()));
    out.messages = request.messages.clone();
    out.messages.push(Message {
        role: "assistant".into(),
        content: text.clone(),
    });
    out.final_text = Some(text);
    out.usage = Some(Usage {
        input_tokens: None,
        output_tokens: None,
        cached_input_tokens: None,
        reasoning_tokens: None,
        llm_calls: Some(1),
    });
    Ok(out)
}

fn workspace(request: &Invocation, canned: Option<Value>) -> Result<Observation, PluginError> {
    let Some(canned) = canned else {
        return Err(PluginError::failed(format!(
            "blocked: the fixture backend has no canned observation for case `{}`; add it to --fixture-results",
            request.case_id
        )));
    };
    let mut out = observation("workspace");
    // Repo cases pin no model; record which backend answered, never nothing.
    out.model = Some(request.model.clone().unwrap_or_else(|| "fixture".into()));
    out.final_text = canned
        .get("summary")
        .and_then(Value::as_str)
        .map(str::to_string);
    out.tool_calls = canned_tool_calls(request, canned.get("toolCalls"))?;
    out.structured = Some(canned.to_string());
    Ok(out)
}

impl Provider for Fixture {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(),
            harness: "fixture-backend".into(),
            modes: vec!["messaging".into(), "workspace".into()],
        }
    }

    fn needs() -> Needs {
        // Canned answers: no generation setting reaches them.
        Needs {
            settings_applied: Some(Vec::new()),
            ..Needs::default()
        }
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        let options: Value = match request.options.as_deref() {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| PluginError::failed(format!("options are not JSON: {e}")))?,
            None => Value::Null,
        };
        let canned = options.get("canned").cloned();
        let purpose = options.get("purpose").and_then(Value::as_str);
        if canned.is_none()
            && purpose != Some("judge")
            && options.get("requireCanned") == Some(&Value::Bool(true))
        {
            return Err(PluginError::failed(format!(
                "no recorded output for case `{}` in the run whose outputs are reused",
                request.case_id
            )));
        }
        match request.mode.as_str() {
            "messaging" if purpose == Some("judge") && canned.is_none() => judge(&request),
            "messaging" => messaging(&request, canned),
            "workspace" => workspace(&request, canned),
            other => Err(PluginError::failed(format!(
                "unknown mode `{other}`; the fixture backend serves messaging and workspace"
            ))),
        }
    }

    fn embedder() -> Option<Embedder> {
        Some(embed::embedder())
    }

    fn embed(request: EmbedRequest) -> Result<EmbedResponse, PluginError> {
        Ok(embed::embed(&request.inputs))
    }
}

export_provider!(Fixture);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_come_from_straight_curly_and_back_quotes() {
        assert_eq!(
            quoted_phrases(r#"mentions "refund", `30 days` and “store credit”; "" is skipped"#),
            ["refund", "30 days", "store credit"]
        );
        assert_eq!(quoted_phrases("is polite and brief"), Vec::<String>::new());
        assert_eq!(quoted_phrases(r#"an unclosed " quote, then `x`"#), ["x"]);
        assert_eq!(
            quoted_phrases(r#"mixed "it's `fine`" here"#),
            ["it's `fine`"]
        );
    }

    #[test]
    fn every_quoted_phrase_must_occur_ignoring_case() {
        let criterion = r#"mentions "Refund" and `30 days`"#;
        let (passed, why) = fixture_verdict(criterion, "A refund within 30 DAYS.");
        assert!(passed, "{why}");
        let (passed, why) = fixture_verdict(criterion, "A refund, soon.");
        assert!(!passed);
        assert_eq!(
            why,
            r#"fixture judge: found ["Refund"]; missing ["30 days"]"#
        );
    }

    fn judge_call(messages: Vec<Message>) -> Result<Observation, PluginError> {
        Fixture::invoke(Invocation {
            case_id: "judge".into(),
            mode: "messaging".into(),
            model: None,
            system: Some("grade it".into()),
            messages,
            input: None,
            expected: None,
            options: Some(r#"{"purpose": "judge", "other": 1}"#.into()),
        })
    }

    fn user(content: &str) -> Message {
        Message {
            role: "user".into(),
            content: content.into(),
        }
    }

    #[test]
    fn judge_mode_answers_the_judge_message_with_a_verdict() {
        let message = r#"{"criterion":"says \"hello\"","input":null,"reference":null,"answer":"Hello there"}"#;
        let out = judge_call(vec![user(message)]).unwrap_or_else(|_| panic!("judge call failed"));
        let verdict: Value = serde_json::from_str(out.final_text.as_deref().unwrap()).unwrap();
        assert_eq!(verdict["passed"], json!(true));
        assert_eq!(verdict["score"], json!(1.0));
        assert_eq!(out.messages.len(), 2);
        assert_eq!(out.messages[1].role, "assistant");
        assert_eq!(out.usage.and_then(|u| u.llm_calls), Some(1));

        let err = judge_call(vec![user("not json")]).err().unwrap();
        assert!(
            matches!(&err, PluginError::InvalidInput(fields) if fields[0].path == "judge.messages[0].content"
                && fields[0].message.contains("judge scorer's JSON message"))
        );
    }

    #[test]
    fn without_quotes_any_non_blank_answer_passes() {
        assert!(fixture_verdict("is helpful", "sure").0);
        let (passed, why) = fixture_verdict("is helpful", "  ");
        assert!(!passed);
        assert!(why.contains("empty"), "{why}");
    }
}
