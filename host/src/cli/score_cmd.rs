//! `cautilus score`: run one scorer on one output.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde::Serialize;

use super::inputs::{json_arg, text_arg};
use super::{LimitArgs, registry_for};
use crate::plugin::{Grants, Score, ScoreInput, ScorerSession};

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
    let mut session = ScorerSession::new(
        plugin.clone(),
        &scorer,
        &config,
        limits,
        Arc::new(Grants::default()),
    )?;
    let mut score_input = ScoreInput::from_output("cli", Some(output));
    score_input.subject.expected = expected.map(|v| v.to_string());
    score_input.subject.input = input.map(|text| serde_json::Value::String(text).to_string());
    let score = session.score(&score_input)?;
    print_score(&args, &plugin.label, &scorer, &score)?;
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
