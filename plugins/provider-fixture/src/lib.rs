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

use cautilus_sdk::provider::{Invocation, Provider, ProviderInfo};
use cautilus_sdk::{Message, Observation, PluginError, export_provider, plugin_info};
use serde_json::Value;

struct Fixture;

fn observation(mode: &str) -> Observation {
    Observation {
        final_text: None,
        messages: Vec::new(),
        tool_calls: None,
        usage: None,
        cost_usd: None,
        // Deterministic, like the upstream fixture backend.
        duration_ms: Some(1),
        provider: None,
        model: None,
        harness: Some("fixture-backend".into()),
        mode: Some(mode.into()),
        structured: None,
    }
}

fn messaging(request: &Invocation, canned: Option<Value>) -> Result<Observation, PluginError> {
    let mut out = observation("messaging");
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

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        let options: Value = match request.options.as_deref() {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| PluginError::failed(format!("options are not JSON: {e}")))?,
            None => Value::Null,
        };
        let canned = options.get("canned").cloned();
        match request.mode.as_str() {
            "messaging" => messaging(&request, canned),
            "workspace" => workspace(&request, canned),
            other => Err(PluginError::failed(format!(
                "unknown mode `{other}`; the fixture backend serves messaging and workspace"
            ))),
        }
    }
}

export_provider!(Fixture);
