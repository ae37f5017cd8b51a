//! The `openai` provider (harness `openai-api`): one OpenAI-compatible
//! Chat Completions call per case, through the host's `http` import.
//!
//! Works against any compatible server (OpenAI, llama.cpp server, vLLM,
//! Ollama): the host passes the base URL (`OPENAI_BASE_URL`, default
//! `https://api.openai.com/v1`) and, when `OPENAI_API_KEY` is set, the
//! name of the secret the host sends as `Authorization: Bearer …`. The
//! suite's `system` goes first as a `system` message, then the case's
//! messages as they are. Usage comes from the response's `usage`; the
//! model recorded is the one the response names (the one that answered).
//! OpenAI's API does not report cost, so `costUsd` is left out.
//!
//! With `stream` (`[providers.openai] stream = true`) the answer is asked
//! for as a server-sent event stream (`stream_options.include_usage`, for
//! the token counts) and folded back into the answer the server would have
//! sent whole ([`fold_stream`]): the host then times the first token.

use crate::api::{ApiOptions, count};
use crate::http_stream::sse_data;
use cautilus_sdk::provider::Invocation;
use cautilus_sdk::{Observation, PluginError, Usage};
use serde_json::{Value, json};

pub const NAME: &str = "openai";

/// The Chat Completions request body of an invocation.
pub fn request_body(request: &Invocation, options: &ApiOptions) -> Result<Value, PluginError> {
    let model = crate::api::pinned_model(NAME, request, "the model the server serves")?;
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({ "role": "system", "content": system }));
    }
    for message in &request.messages {
        messages.push(json!({ "role": message.role, "content": message.content }));
    }
    let mut body = json!({ "model": model, "messages": messages });
    if let Some(t) = options.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(n) = options.max_tokens {
        body["max_tokens"] = json!(n);
    }
    if let Some(p) = options.top_p {
        body["top_p"] = json!(p);
    }
    if let Some(seed) = options.seed {
        body["seed"] = json!(seed);
    }
    if let Some(stop) = &options.stop {
        body["stop"] = json!(stop);
    }
    if options.stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({ "include_usage": true });
    }
    Ok(body)
}

/// The Chat Completions answer a streamed one adds up to: the text of the
/// first choice's deltas, the model, the last `finish_reason` and the
/// `usage` chunk, when the server sends one (not every compatible server
/// honours `include_usage`; without it the tokens are not captured). An
/// `error` event, or a stream whose first choice never got a
/// `finish_reason`, is an error, `[DONE]` or not: a cut-short answer must
/// not pass for a short one (llama-cpp-python ends a streamed answer with
/// `[DONE]` and no `finish_reason` when another request arrives, unless it
/// runs with `--interrupt_requests false`).
pub fn fold_stream(text: &str) -> Result<Value, String> {
    let mut answer = String::new();
    let mut model: Option<String> = None;
    let mut usage: Option<Value> = None;
    let mut finish: Option<Value> = None;
    let mut chunks = 0usize;
    for data in sse_data(text) {
        if data.trim() == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(&data)
            .map_err(|e| format!("has an event that is not JSON ({e}): {}", clip(&data)))?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string);
            return Err(format!("reported an error: {}", clip(&message)));
        }
        chunks += 1;
        if model.is_none() {
            model = chunk
                .get("model")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string);
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            usage = Some(u.clone());
        }
        let first = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| {
                choices
                    .iter()
                    .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            });
        if let Some(choice) = first {
            if let Some(piece) = choice.pointer("/delta/content").and_then(Value::as_str) {
                answer.push_str(piece);
            }
            if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
                finish = Some(reason.clone());
            }
        }
    }
    if chunks == 0 {
        return Err("holds no answer".into());
    }
    if finish.is_none() {
        return Err("ended before the answer was finished (no `finish_reason`): the server cut it short (llama-cpp-python does so when another request arrives, unless started with `--interrupt_requests false`)".into());
    }
    let mut whole = json!({
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": answer },
            "finish_reason": finish,
        }],
    });
    if let Some(model) = model {
        whole["model"] = json!(model);
    }
    if let Some(usage) = usage {
        whole["usage"] = usage;
    }
    Ok(whole)
}

fn clip(text: &str) -> String {
    text.chars().take(300).collect()
}

/// The observation of a Chat Completions response.
pub fn observation(
    request: &Invocation,
    answer: &Value,
    retries: u32,
) -> Result<Observation, PluginError> {
    let choice = answer.pointer("/choices/0/message").ok_or_else(|| {
        PluginError::failed(format!(
            "{NAME}: the response has no `choices[0].message`: {}",
            excerpt(answer)
        ))
    })?;
    let text = choice
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let usage = answer.get("usage").map(|u| Usage {
        input_tokens: count(u.get("prompt_tokens")),
        output_tokens: count(u.get("completion_tokens")),
        cached_input_tokens: count(u.pointer("/prompt_tokens_details/cached_tokens")),
        reasoning_tokens: count(u.pointer("/completion_tokens_details/reasoning_tokens")),
        llm_calls: Some(1),
    });
    let mut observed =
        crate::api::observed(NAME, "openai-api", request, answer, text, usage, retries);
    // The API reports tokens, not money: a model in the OpenAI price table
    // is priced from them (`derived:<table>`); any other model has no cost.
    if let (Some(usage), Some(model)) = (&observed.usage, &observed.model) {
        let cost = crate::prices::cost(
            model,
            usage.input_tokens.unwrap_or(0),
            usage.cached_input_tokens.unwrap_or(0),
            usage.output_tokens.unwrap_or(0),
        );
        if let Some(usd) = cost {
            observed.cost_usd = Some(usd);
            observed.cost_source = Some(format!("derived:{}", crate::prices::TABLE));
        }
    }
    Ok(observed)
}

fn excerpt(value: &Value) -> String {
    value.to_string().chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cautilus_sdk::Message;

    fn invocation(model: Option<&str>) -> Invocation {
        Invocation {
            case_id: "c1".into(),
            mode: "messaging".into(),
            model: model.map(str::to_string),
            system: Some("Be brief.".into()),
            messages: vec![
                Message {
                    role: "user".into(),
                    content: "Hi".into(),
                },
                Message {
                    role: "assistant".into(),
                    content: "Hello".into(),
                },
                Message {
                    role: "user".into(),
                    content: "2+2?".into(),
                },
            ],
            input: None,
            expected: None,
            options: None,
        }
    }

    fn options(extra: &str) -> ApiOptions {
        serde_json::from_str(&format!(r#"{{"baseUrl": "http://x/v1"{extra}}}"#)).unwrap()
    }

    #[test]
    fn a_streamed_answer_asks_for_its_usage() {
        let body = request_body(&invocation(Some("m")), &options(r#", "stream": true"#)).unwrap();
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        let whole = request_body(&invocation(Some("m")), &options("")).unwrap();
        assert!(whole.get("stream").is_none() && whole.get("stream_options").is_none());
    }

    /// `(data, …)` as an event stream, each event ended by a blank line.
    fn stream(events: &[&str]) -> String {
        events.iter().map(|e| format!("data: {e}\n\n")).collect()
    }

    fn chunk(model: &str, content: Option<&str>, finish: Option<&str>) -> String {
        json!({"object": "chat.completion.chunk", "model": model,
               "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]})
        .to_string()
    }

    #[test]
    fn a_stream_folds_into_the_whole_answer() {
        let usage = json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 3}})
            .to_string();
        let text = format!(
            ": ping\n\n{}",
            stream(&[
                &chunk("m-1", Some("Hel"), None),
                &chunk("m-1", Some("lo, é"), None),
                &chunk("m-1", None, Some("stop")),
                &usage,
                "[DONE]",
            ])
        );
        let whole = fold_stream(&text).unwrap();
        assert_eq!(whole["choices"][0]["message"]["content"], "Hello, é");
        assert_eq!(whole["choices"][0]["finish_reason"], "stop");
        assert_eq!(whole["model"], "m-1");
        // Read as a whole answer is.
        let observed = observation(&invocation(Some("m")), &whole, 0).unwrap();
        assert_eq!(observed.final_text.as_deref(), Some("Hello, é"));
        let counted = observed.usage.unwrap();
        assert_eq!(
            (counted.input_tokens, counted.output_tokens),
            (Some(9), Some(3))
        );

        // CRLF line ends, a data line split in two `data:` fields, no
        // space after the colon, and no usage chunk (llama-cpp-python).
        let split = "data:{\"model\": \"m\", \"choices\": [{\"delta\":\r\ndata: {\"content\": \"ok\"}, \"finish_reason\": \"length\"}]}\r\n\r\ndata: [DONE]\r\n\r\n";
        let whole = fold_stream(split).unwrap();
        assert_eq!(whole["choices"][0]["message"]["content"], "ok");
        assert_eq!(whole["choices"][0]["finish_reason"], "length");
        assert!(whole.get("usage").is_none());
        assert!(
            observation(&invocation(Some("m")), &whole, 0)
                .unwrap()
                .usage
                .is_none()
        );
    }

    #[test]
    fn a_broken_stream_is_an_error_not_a_short_answer() {
        let cases: &[(&str, String)] = &[
            ("holds no answer", String::new()),
            ("holds no answer", ": ping\n\n".into()),
            ("holds no answer", stream(&["[DONE]"])),
            ("ended before", stream(&[&chunk("m", Some("Hal"), None)])),
            // Interrupted: `[DONE]` without a finish_reason.
            (
                "cut it short",
                stream(&[&chunk("m", Some("Hal"), None), "[DONE]"]),
            ),
            ("not JSON", stream(&["{oops"])),
            (
                "reported an error: model overloaded",
                stream(&[
                    &chunk("m", Some("a"), None),
                    r#"{"error": {"message": "model overloaded"}}"#,
                ]),
            ),
        ];
        for (expected, text) in cases {
            let error = fold_stream(text).unwrap_err();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn the_system_goes_first_and_turns_keep_their_order() {
        let body = request_body(&invocation(Some("m")), &options(r#", "temperature": 0"#)).unwrap();
        assert_eq!(
            body,
            json!({"model": "m", "temperature": 0.0, "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"},
                {"role": "user", "content": "2+2?"}
            ]})
        );
    }

    #[test]
    fn generation_settings_go_by_the_apis_names() {
        let body = request_body(
            &invocation(Some("m")),
            &options(r#", "temperature": 0.5, "maxTokens": 64, "topP": 0.9, "seed": -7, "stop": ["END", "\n\n"]"#),
        )
        .unwrap();
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["max_tokens"], json!(64));
        assert_eq!(body["top_p"], json!(0.9));
        assert_eq!(body["seed"], json!(-7));
        assert_eq!(body["stop"], json!(["END", "\n\n"]));
        let none = request_body(&invocation(Some("m")), &options("")).unwrap();
        for key in ["temperature", "max_tokens", "top_p", "seed", "stop"] {
            assert!(none.get(key).is_none(), "{key} sent unasked");
        }
    }

    #[test]
    fn an_unpinned_model_is_refused_naming_the_case() {
        let error = request_body(&invocation(None), &options("")).unwrap_err();
        assert!(
            format!("{error:?}").contains("case `c1` pins no model"),
            "{error:?}"
        );
    }

    #[test]
    fn the_answer_usage_and_the_answering_model_are_recorded() {
        let answer = json!({
            "model": "smollm2-135m-instruct",
            "choices": [{"message": {"role": "assistant", "content": "4"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 1,
                      "prompt_tokens_details": {"cached_tokens": 3}}
        });
        let observed = observation(&invocation(Some("m")), &answer, 0).unwrap();
        assert_eq!(observed.final_text.as_deref(), Some("4"));
        assert_eq!(observed.model.as_deref(), Some("smollm2-135m-instruct"));
        assert_eq!(
            observed.messages.last().map(|m| m.content.as_str()),
            Some("4")
        );
        let usage = observed.usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(12), Some(1))
        );
        assert_eq!(usage.cached_input_tokens, Some(3));
        assert!(observation(&invocation(Some("m")), &json!({"choices": []}), 0).is_err());
    }

    #[test]
    fn a_priced_model_gets_a_derived_cost_and_others_none() {
        let answer = |model: &str| {
            json!({
                "model": model,
                "choices": [{"message": {"role": "assistant", "content": "ok"}}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 100}
            })
        };
        let priced = observation(&invocation(None), &answer("gpt-5-mini"), 0).unwrap();
        // gpt-5-mini: $0.25 / 1M input, $2 / 1M output.
        assert!((priced.cost_usd.unwrap() - (1000.0 * 0.25 + 100.0 * 2.0) / 1e6).abs() < 1e-12);
        assert_eq!(
            priced.cost_source.as_deref(),
            Some("derived:openai-api-prices@2025-08")
        );
        let local = observation(&invocation(None), &answer("smollm2-135m"), 0).unwrap();
        assert_eq!((local.cost_usd, local.cost_source), (None, None));
    }
}
