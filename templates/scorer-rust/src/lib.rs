//! The `{{name}}` scorer. Edit `score` to implement your check, and
//! `examples.yaml` to say what it should answer (`cautilus plugin test`).

use cautilus_sdk::{ConfigSchema, PluginError, Score, ScoreInput, Scorer, export_scorers};
use serde::Deserialize;

/// The config a fixture gives this scorer, e.g. `{type: ./{{file}}.wasm, value: world}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The text to look for; falls back to the case's `expected`.
    #[serde(default)]
    value: Option<cautilus_sdk::serde_json::Value>,
}

pub struct {{Type}} {
    config: Config,
}

impl Scorer for {{Type}} {
    const ID: &'static str = "{{name}}";
    const DESCRIPTION: &'static str = "passes when the output contains `value`";
    type Config = Config;

    fn config_schema() -> ConfigSchema {
        ConfigSchema::object(&[("value", "the text to look for")], &[])
    }

    fn new(config: Config) -> Result<Self, PluginError> {
        Ok(Self { config })
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        let needle = match input.value_or_expected(self.config.value.as_ref())? {
            cautilus_sdk::serde_json::Value::String(text) => text,
            other => other.to_string(),
        };
        let output = input.output();
        Ok(Score::check(Self::ID, output.contains(&needle), || {
            format!(
                "expected {needle:?} in {}",
                cautilus_sdk::excerpt(output, 120)
            )
        }))
    }
}

export_scorers!({{Type}});
