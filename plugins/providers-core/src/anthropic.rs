//! The `anthropic` provider (harness `anthropic-api`): one Messages API
//! call per case, through the host's `http` import.
//!
//! The host passes the base URL (`ANTHROPIC_BASE_URL`, default
//! `https://api.anthropic.com`) and the name of the secret it sends as
//! `x-api-key` (`ANTHROPIC_API_KEY`, required by the API). The suite's
//! `system` is the request's top-level `system`; a `system` message inside
//! the case's messages is added to it (the Messages API has no system
//! role); the other messages go as they are. `max_tokens`, which the API
//! requires, defaults to 1024. Usage counts cache writes and reads as
//! input (`cachedInputTokens` = cache reads); the model recorded is the
//! one the response names. The API does not report cost.

use crate::api::{ApiOptions, count};
use cautilus_sdk::provider::Invocation;
use cautilus_sdk::{Observation, PluginError, Usage};
use serde_json::{Value, json};

pub const NAME: &str = "anthropic";
/// The API version this adapter speaks.
pub const API_VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The Messages API request body of an invocation.
pub fn request_body(request: &Invocation, options: &ApiOptions) -> Result<Value, PluginError> {
    let model = crate::api::pinned_model(NAME, request, "e.g. claude-sonnet-4-5")?;
    let mut system: Vec<&str> = request
        .system
        .as_deref()
        .filter(|s| !s.is_empty())
        .into_iter()
        .collect();
    let mut messages = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        if message.role == "system" {
            system.push(&message.content);
        } else {
            messages.push(json!({ "role": message.role, "content": message.content }));
        }
    }
    let mut body = json!({
        "model": model,
        "max_tokens": options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if let Some(t) = options.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(p) = options.top_p {
        body["top_p"] = json!(p);
    }
    if let Some(stop) = &options.stop {
        body["stop_sequences"] = json!(stop);
    }
    // The Messages API takes no seed: the host records `seed` as not
    // applied for this provider.
    Ok(body)
}

/// The observation of a Messages API response: the text blocks joined.
pub fn observation(
    request: &Invocation,
    answer: &Value,
    retries: u32,
) -> Result<Observation, PluginError> {
    let blocks = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            PluginError::failed(format!(
                "{NAME}: the response has no `content` list: {}",
                answer.to_string().chars().take(300).collect::<String>()
            ))
        })?;
    let text: String = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("");
    let usage = answer.get("usage").map(|u| {
        let input = count(u.get("input_tokens"));
        let written = count(u.get("cache_creation_input_tokens"));
        let read = count(u.get("cache_read_input_tokens"));
        let total_input = match (input, written, read) {
            (None, None, None) => None,
            (a, b, c) => Some(
                a.unwrap_or(0)
                    .saturating_add(b.unwrap_or(0))
                    .saturating_add(c.unwrap_or(0)),
            ),
        };
        Usage {
            input_tokens: total_input,
            output_tokens: count(u.get("output_tokens")),
            cached_input_tokens: read,
            reasoning_tokens: None,
            llm_calls: Some(1),
        }
    });
    Ok(crate::api::observed(
        NAME,
        "anthropic-api",
        request,
        answer,
        &text,
        usage,
        retries,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cautilus_sdk::Message;

    fn invocation() -> Invocation {
        Invocation {
            case_id: "c1".into(),
            mode: "messaging".into(),
            model: Some("claude-x".into()),
            system: Some("Be brief.".into()),
            messages: vec![
                Message {
                    role: "system".into(),
                    content: "Answer in French.".into(),
                },
                Message {
                    role: "user".into(),
                    content: "Hi".into(),
                },
            ],
            input: None,
            expected: None,
            options: None,
        }
    }

    #[test]
    fn system_text_is_top_level_and_max_tokens_is_always_sent() {
        let options: ApiOptions = serde_json::from_str(r#"{"baseUrl": "http://x"}"#).unwrap();
        let body = request_body(&invocation(), &options).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude-x",
                "max_tokens": 1024,
                "system": "Be brief.\n\nAnswer in French.",
                "messages": [{"role": "user", "content": "Hi"}]
            })
        );
    }

    #[test]
    fn generation_settings_go_by_the_apis_names() {
        let options: ApiOptions = serde_json::from_str(
            r#"{"baseUrl": "http://x", "temperature": 0, "maxTokens": 32, "topP": 0.5, "seed": 3, "stop": ["END"]}"#,
        )
        .unwrap();
        let body = request_body(&invocation(), &options).unwrap();
        assert_eq!(body["temperature"], json!(0.0));
        assert_eq!(body["max_tokens"], json!(32));
        assert_eq!(body["top_p"], json!(0.5));
        assert_eq!(body["stop_sequences"], json!(["END"]));
        assert!(body.get("seed").is_none(), "the Messages API takes no seed");
    }

    #[test]
    fn text_blocks_join_and_cache_tokens_count_as_input() {
        let answer = json!({
            "model": "claude-x-20250101",
            "content": [{"type": "text", "text": "Bon"}, {"type": "tool_use", "id": "t"},
                        {"type": "text", "text": "jour"}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 5,
                      "cache_read_input_tokens": 20, "output_tokens": 2}
        });
        let observed = observation(&invocation(), &answer, 0).unwrap();
        assert_eq!(observed.final_text.as_deref(), Some("Bonjour"));
        assert_eq!(observed.model.as_deref(), Some("claude-x-20250101"));
        let usage = observed.usage.unwrap();
        assert_eq!(usage.input_tokens, Some(35));
        assert_eq!(usage.cached_input_tokens, Some(20));
        assert_eq!(usage.output_tokens, Some(2));
    }
}
