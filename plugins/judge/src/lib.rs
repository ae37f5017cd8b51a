//! The `judge` scorer: an LLM grades the output against a natural-language
//! criterion, through the host's `model` import (so cassettes, budgets and
//! secrets apply in the host and the plugin never sees an API key).
//!
//! It is its own component, not part of the built-in scorer pack, because
//! capabilities are requested per component: only this one asks for `model`.
//!
//! ## Config
//!
//! ```json
//! { "criteria": "mentions the refund policy", "threshold": 0.5 }
//! ```
//!
//! - `criteria` (required): a non-empty natural-language criterion.
//! - `threshold` (optional, 0..=1, default 0.5): the least score that passes.
//!
//! Any other key is an invalid-config error naming the key.
//!
//! ## The model request
//!
//! One `generate` call per case: `model: none` (the judge model the user
//! configured), the fixed [`SYSTEM_PROMPT`], `temperature: 0`, the
//! [`response_schema`] and exactly ONE user message whose content is a JSON
//! document:
//!
//! ```json
//! {"criterion": "…", "input": <case input or null>, "reference": <case expected or null>, "answer": "<final text, or \"\">"}
//! ```
//!
//! This message is a contract: deterministic stand-in providers (the
//! `fixture` provider's judge mode) parse it, so its keys do not change.
//!
//! ## The model answer
//!
//! The text is read as JSON, or else the first `{…}` object in it that has
//! a `passed` key (models wrap JSON in prose or code fences):
//!
//! - `passed` (required, boolean);
//! - `score` (optional number, clamped to 0..=1; default 1 when passed, else 0);
//! - `reasoning` (optional string): the score's detail.
//!
//! The case passes when the model said `passed` AND `score >= threshold`.
//! An answer that cannot be read, or a model error (denied, unavailable,
//! failed), is a scorer error, never a score of 0.

use cautilus_sdk::model::{self, GenerateRequest, ModelError};
use cautilus_sdk::{
    Capability, ConfigSchema, CostClass, Message, PluginError, Score, ScoreInput, Scorer,
    export_scorers,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The threshold when the config gives none.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// How much of an unreadable answer a scorer error quotes.
const EXCERPT_CHARS: usize = 200;

/// The judge's fixed instructions.
pub const SYSTEM_PROMPT: &str = "You are an evaluation judge. The user message is a JSON object with \
`criterion` (what a good answer must do), `input` (what the answer responded to; may be null), \
`reference` (an expected answer or expectations; may be null) and `answer` (the text to grade). \
Decide whether the answer meets the criterion, using the input and reference only as context. \
Reply with ONLY a JSON object, without prose or code fences: \
{\"passed\": true or false, \"score\": a number from 0 to 1, \"reasoning\": \"one or two sentences\"}.";

/// The JSON Schema of the answer the judge asks for.
pub fn response_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "passed": { "type": "boolean" },
            "score": { "type": "number", "minimum": 0, "maximum": 1 },
            "reasoning": { "type": "string" }
        },
        "required": ["passed", "score", "reasoning"],
        "additionalProperties": false
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeConfig {
    #[serde(default)]
    pub criteria: Option<String>,
    #[serde(default)]
    pub threshold: Option<f64>,
}

/// The user message's JSON document (field order is the wire order).
#[derive(Serialize)]
struct JudgeMessage<'a> {
    criterion: &'a str,
    input: &'a Value,
    reference: &'a Value,
    answer: &'a str,
}

/// The content of the judge's one user message.
pub fn user_message(criterion: &str, input: &Value, reference: &Value, answer: &str) -> String {
    serde_json::to_string(&JudgeMessage {
        criterion,
        input,
        reference,
        answer,
    })
    .expect("a JSON value always serializes")
}

/// The whole model request for one case.
pub fn build_request(
    criterion: &str,
    input: &Value,
    reference: &Value,
    answer: &str,
) -> GenerateRequest {
    GenerateRequest {
        model: None,
        system: Some(SYSTEM_PROMPT.to_string()),
        messages: vec![Message {
            role: "user".into(),
            content: user_message(criterion, input, reference, answer),
        }],
        max_tokens: None,
        temperature: Some(0.0),
        response_schema: Some(response_schema().to_string()),
    }
}

/// What the judge model answered.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeAnswer {
    pub passed: bool,
    pub score: f64,
    pub reasoning: Option<String>,
}

/// Reads the model's text: the whole text as JSON, else the first `{…}`
/// object in it that has a `passed` key. The error says what was wrong and
/// quotes an excerpt of the text.
pub fn parse_answer(text: &str) -> Result<JudgeAnswer, String> {
    let Some(object) = find_verdict_object(text) else {
        return Err(format!(
            "the judge model did not answer with a JSON object {{\"passed\": …}}; it said {}",
            cautilus_sdk::excerpt(text.trim(), EXCERPT_CHARS)
        ));
    };
    let passed = match object.get("passed") {
        Some(Value::Bool(passed)) => *passed,
        other => {
            return Err(format!(
                "the judge model's `passed` must be true or false, got {}",
                other.map_or("nothing".to_string(), Value::to_string)
            ));
        }
    };
    let score = match object.get("score") {
        None | Some(Value::Null) => {
            if passed {
                1.0
            } else {
                0.0
            }
        }
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0).clamp(0.0, 1.0),
        Some(other) => {
            return Err(format!(
                "the judge model's `score` must be a number from 0 to 1, got {other}"
            ));
        }
    };
    let reasoning = match object.get("reasoning") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => Some(other.to_string()),
    };
    Ok(JudgeAnswer {
        passed,
        score,
        reasoning,
    })
}

fn find_verdict_object(text: &str) -> Option<serde_json::Map<String, Value>> {
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text.trim()) {
        return Some(object);
    }
    text.match_indices('{').find_map(|(at, _)| {
        // The streaming deserializer reads one value and ignores what follows.
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(object))) if object.contains_key("passed") => Some(object),
            _ => None,
        }
    })
}

/// The score for an answer: passed when the model said so AND the score
/// reaches the threshold.
pub fn to_score(name: &str, answer: JudgeAnswer, threshold: f64) -> Score {
    let passed = answer.passed && answer.score >= threshold;
    let mut score = Score::new(name, answer.score).passed(passed);
    let detail = if answer.passed && !passed {
        Some(format!(
            "score {} is below the threshold {threshold}{}",
            answer.score,
            answer
                .reasoning
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ))
    } else {
        answer.reasoning
    };
    if let Some(detail) = detail {
        score = score.detail(detail);
    }
    score
}

/// A model error as the scorer error it becomes.
pub fn model_error(error: ModelError) -> PluginError {
    PluginError::failed(match error {
        ModelError::Denied(message) => format!("judge model call denied: {message}"),
        ModelError::Unavailable(message) => format!("judge model unavailable: {message}"),
        ModelError::Failed(message) => format!("judge model call failed: {message}"),
    })
}

/// Checks the config: a non-empty criterion and a threshold in 0..=1.
pub fn validate(config: JudgeConfig) -> Result<Judge, PluginError> {
    let criteria = config.criteria.unwrap_or_default();
    if criteria.trim().is_empty() {
        return Err(PluginError::config(
            "criteria",
            "write the criterion the answer must meet in plain language, e.g. `criteria: \"mentions the refund policy\"`",
        ));
    }
    let threshold = config.threshold.unwrap_or(DEFAULT_THRESHOLD);
    if !(0.0..=1.0).contains(&threshold) {
        return Err(PluginError::config(
            "threshold",
            format!("must be between 0 and 1, got {threshold}"),
        ));
    }
    Ok(Judge {
        criteria,
        threshold,
    })
}

pub struct Judge {
    criteria: String,
    threshold: f64,
}

impl Scorer for Judge {
    const ID: &'static str = "judge";
    const DESCRIPTION: &'static str = "an LLM judge grades the output against `criteria` (pass: the judge says passed and its score ≥ `threshold`, default 0.5)";
    const COST_CLASS: CostClass = CostClass::Model;
    type Config = JudgeConfig;

    fn config_schema() -> ConfigSchema {
        ConfigSchema::raw(json!({
            "type": "object",
            "properties": {
                "criteria": { "type": "string", "minLength": 1, "description": "what a good answer must do, in plain language" },
                "threshold": { "type": "number", "minimum": 0, "maximum": 1, "default": DEFAULT_THRESHOLD },
                "negate": { "type": "boolean", "description": "invert the result (handled by the host)" }
            },
            "required": ["criteria"],
            "additionalProperties": false
        }))
    }

    fn new(config: JudgeConfig) -> Result<Self, PluginError> {
        validate(config)
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        let request = build_request(
            &self.criteria,
            &input.input().unwrap_or(Value::Null),
            &input.expected().unwrap_or(Value::Null),
            input.output(),
        );
        let response = model::generate(&request).map_err(model_error)?;
        let answer = parse_answer(&response.text).map_err(PluginError::failed)?;
        Ok(to_score(Self::ID, answer, self.threshold))
    }
}

export_scorers!(Judge; capabilities = [Capability::Model]);

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> Result<Judge, PluginError> {
        validate(cautilus_sdk::parse_config::<JudgeConfig>(json)?)
    }

    #[test]
    fn config_needs_a_criterion_and_a_threshold_in_range() {
        let Ok(judge) = config(r#"{"criteria": "is polite"}"#) else {
            panic!("a valid config was rejected");
        };
        assert_eq!(judge.threshold, DEFAULT_THRESHOLD);
        for bad in [r#"{}"#, r#"{"criteria": "  "}"#] {
            let err = config(bad).err().unwrap();
            assert_eq!(err.config_path(), Some("criteria"));
        }
        let err = config(r#"{"criteria": "x", "threshold": 1.5}"#)
            .err()
            .unwrap();
        assert_eq!(err.config_path(), Some("threshold"));
        let err = config(r#"{"criteria": "x", "treshold": 0.5}"#)
            .err()
            .unwrap();
        assert_eq!(err.config_path(), Some("treshold"));
    }

    #[test]
    fn the_request_carries_one_json_user_message() {
        let request = build_request("says hi", &json!({"q": 1}), &Value::Null, "hello");
        assert_eq!(request.model, None);
        assert_eq!(request.temperature, Some(0.0));
        assert_eq!(request.system.as_deref(), Some(SYSTEM_PROMPT));
        assert_eq!(request.messages.len(), 1);
        assert_eq!(request.messages[0].role, "user");
        assert_eq!(
            request.messages[0].content,
            r#"{"criterion":"says hi","input":{"q":1},"reference":null,"answer":"hello"}"#
        );
        let schema: Value =
            serde_json::from_str(request.response_schema.as_deref().unwrap()).unwrap();
        assert_eq!(schema["required"], json!(["passed", "score", "reasoning"]));
    }

    #[test]
    fn answers_are_read_from_json_or_the_first_verdict_object() {
        let plain = parse_answer(r#"{"passed": true, "score": 0.9, "reasoning": "ok"}"#).unwrap();
        assert_eq!(
            plain,
            JudgeAnswer {
                passed: true,
                score: 0.9,
                reasoning: Some("ok".into())
            }
        );
        let fenced = parse_answer(
            "Here is my verdict {not json}:\n```json\n{\"passed\": false, \"reasoning\": \"rude\"}\n```",
        )
        .unwrap();
        assert_eq!(fenced.score, 0.0);
        assert!(!fenced.passed);
        assert_eq!(parse_answer(r#"{"passed": true}"#).unwrap().score, 1.0);
        assert_eq!(
            parse_answer(r#"{"passed": true, "score": 7}"#)
                .unwrap()
                .score,
            1.0
        );
        assert!(parse_answer(r#"{"passed": "yes"}"#).is_err());
        assert!(parse_answer(r#"{"passed": true, "score": "high"}"#).is_err());
        let err = parse_answer("I think it is fine.").unwrap_err();
        assert!(err.contains("I think it is fine."), "{err}");
    }

    #[test]
    fn passing_needs_the_verdict_and_the_threshold() {
        let answer = |passed, score| JudgeAnswer {
            passed,
            score,
            reasoning: Some("why".into()),
        };
        let pass = to_score("judge", answer(true, 0.8), 0.5);
        assert_eq!((pass.passed, pass.value), (Some(true), Some(0.8)));
        assert_eq!(pass.detail.as_deref(), Some("why"));
        let low = to_score("judge", answer(true, 0.4), 0.5);
        assert_eq!(low.passed, Some(false));
        assert!(low.detail.unwrap().contains("below the threshold 0.5: why"));
        assert_eq!(
            to_score("judge", answer(false, 0.9), 0.5).passed,
            Some(false)
        );
    }

    #[test]
    fn model_errors_are_scorer_errors() {
        let err = model_error(ModelError::Unavailable("no judge model configured".into()));
        assert!(matches!(err, PluginError::Failed(m) if m.contains("no judge model configured")));
    }
}
