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
//! { "rubric": "how complete is the answer?", "select": "/answer" }
//! { "criteria": "the tone of the reply", "choiceScores": {"warm": 1, "neutral": 0.5, "curt": 0} }
//! ```
//!
//! - `criteria` (alias `rubric`; required): a natural-language criterion
//!   or rubric.
//! - `choiceScores` (optional): classification instead of a free score:
//!   the model picks one label, whose score (0..=1) is the score.
//! - `select` (optional): a JSON pointer into the output (the structured
//!   output, else the final text as JSON) naming what is graded, when the
//!   output is not the answer itself.
//! - `useCoT` (optional, default true): ask for the rationale
//!   (`reasoning`) before the verdict; it becomes the score's detail.
//! - `threshold` (optional, 0..=1, default 0.5): the least score that passes.
//!
//! Any other key is an invalid-config error naming the key.
//!
//! ## The model request
//!
//! One `generate` call per case: `model: none` (the judge model the user
//! configured), the mode's system prompt ([`SYSTEM_PROMPT`] for a rubric
//! with its rationale), `temperature: 0`, the mode's response schema and
//! exactly ONE user message whose content is a JSON document:
//!
//! ```json
//! {"criterion": "…", "input": <case input or null>, "reference": <case expected or null>, "answer": "<graded text, or \"\">", "choices": ["warm", "neutral", "curt"]}
//! ```
//!
//! (`choices` only in choice mode, best score first.) This message is a
//! contract: deterministic stand-in providers (the `fixture` provider's
//! judge mode) parse it, so its keys do not change.
//!
//! ## The model answer
//!
//! See [`answer`]. A rubric case passes when the model said `passed` AND
//! `score >= threshold`; a choice case when the label's score reaches the
//! threshold. An answer that cannot be read, or a model error (denied,
//! unavailable, failed), is a scorer error, never a score of 0.

mod answer;
mod embedding;

pub use answer::{JudgeAnswer, choice_score, parse_answer, parse_choice, to_score};
use cautilus_sdk::model::{self, GenerateRequest, ModelError};
use cautilus_sdk::{
    Capability, ConfigSchema, CostClass, Message, PluginError, Score, ScoreInput, Scorer,
    export_scorers,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The threshold when the config gives none.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// The judge's fixed instructions.
pub const SYSTEM_PROMPT: &str = "You are an evaluation judge. The user message is a JSON object with \
`criterion` (what a good answer must do), `input` (what the answer responded to; may be null), \
`reference` (an expected answer or expectations; may be null) and `answer` (the text to grade). \
Decide whether the answer meets the criterion, using the input and reference only as context. \
Reply with ONLY a JSON object, without prose or code fences: \
{\"passed\": true or false, \"score\": a number from 0 to 1, \"reasoning\": \"one or two sentences\"}.";

/// The rubric prompt without a rationale (`useCoT: false`).
pub const SYSTEM_PROMPT_PLAIN: &str = "You are an evaluation judge. The user message is a JSON object with \
`criterion` (what a good answer must do), `input` (what the answer responded to; may be null), \
`reference` (an expected answer or expectations; may be null) and `answer` (the text to grade). \
Decide whether the answer meets the criterion, using the input and reference only as context. \
Reply with ONLY a JSON object, without prose or code fences: \
{\"passed\": true or false, \"score\": a number from 0 to 1}.";

/// The classification prompt, with its rationale first.
pub const CHOICE_PROMPT: &str = "You are an evaluation judge. The user message is a JSON object with \
`criterion` (what to judge the answer on), `input` (what the answer responded to; may be null), \
`reference` (an expected answer or expectations; may be null), `answer` (the text to judge) and \
`choices` (the labels to choose from). Think it through first, then classify the answer by the \
criterion into exactly one of the choices. Reply with ONLY a JSON object, without prose or code \
fences: {\"reasoning\": \"your step-by-step rationale\", \"choice\": \"one of the choices, verbatim\"}.";

/// The classification prompt without a rationale.
pub const CHOICE_PROMPT_PLAIN: &str = "You are an evaluation judge. The user message is a JSON object with \
`criterion` (what to judge the answer on), `input` (what the answer responded to; may be null), \
`reference` (an expected answer or expectations; may be null), `answer` (the text to judge) and \
`choices` (the labels to choose from). Classify the answer by the criterion into exactly one of the \
choices. Reply with ONLY a JSON object, without prose or code fences: \
{\"choice\": \"one of the choices, verbatim\"}.";

/// The JSON Schema of the rubric answer the judge asks for (with its
/// rationale).
pub fn response_schema() -> Value {
    rubric_schema(true)
}

fn rubric_schema(rationale: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "passed": { "type": "boolean" },
            "score": { "type": "number", "minimum": 0, "maximum": 1 },
        },
        "required": ["passed", "score"],
        "additionalProperties": false
    });
    if rationale {
        schema["properties"]["reasoning"] = json!({ "type": "string" });
        schema["required"] = json!(["passed", "score", "reasoning"]);
    }
    schema
}

fn choice_schema(labels: &[String], rationale: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": { "choice": { "type": "string", "enum": labels } },
        "required": ["choice"],
        "additionalProperties": false
    });
    if rationale {
        schema["properties"]["reasoning"] = json!({ "type": "string" });
        schema["required"] = json!(["reasoning", "choice"]);
    }
    schema
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JudgeConfig {
    #[serde(default)]
    pub criteria: Option<String>,
    #[serde(default)]
    pub rubric: Option<String>,
    #[serde(default)]
    pub choice_scores: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub select: Option<String>,
    #[serde(default, rename = "useCoT")]
    pub use_cot: Option<bool>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    choices: Option<&'a [String]>,
}

/// The content of the judge's one user message (rubric mode).
pub fn user_message(criterion: &str, input: &Value, reference: &Value, answer: &str) -> String {
    message(criterion, input, reference, answer, None)
}

fn message(
    criterion: &str,
    input: &Value,
    reference: &Value,
    answer: &str,
    choices: Option<&[String]>,
) -> String {
    serde_json::to_string(&JudgeMessage {
        criterion,
        input,
        reference,
        answer,
        choices,
    })
    .expect("a JSON value always serializes")
}

/// The whole model request for one case, in rubric mode with its rationale.
pub fn build_request(
    criterion: &str,
    input: &Value,
    reference: &Value,
    answer: &str,
) -> GenerateRequest {
    request(
        SYSTEM_PROMPT,
        message(criterion, input, reference, answer, None),
        response_schema(),
    )
}

fn request(system: &str, content: String, schema: Value) -> GenerateRequest {
    GenerateRequest {
        model: None,
        system: Some(system.to_string()),
        messages: vec![Message {
            role: "user".into(),
            content,
        }],
        max_tokens: None,
        temperature: Some(0.0),
        response_schema: Some(schema.to_string()),
    }
}

/// A model error as the scorer error it becomes.
pub fn model_error(error: ModelError) -> PluginError {
    PluginError::failed(match error {
        ModelError::Denied(message) => format!("judge model call denied: {message}"),
        ModelError::Unavailable(message) => format!("judge model unavailable: {message}"),
        ModelError::Failed(message) => format!("judge model call failed: {message}"),
    })
}

/// Checks the config: one non-empty criterion (or rubric), a threshold in
/// 0..=1, labels scored in 0..=1, a JSON pointer.
pub fn validate(config: JudgeConfig) -> Result<Judge, PluginError> {
    let criteria = match (config.criteria, config.rubric) {
        (Some(_), Some(_)) => {
            return Err(PluginError::config(
                "rubric",
                "give `criteria` or `rubric` (the same thing), not both",
            ));
        }
        (Some(text), None) | (None, Some(text)) => text,
        (None, None) => String::new(),
    };
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
    let choices = match config.choice_scores {
        None => None,
        Some(map) => {
            let mut choices = Vec::new();
            for (label, score) in map {
                match score.as_f64() {
                    Some(v) if (0.0..=1.0).contains(&v) && !label.trim().is_empty() => {
                        choices.push((label, v));
                    }
                    _ => {
                        return Err(PluginError::config(
                            format!("choiceScores.{label}"),
                            format!("a label's score is a number from 0 to 1, got {score}"),
                        ));
                    }
                }
            }
            if choices.len() < 2 {
                return Err(PluginError::config(
                    "choiceScores",
                    "give at least two labels with their scores, e.g. {\"good\": 1, \"bad\": 0}",
                ));
            }
            // Best first, then by label: the order the judge is shown.
            choices.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            Some(choices)
        }
    };
    if let Some(select) = &config.select
        && !select.starts_with('/')
    {
        return Err(PluginError::config(
            "select",
            format!("must be a JSON pointer such as `/answer` (got `{select}`)"),
        ));
    }
    Ok(Judge {
        criteria,
        threshold,
        choices,
        select: config.select,
        rationale: config.use_cot.unwrap_or(true),
    })
}

pub struct Judge {
    criteria: String,
    threshold: f64,
    /// Choice mode: (label, score), best first.
    choices: Option<Vec<(String, f64)>>,
    select: Option<String>,
    rationale: bool,
}

impl Judge {
    /// What is graded: the output, or what `select` names in it.
    fn graded(&self, input: &ScoreInput) -> Result<String, String> {
        let Some(pointer) = &self.select else {
            return Ok(input.output().to_string());
        };
        let document: Value = match input.observation.structured.as_deref() {
            Some(structured) => serde_json::from_str(structured).unwrap_or(Value::Null),
            None => serde_json::from_str(input.output().trim()).map_err(|_| {
                format!("`select: {pointer}` needs JSON output (structured, or a JSON final text); the output is not JSON")
            })?,
        };
        match document.pointer(pointer) {
            Some(Value::String(text)) => Ok(text.clone()),
            Some(other) => Ok(other.to_string()),
            None => Err(format!(
                "the output has nothing at `{pointer}` (the config's `select`)"
            )),
        }
    }

    /// The model request for one case.
    pub fn request(&self, input: &Value, reference: &Value, answer: &str) -> GenerateRequest {
        match &self.choices {
            None => request(
                if self.rationale {
                    SYSTEM_PROMPT
                } else {
                    SYSTEM_PROMPT_PLAIN
                },
                message(&self.criteria, input, reference, answer, None),
                rubric_schema(self.rationale),
            ),
            Some(choices) => {
                let labels: Vec<String> = choices.iter().map(|(l, _)| l.clone()).collect();
                request(
                    if self.rationale {
                        CHOICE_PROMPT
                    } else {
                        CHOICE_PROMPT_PLAIN
                    },
                    message(&self.criteria, input, reference, answer, Some(&labels)),
                    choice_schema(&labels, self.rationale),
                )
            }
        }
    }
}

impl Scorer for Judge {
    const ID: &'static str = "judge";
    const DESCRIPTION: &'static str = "an LLM judge grades the output against `criteria` (or `rubric`; `choiceScores` to classify; pass: the judge says passed and its score ≥ `threshold`, default 0.5)";
    const COST_CLASS: CostClass = CostClass::Model;
    type Config = JudgeConfig;

    fn config_schema() -> ConfigSchema {
        ConfigSchema::raw(json!({
            "type": "object",
            "properties": {
                "criteria": { "type": "string", "minLength": 1, "description": "what a good answer must do, in plain language" },
                "rubric": { "type": "string", "minLength": 1, "description": "alias of `criteria`" },
                "choiceScores": { "type": "object", "additionalProperties": { "type": "number", "minimum": 0, "maximum": 1 }, "description": "classify: label → score" },
                "select": { "type": "string", "description": "JSON pointer to what is graded in a JSON output" },
                "useCoT": { "type": "boolean", "default": true, "description": "ask for the rationale first (kept as the score's detail)" },
                "threshold": { "type": "number", "minimum": 0, "maximum": 1, "default": DEFAULT_THRESHOLD },
                "negate": { "type": "boolean", "description": "invert the result (handled by the host)" }
            },
            "additionalProperties": false
        }))
    }

    fn new(config: JudgeConfig) -> Result<Self, PluginError> {
        validate(config)
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        let answer = match self.graded(input) {
            Ok(answer) => answer,
            Err(why) => return Ok(Score::new(Self::ID, 0.0).passed(false).detail(why)),
        };
        let request = self.request(
            &input.input().unwrap_or(Value::Null),
            &input.expected().unwrap_or(Value::Null),
            &answer,
        );
        let response = model::generate(&request).map_err(model_error)?;
        match &self.choices {
            None => {
                let answer = parse_answer(&response.text).map_err(PluginError::failed)?;
                Ok(to_score(Self::ID, answer, self.threshold))
            }
            Some(choices) => {
                let labels: Vec<String> = choices.iter().map(|(l, _)| l.clone()).collect();
                let (label, why) =
                    parse_choice(&response.text, &labels).map_err(PluginError::failed)?;
                let value = choices
                    .iter()
                    .find(|(l, _)| *l == label)
                    .map_or(0.0, |c| c.1);
                Ok(choice_score(Self::ID, label, value, why, self.threshold))
            }
        }
    }
}

export_scorers!(Judge, embedding::EmbeddingSimilarity; capabilities = [Capability::Model]);

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
    fn choice_mode_asks_for_one_label_best_first() {
        let Ok(judge) = config(
            r#"{"rubric": "tone", "choiceScores": {"curt": 0, "warm": 1, "neutral": 0.5}, "useCoT": false}"#,
        ) else {
            panic!("a valid config was rejected");
        };
        let request = judge.request(&Value::Null, &Value::Null, "hi");
        assert_eq!(request.system.as_deref(), Some(CHOICE_PROMPT_PLAIN));
        assert_eq!(
            request.messages[0].content,
            r#"{"criterion":"tone","input":null,"reference":null,"answer":"hi","choices":["warm","neutral","curt"]}"#
        );
        let schema: Value =
            serde_json::from_str(request.response_schema.as_deref().unwrap()).unwrap();
        assert_eq!(
            schema["properties"]["choice"]["enum"],
            json!(["warm", "neutral", "curt"])
        );
        assert_eq!(schema["required"], json!(["choice"]));
        for (bad, at) in [
            (
                r#"{"criteria": "x", "choiceScores": {"a": 1}}"#,
                "choiceScores",
            ),
            (
                r#"{"criteria": "x", "choiceScores": {"a": 1, "b": 2}}"#,
                "choiceScores.b",
            ),
            (r#"{"criteria": "x", "rubric": "y"}"#, "rubric"),
            (r#"{"criteria": "x", "select": "answer"}"#, "select"),
        ] {
            let err = config(bad).err().unwrap();
            assert_eq!(err.config_path(), Some(at), "{bad}");
        }
        let plain = config(r#"{"criteria": "x", "useCoT": false}"#)
            .ok()
            .unwrap();
        let request = plain.request(&Value::Null, &Value::Null, "a");
        assert_eq!(request.system.as_deref(), Some(SYSTEM_PROMPT_PLAIN));
    }

    #[test]
    fn model_errors_are_scorer_errors() {
        let err = model_error(ModelError::Unavailable("no judge model configured".into()));
        assert!(matches!(err, PluginError::Failed(m) if m.contains("no judge model configured")));
    }
}
