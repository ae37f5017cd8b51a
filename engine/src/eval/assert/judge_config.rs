//! What a suite's `judge:` (or `[judge]` in cautilus.toml, or `--judge`)
//! says: the provider and model of the judge ([`JudgeConfig`]), checked,
//! and how to give one, for messages.

use serde_json::{Value, json};

/// What a suite's `judge:` says.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeConfig {
    pub provider: String,
    pub model: String,
}

/// How to configure a judge, for messages.
pub const HOW_TO_CONFIGURE: &str = "configure a judge model at suite level, e.g. `judge: {provider: <provider id or .wasm path>, model: <model name>}`, or `[judge]` in cautilus.toml (the `fixture` provider is a deterministic stand-in for tests)";

/// How to give a judge on the command line, for messages.
pub const FLAG_USAGE: &str = "give the judge as PROVIDER/MODEL or PROVIDER:MODEL, e.g. `openai/gpt-5-mini`, `anthropic:claude-sonnet-4-5` or `fixture/fixture` (a .wasm provider: `./judge.wasm:MODEL`)";

impl JudgeConfig {
    /// Parses a `--judge` value: `PROVIDER:MODEL`, or `PROVIDER/MODEL` when
    /// the provider is a plain id. A provider before `:` may be a `.wasm`
    /// path; a model may hold `/` or `:` (`openai/meta-llama/x`,
    /// `openai/llama3:8b`).
    pub fn parse_flag(value: &str) -> Result<Self, String> {
        let plain_id = |p: &str| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        let split = value
            .split_once(':')
            .filter(|(p, _)| plain_id(p) || p.contains(".wasm"))
            .or_else(|| value.split_once('/').filter(|(p, _)| plain_id(p)));
        match split {
            Some((provider, model)) if !model.trim().is_empty() => Ok(Self {
                provider: provider.to_string(),
                model: model.to_string(),
            }),
            _ => Err(format!("`{value}`: {FLAG_USAGE}")),
        }
    }

    /// The fixture-level `judge` value this stands for.
    pub fn to_value(&self) -> Value {
        json!({"provider": self.provider, "model": self.model})
    }

    /// Parses a suite's `judge` value.
    pub fn parse(value: &Value) -> Result<Self, (String, String)> {
        let Some(object) = value.as_object() else {
            return Err((
                "judge".into(),
                format!("must be an object; {HOW_TO_CONFIGURE}"),
            ));
        };
        for key in object.keys() {
            if key != "provider" && key != "model" {
                return Err((
                    format!("judge.{key}"),
                    "unknown judge field; a judge has `provider` and `model`".into(),
                ));
            }
        }
        let field = |key: &str| match object.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err((
                format!("judge.{key}"),
                format!("is missing or empty; {HOW_TO_CONFIGURE}"),
            )),
        };
        Ok(Self {
            provider: field("provider")?,
            model: field("model")?,
        })
    }
}
