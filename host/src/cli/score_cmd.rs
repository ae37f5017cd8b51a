//! `cautilus score`: run one scorer on one output.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde::Serialize;

use super::inputs::{json_arg, text_arg};
use super::{LimitArgs, registry_for};
use crate::plugin::{Grants, Limits, Plugin, PluginError, Score, ScoreInput, ScorerSession};

const EXAMPLES: &str = "\
Examples:
  cautilus score --scorer contains --output 'The answer is 42' --config '{\"value\": \"42\"}'
  cautilus score --scorer icontains --output @answer.txt --expected 'paris'
  cautilus score --scorer regex --output 'Order #1234' --config '{\"value\": \"#\\\\d+\", \"flags\": \"i\"}'
  cautilus score --scorer json-diff --output '{\"a\": 1}' --expected-json '{\"a\": 1, \"b\": 2}' --json
  cautilus score --scorer ./target/wasm32-wasip2/release/my_scorer.wasm --output 'hi'

Exit status: 0 the score passed, 1 it failed (or the plugin failed at run
time), 2 a usage, plugin or config error (nothing was scored).";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ScoreArgs {
    /// Built-in scorer id, or a path to a .wasm component (`path.wasm#id` picks one of several)
    #[arg(long, value_name = "ID|PATH")]
    scorer: String,
    /// The output to score: text, @file, or @- for stdin
    #[arg(long, value_name = "TEXT|@FILE", allow_hyphen_values = true)]
    output: String,
    /// The case's expected value as text (scorers fall back to it when the config has no `value`)
    #[arg(
        long,
        value_name = "TEXT|@FILE",
        allow_hyphen_values = true,
        conflicts_with = "expected_json"
    )]
    expected: Option<String>,
    /// The case's expected value as JSON
    #[arg(long, value_name = "JSON|@FILE")]
    expected_json: Option<String>,
    /// The case's input, as text
    #[arg(long, value_name = "TEXT|@FILE", allow_hyphen_values = true)]
    input: Option<String>,
    /// Scorer config as a JSON object (`negate: true` inverts any scorer)
    #[arg(long, value_name = "JSON|@FILE")]
    config: Option<String>,
    /// Print the score as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// One answer for a scorer: what `cautilus score` gives it from its
/// flags, and `cautilus plugin test` from an example.
pub(super) struct Answer<'a> {
    pub case_id: &'a str,
    pub output: String,
    /// The case's expected value.
    pub expected: Option<serde_json::Value>,
    /// The case's input, as text.
    pub input: Option<String>,
}

/// Scores `answer` with `scorer` of `plugin` under `config` (a JSON object,
/// or null), in a session of its own with no grants: a bad config fails
/// with a definition error before anything is scored.
pub(super) fn score_answer(
    plugin: Arc<Plugin>,
    scorer: &str,
    config: &serde_json::Value,
    limits: Limits,
    answer: Answer<'_>,
) -> Result<Score, PluginError> {
    let mut session =
        ScorerSession::new(plugin, scorer, config, limits, Arc::new(Grants::default()))?;
    let mut input = ScoreInput::from_output(answer.case_id, Some(answer.output));
    input.subject.expected = answer.expected.map(|v| v.to_string());
    input.subject.input = answer
        .input
        .map(|text| serde_json::Value::String(text).to_string());
    session.score(&input)
}

#[derive(Serialize)]
struct ScoreReport<'a> {
    scorer: &'a str,
    plugin: &'a str,
    name: &'a str,
    value: Option<f64>,
    passed: Option<bool>,
    label: Option<&'a str>,
    detail: Option<&'a str>,
}

pub fn run(args: ScoreArgs) -> anyhow::Result<ExitCode> {
    let output = text_arg("--output", &args.output)?;
    let expected = match (&args.expected, &args.expected_json) {
        (Some(text), _) => Some(serde_json::Value::String(text_arg("--expected", text)?)),
        (None, Some(json)) => Some(json_arg("--expected-json", json)?),
        (None, None) => None,
    };
    let input = args
        .input
        .as_deref()
        .map(|text| text_arg("--input", text))
        .transpose()?;
    let config = match &args.config {
        Some(config) => json_arg("--config", config)?,
        None => serde_json::Value::Null,
    };

    let limits = args.limits.limits(super::LimitArgs::SCORER_TIMEOUT_MS);
    let registry = registry_for(&limits)?;
    let (plugin, scorer) = registry.resolve_scorer(&args.scorer)?;
    let label = plugin.label.clone();
    let answer = Answer {
        case_id: "cli",
        output,
        expected,
        input,
    };
    let score = score_answer(plugin, &scorer, &config, limits, answer)?;
    print_score(&args, &label, &scorer, &score)?;
    Ok(match score.passed {
        Some(true) => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

fn print_score(args: &ScoreArgs, plugin: &str, scorer: &str, score: &Score) -> anyhow::Result<()> {
    if args.json {
        let report = ScoreReport {
            scorer,
            plugin,
            name: &score.name,
            value: score.value,
            passed: score.passed,
            label: score.label.as_deref(),
            detail: score.detail.as_deref(),
        };
        println!(
            "{}",
            crate::term::json(&serde_json::to_string_pretty(&report)?)
        );
        return Ok(());
    }
    let verdict = match score.passed {
        Some(true) => "PASS",
        Some(false) => "FAIL",
        None => "N/A ",
    };
    let value = score.value.map_or("-".to_string(), |v| format!("{v:.3}"));
    // A scorer plugin's text: escaped for the terminal.
    let shown = crate::term::inline;
    println!("{verdict} {}  value={value}", shown(&score.name));
    if let Some(label) = &score.label {
        println!("  label: {}", shown(label));
    }
    if let Some(detail) = &score.detail {
        println!("  {}", shown(detail));
    }
    Ok(())
}
