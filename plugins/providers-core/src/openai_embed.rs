//! The `openai` provider's embeddings: one OpenAI-compatible
//! `<baseUrl>/embeddings` call per request, through the host's `http`
//! import like its chat calls ([`crate::api::Call`]: the same options,
//! retries and errors; the host sends the key, the component names the
//! secret). The vectors come back in the order of the inputs (the answer's
//! `index`), the model is the one the answer names, and the input tokens
//! are its `usage.prompt_tokens`.

use cautilus_sdk::provider::{EmbedRequest, EmbedResponse};
use cautilus_sdk::{PluginError, Usage};
use serde_json::{Value, json};

use crate::api::{ApiOptions, Call};
use crate::openai::NAME;

/// The model a request that names none gets.
pub const DEFAULT_MODEL: &str = "text-embedding-3-small";

/// The `/embeddings` request body.
pub fn request_body(model: &str, inputs: &[String]) -> Value {
    json!({"model": model, "input": inputs})
}

/// Embeds `request.inputs` with one call (retried as [`Call::send`] says).
pub fn embed(request: &EmbedRequest) -> Result<EmbedResponse, PluginError> {
    let options = ApiOptions::of(request.options.as_deref(), NAME)?;
    let call = Call {
        provider: NAME,
        key_variable: "OPENAI_API_KEY",
        url_variable: "OPENAI_BASE_URL",
        options: &options,
        url: options.url("embeddings"),
        headers: Vec::new(),
        key_header: ("authorization", true),
        fold_stream: None,
    };
    let answer = call.send(&request_body(&request.model, &request.inputs))?;
    response(&answer.body, &request.model, request.inputs.len())
}

/// The response of an `/embeddings` answer to `inputs` texts, or what is
/// wrong with it.
pub fn response(answer: &Value, model: &str, inputs: usize) -> Result<EmbedResponse, PluginError> {
    let mut data: Vec<&Value> = answer["data"]
        .as_array()
        .map(|d| d.iter().collect())
        .unwrap_or_default();
    data.sort_by_key(|d| d["index"].as_u64().unwrap_or(0));
    let vectors: Vec<Vec<f32>> = data
        .iter()
        .map(|d| {
            d["embedding"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .filter_map(Value::as_f64)
                        .map(|x| x as f32)
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    if vectors.len() != inputs || vectors.iter().any(Vec::is_empty) {
        return Err(PluginError::failed(format!(
            "{NAME}: the embeddings endpoint returned {} vectors for {inputs} inputs",
            vectors.len(),
        )));
    }
    Ok(EmbedResponse {
        vectors,
        model: answer["model"].as_str().unwrap_or(model).to_string(),
        usage: answer
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
            .map(|tokens| Usage {
                input_tokens: Some(tokens),
                output_tokens: None,
                cached_input_tokens: None,
                reasoning_tokens: None,
                llm_calls: Some(1),
            }),
        // OpenAI's API reports no cost.
        cost_usd: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_in_input_order_with_the_answers_model_and_tokens() {
        let answer = json!({
            "model": "text-embedding-3-small-2024",
            "data": [{"index": 1, "embedding": [0.6, 0.8]}, {"index": 0, "embedding": [1.0, 0.0]}],
            "usage": {"prompt_tokens": 9, "total_tokens": 9}
        });
        let out = response(&answer, "text-embedding-3-small", 2).unwrap();
        assert_eq!(out.vectors, vec![vec![1.0, 0.0], vec![0.6, 0.8]]);
        assert_eq!(out.model, "text-embedding-3-small-2024");
        let usage = out.usage.unwrap();
        assert_eq!((usage.input_tokens, usage.llm_calls), (Some(9), Some(1)));
        assert_eq!(out.cost_usd, None);
    }

    #[test]
    fn an_answer_without_model_or_usage_keeps_the_asked_model_and_no_usage() {
        let answer = json!({"data": [{"index": 0, "embedding": [1.0]}]});
        let out = response(&answer, "m", 1).unwrap();
        assert_eq!(out.model, "m");
        assert!(out.usage.is_none());
    }

    #[test]
    fn missing_or_empty_vectors_are_errors_naming_the_counts() {
        for (answer, inputs) in [
            (json!({"data": [{"index": 0, "embedding": [1.0]}]}), 2),
            (json!({"data": [{"index": 0, "embedding": []}]}), 1),
            (json!({"data": [{"index": 0}]}), 1),
            (json!({"error": {"message": "no"}}), 1),
        ] {
            let Err(PluginError::Failed(message)) = response(&answer, "m", inputs) else {
                panic!("{answer} should be refused");
            };
            assert!(message.contains("vectors for"), "{message}");
        }
    }

    #[test]
    fn the_body_names_the_model_and_the_inputs_in_order() {
        assert_eq!(
            request_body("m", &["a".into(), "b".into()]),
            json!({"model": "m", "input": ["a", "b"]})
        );
    }
}
