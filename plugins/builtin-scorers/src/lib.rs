//! The built-in scorer pack: one component exporting every built-in scorer.
//!
//! One component instead of seventeen: the scorers share most of their code
//! (serde_json, regex), so a single component is compiled once, loaded with
//! one cache lookup and embedded once in the host binary (see
//! docs/ARCHITECTURE.md). Each scorer still gets its own store per config.

mod retrieval;
mod trajectory;

use cautilus_scorers_core::{
    ConfigError, ScoreError, Verdict, distance, json, pattern,
    text::{self, TextConfig},
};
use cautilus_sdk::{ConfigSchema, PluginError, Score, ScoreInput, Scorer, export_scorers};
use serde_json::{Value, json};

pub(crate) fn to_error(error: ConfigError) -> PluginError {
    PluginError::config(error.path, error.message)
}

/// A config error, or an answer the scorer could not check (the host makes
/// the assertion `errored` with the reason).
pub(crate) fn to_score_error(error: impl Into<ScoreError>) -> PluginError {
    match error.into() {
        ScoreError::Config(error) => to_error(error),
        ScoreError::Unchecked(why) => PluginError::failed(why),
    }
}

pub(crate) fn to_score(name: &str, verdict: Verdict) -> Score {
    Score {
        name: name.to_string(),
        value: verdict.value,
        passed: verdict.passed,
        label: None,
        detail: verdict.detail,
    }
}

/// Runs a core scorer on an input, with the shared "no output captured" rule.
fn run<E: Into<ScoreError>>(
    name: &str,
    input: &ScoreInput,
    check: impl FnOnce(&str, Option<&Value>) -> Result<Verdict, E>,
) -> Result<Score, PluginError> {
    if !input.has_output() {
        return Ok(Score::not_applicable(
            name,
            "no final text was captured for this case",
        ));
    }
    let expected = input.expected();
    check(input.output(), expected.as_ref())
        .map(|v| to_score(name, v))
        .map_err(to_score_error)
}

fn value_schema(what: &str, extra: Value) -> ConfigSchema {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "value": { "description": format!("{what}; defaults to the case's `expected`") },
            "negate": { "type": "boolean", "description": "invert the result (handled by the host)" }
        },
        "additionalProperties": false
    });
    if let (Some(props), Value::Object(extra)) = (schema["properties"].as_object_mut(), extra) {
        props.extend(extra);
    }
    ConfigSchema::raw(schema)
}

fn ignore_case_schema() -> Value {
    json!({ "ignore_case": { "type": "boolean", "default": false } })
}

macro_rules! simple_scorer {
    ($name:ident, $id:literal, $description:literal, $config:ty, $what:literal, $extra:expr, $func:path) => {
        pub struct $name($config);

        impl Scorer for $name {
            const ID: &'static str = $id;
            const DESCRIPTION: &'static str = $description;
            type Config = $config;

            fn config_schema() -> ConfigSchema {
                value_schema($what, $extra)
            }

            fn new(config: $config) -> Result<Self, PluginError> {
                Ok(Self(config))
            }

            fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
                run(Self::ID, input, |output, expected| {
                    $func(&self.0, output, expected)
                })
            }
        }
    };
}

simple_scorer!(
    Equals,
    "equals",
    "the trimmed output equals `value` (JSON values compare structurally)",
    TextConfig,
    "the exact text or JSON value",
    ignore_case_schema(),
    text::equals
);
simple_scorer!(
    Contains,
    "contains",
    "the output contains `value`",
    TextConfig,
    "the text to find",
    ignore_case_schema(),
    text::contains
);
simple_scorer!(
    ContainsAny,
    "contains-any",
    "the output contains at least one of `value` (a list)",
    TextConfig,
    "list of strings",
    ignore_case_schema(),
    text::contains_any
);
simple_scorer!(
    ContainsAll,
    "contains-all",
    "the output contains every one of `value` (partial credit)",
    TextConfig,
    "list of strings",
    ignore_case_schema(),
    text::contains_all
);
simple_scorer!(
    StartsWith,
    "starts-with",
    "the trimmed output starts with `value`",
    TextConfig,
    "the prefix",
    ignore_case_schema(),
    text::starts_with
);
simple_scorer!(
    EndsWith,
    "ends-with",
    "the trimmed output ends with `value`",
    TextConfig,
    "the suffix",
    ignore_case_schema(),
    text::ends_with
);

/// `icontains`: `contains` that ignores case.
pub struct IContains(TextConfig);

impl Scorer for IContains {
    const ID: &'static str = "icontains";
    const DESCRIPTION: &'static str = "the output contains `value`, ignoring case";
    type Config = TextConfig;

    fn config_schema() -> ConfigSchema {
        value_schema("the text to find", json!({}))
    }

    fn new(mut config: TextConfig) -> Result<Self, PluginError> {
        config.ignore_case = true;
        Ok(Self(config))
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        run(Self::ID, input, |output, expected| {
            text::contains(&self.0, output, expected)
        })
    }
}

pub struct RegexMatch(pattern::RegexScorer);

impl Scorer for RegexMatch {
    const ID: &'static str = "regex";
    const DESCRIPTION: &'static str =
        "the output matches the regular expression `value` (`flags`: i, m, s, x, U)";
    type Config = pattern::RegexConfig;

    fn config_schema() -> ConfigSchema {
        value_schema(
            "the pattern",
            json!({ "flags": { "type": "string", "description": "any of i, m, s, x, U" } }),
        )
    }

    fn new(config: pattern::RegexConfig) -> Result<Self, PluginError> {
        pattern::RegexScorer::new(config)
            .map(Self)
            .map_err(to_error)
    }

    fn check(config: pattern::RegexConfig) -> Result<(), PluginError> {
        pattern::RegexScorer::check(config).map_err(to_error)
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        run(Self::ID, input, |output, expected| {
            self.0.score(output, expected)
        })
    }

    fn score_once(config: pattern::RegexConfig, input: &ScoreInput) -> Result<Score, PluginError> {
        if !input.has_output() {
            // What `new` then `score` answers: a bad config first.
            Self::check(config.clone())?;
        }
        run(Self::ID, input, |output, expected| {
            pattern::RegexScorer::score_once(config, output, expected)
        })
    }
}

pub struct Levenshtein(distance::LevenshteinConfig);

impl Scorer for Levenshtein {
    const ID: &'static str = "levenshtein";
    const DESCRIPTION: &'static str = "normalized edit similarity to `value` (pass: `max_distance` edits, or similarity ≥ `threshold`, default 0.8)";
    type Config = distance::LevenshteinConfig;

    fn config_schema() -> ConfigSchema {
        value_schema(
            "the reference text",
            json!({
                "max_distance": { "type": "integer", "minimum": 0 },
                "threshold": { "type": "number", "minimum": 0, "maximum": 1, "default": distance::DEFAULT_THRESHOLD }
            }),
        )
    }

    fn new(config: distance::LevenshteinConfig) -> Result<Self, PluginError> {
        distance::validate(&config).map_err(to_error)?;
        Ok(Self(config))
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        run(Self::ID, input, |output, expected| {
            distance::levenshtein_score(&self.0, output, expected)
        })
    }
}

pub struct IsJson(json::IsJson);

impl Scorer for IsJson {
    const ID: &'static str = "is-json";
    const DESCRIPTION: &'static str =
        "the output is JSON, optionally valid against the JSON Schema in `value`";
    type Config = json::IsJsonConfig;

    fn config_schema() -> ConfigSchema {
        ConfigSchema::raw(json!({
            "type": "object",
            "properties": {
                "value": { "description": "a JSON Schema the output must satisfy (alias: schema)" },
                "negate": { "type": "boolean" }
            },
            "additionalProperties": false
        }))
    }

    fn new(config: json::IsJsonConfig) -> Result<Self, PluginError> {
        json::IsJson::new(config).map(Self).map_err(to_error)
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        run(Self::ID, input, |output, _| self.0.score(output))
    }
}

pub struct JsonDiff(json::JsonDiffConfig);

impl Scorer for JsonDiff {
    const ID: &'static str = "json-diff";
    const DESCRIPTION: &'static str = "recursive partial credit of the output JSON against `value` (pass: similarity ≥ `threshold`, default 1)";
    type Config = json::JsonDiffConfig;

    fn config_schema() -> ConfigSchema {
        value_schema(
            "the reference JSON",
            json!({
                "threshold": { "type": "number", "minimum": 0, "maximum": 1, "default": 1 },
                "numeric_tolerance": { "type": "number", "minimum": 0 },
                "ignore_extra_keys": { "type": "boolean", "default": false }
            }),
        )
    }

    fn new(config: json::JsonDiffConfig) -> Result<Self, PluginError> {
        json::validate_diff(&config).map_err(to_error)?;
        Ok(Self(config))
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        run(Self::ID, input, |output, expected| {
            json::json_diff(&self.0, output, expected)
        })
    }
}

export_scorers!(
    Equals,
    Contains,
    IContains,
    ContainsAny,
    ContainsAll,
    StartsWith,
    EndsWith,
    RegexMatch,
    Levenshtein,
    IsJson,
    JsonDiff,
    trajectory::ToolCalled,
    trajectory::ToolNotCalled,
    trajectory::ToolTrajectory,
    trajectory::ToolOrder,
    trajectory::ToolsSucceeded,
    trajectory::ToolCount,
    retrieval::HitRate,
    retrieval::Recall,
    retrieval::Precision,
    retrieval::Mrr,
    retrieval::Ndcg,
);
