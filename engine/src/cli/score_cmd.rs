//! `cautilus score`: run one scorer on one output.
//!
//! A scorer that requests `model` (the built-in `judge`, or your own) is
//! granted the judge `--judge` names, else the project's `[judge]`, built
//! as a suite builds it ([`crate::eval::assert::judge::JudgeModel::for_run`]): the
//! same provider resolution, grants, limits and cassettes (`--replay`,
//! `--cassette`), so a rubric can be iterated on one answer, offline once
//! recorded. A scorer that did not request `model` is granted nothing.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde::Serialize;

use super::inputs::{json_arg, text_arg};
use super::{LimitArgs, registry_for};
use crate::eval::assert::judge::JudgeModel;
use crate::eval::assert::judge_config::JudgeConfig;
use crate::eval::assert::judge_spend::Spend;
use crate::eval::provider::cassette::{Cassette, ReplayMode};
use crate::plugin::{
    Grants, Limits, Plugin, PluginError, Registry, Score, ScoreInput, ScorerSession,
};

const EXAMPLES: &str = "\
Examples:
  cautilus score --scorer contains --output 'The answer is 42' --config '{\"value\": \"42\"}'
  cautilus score --scorer icontains --output @answer.txt --expected 'paris'
  cautilus score --scorer regex --output 'Order #1234' --config '{\"value\": \"#\\\\d+\", \"flags\": \"i\"}'
  cautilus score --scorer json-diff --output '{\"a\": 1}' --expected-json '{\"a\": 1, \"b\": 2}' --json
  cautilus score --scorer ./target/wasm32-wasip2/release/my_scorer.wasm --output 'hi'

With a judge (scorers that request `model`, e.g. the built-in `judge`):
  cautilus score --scorer judge --config '{\"criteria\": \"names the eval command\"}' \\
      --output @answer.txt --judge openai/gpt-5-mini
  cautilus score --scorer judge --config @rubric.json --output @answer.txt \\
      --judge anthropic/claude-sonnet-4-5 --replay record-new --cassette rubric
  cautilus score --scorer judge --config @rubric.json --output @answer.txt \\
      --judge anthropic/claude-sonnet-4-5 --replay replay-strict --cassette rubric
      (offline: the judge's answer from .cautilus/cassettes/rubric.json, no key)
Without --judge, the `[judge]` of the nearest cautilus.toml is used. Keys
stay in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY); the base URL
comes from OPENAI_BASE_URL / ANTHROPIC_BASE_URL or the config's
`[providers.*]`. A judged call's time limit defaults to 600000 ms.

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
    /// The judge model of a scorer that requests `model`: PROVIDER/MODEL or
    /// PROVIDER:MODEL (e.g. `openai/gpt-5-mini`, `fixture/fixture`; a .wasm
    /// provider: `./judge.wasm:MODEL`) [default: cautilus.toml's `[judge]`]
    #[arg(long, value_name = "PROVIDER/MODEL", value_parser = parse_judge)]
    judge: Option<JudgeConfig>,
    /// The judge's calls and the cassette, as in `eval test`: `live`
    /// (default; no cassette), `record-new`, `replay-strict` (only from the
    /// cassette: no network, no key), `refresh`
    #[arg(long, value_name = "MODE", value_parser = ReplayMode::parse)]
    replay: Option<ReplayMode>,
    /// The cassette: <records dir>/cassettes/<NAME>.json (the records dir
    /// is cautilus.toml's `dir`, else ./.cautilus) [default: score]
    #[arg(long, value_name = "NAME", requires = "replay")]
    cassette: Option<String>,
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
/// or null), in a session of its own with `grants`: a bad config fails
/// with a definition error before anything is scored.
pub(super) fn score_answer(
    plugin: Arc<Plugin>,
    scorer: &str,
    config: &serde_json::Value,
    limits: Limits,
    grants: Arc<Grants>,
    answer: Answer<'_>,
) -> Result<Score, PluginError> {
    let mut session = ScorerSession::new(plugin, scorer, config, limits, grants)?;
    let mut input = ScoreInput::from_output(answer.case_id, Some(answer.output));
    input.subject.expected = answer.expected.map(|v| v.to_string());
    input.subject.input = answer
        .input
        .map(|text| serde_json::Value::String(text).to_string());
    session.score(&input)
}

fn parse_judge(value: &str) -> Result<JudgeConfig, String> {
    JudgeConfig::parse_flag(value)
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
    /// The judge's model and what its calls cost, when the scorer used one.
    #[serde(skip_serializing_if = "Option::is_none")]
    judge: Option<serde_json::Value>,
}

/// The judge a scorer is granted, and where its calls are recorded.
struct Judged {
    config: JudgeConfig,
    model: Arc<JudgeModel>,
    cassette: Option<Arc<Cassette>>,
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

    let scorer_limits = args.limits.limits(super::LimitArgs::SCORER_TIMEOUT_MS);
    let registry = registry_for(&scorer_limits)?;
    let (plugin, scorer) = registry.resolve_scorer(&args.scorer)?;
    // As in a suite: only a scorer that requested `model` is granted the
    // judge, with the judge's limits; any other is granted nothing.
    let judged = if plugin.requested().model() {
        Some(judge(&args, registry, &plugin, &scorer)?)
    } else {
        if args.judge.is_some() || args.replay.is_some() {
            crate::term_eprintln!(
                "note: scorer `{scorer}` did not request `model`, so it is granted no judge; --judge and --replay are not used"
            );
        }
        None
    };
    let (limits, grants) = match &judged {
        Some(judged) => (
            judged.model.limits().clone(),
            Arc::new(judged.model.scorer_grants()),
        ),
        None => (scorer_limits, Arc::new(Grants::default())),
    };
    let label = plugin.label.clone();
    let answer = Answer {
        case_id: "cli",
        output,
        expected,
        input,
    };
    crate::eval::assert::judge_spend::take_spend();
    let scored = score_answer(plugin, &scorer, &config, limits, grants, answer);
    let spend = crate::eval::assert::judge_spend::take_spend();
    // What was recorded is kept whatever the score.
    if let Some(cassette) = judged.as_ref().and_then(|j| j.cassette.as_deref()) {
        cassette.save()?;
    }
    let score = scored?;
    let judge = judged
        .as_ref()
        .map(|judged| judge_report(&judged.config, spend));
    print_score(&args, &label, &scorer, &score, judge)?;
    Ok(match score.passed {
        Some(true) => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// The judge of a scorer that requests `model`: `--judge`, else the
/// project's `[judge]` (a relative `.wasm` path there is relative to
/// cautilus.toml), with its cassette when `--replay` asks for one.
fn judge(
    args: &ScoreArgs,
    registry: &Registry,
    plugin: &Plugin,
    scorer: &str,
) -> anyhow::Result<Judged> {
    let cwd = std::env::current_dir()?;
    let (project, config_file) = crate::project::open(&cwd, None)?;
    let provider_env = crate::cli::provider_env(registry, &project)?;
    let config = match (&args.judge, &project.config.judge) {
        (Some(flag), _) => flag.clone(),
        (None, Some(configured)) => JudgeConfig {
            provider: crate::plugin::registry::reference_in(&project.root, &configured.provider),
            model: configured.model.clone(),
        },
        (None, None) => anyhow::bail!(
            "scorer `{}` ({}) calls a judge model, and none is configured: pass `--judge PROVIDER/MODEL` (e.g. `--judge openai/gpt-5-mini`, or `--judge fixture/fixture` for a deterministic stand-in) or set `[judge]` (`provider`, `model`) in cautilus.toml",
            crate::term::inline(scorer),
            crate::term::inline(&plugin.label)
        ),
    };
    let cassette = match args.replay.unwrap_or_default() {
        ReplayMode::Live => None,
        mode => {
            let records = match config_file {
                Some(_) => project.records_dir(),
                None => cwd.join(".cautilus"),
            };
            let name = args.cassette.as_deref().unwrap_or("score");
            let redaction = crate::eval::redact::Redaction::parse(&project.config.redact)
                .map_err(anyhow::Error::msg)?;
            Some(Arc::new(Cassette::open(
                crate::eval::provider::cassette::default_path(&records, name),
                None,
                mode,
                Vec::new(),
                redaction,
                crate::eval::provider::cassette_file::DEFAULT_MAX_MIB.saturating_mul(1 << 20),
            )?))
        }
    };
    let limits: Limits = args.limits.limits(super::LimitArgs::PROVIDER_TIMEOUT_MS);
    let model = JudgeModel::for_run(
        registry,
        &config,
        Some(&limits),
        cassette.clone(),
        &provider_env,
    )?;
    Ok(Judged {
        config,
        model: Arc::new(model),
        cassette,
    })
}

fn judge_report(config: &JudgeConfig, spend: Spend) -> serde_json::Value {
    serde_json::json!({
        "provider": config.provider,
        "model": config.model,
        "calls": spend.calls,
        "costUsd": spend.cost_usd,
        "inputTokens": spend.input_tokens,
        "outputTokens": spend.output_tokens,
    })
}

fn print_score(
    args: &ScoreArgs,
    plugin: &str,
    scorer: &str,
    score: &Score,
    judge: Option<serde_json::Value>,
) -> anyhow::Result<()> {
    if args.json {
        let report = ScoreReport {
            scorer,
            plugin,
            name: &score.name,
            value: score.value,
            passed: score.passed,
            label: score.label.as_deref(),
            detail: score.detail.as_deref(),
            judge,
        };
        crate::outln!(
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
    crate::outln!("{verdict} {}  value={value}", shown(&score.name));
    if let Some(label) = &score.label {
        crate::outln!("  label: {}", shown(label));
    }
    if let Some(detail) = &score.detail {
        crate::outln!("  {}", shown(detail));
    }
    if let Some(judge) = &judge {
        let text = |key: &str| judge[key].as_str().unwrap_or_default().to_string();
        let cost = judge["costUsd"]
            .as_f64()
            .map_or(String::new(), |usd| format!(", ${usd:.4}"));
        crate::outln!(
            "  judge: {}/{} ({} call(s){cost})",
            shown(&text("provider")),
            shown(&text("model")),
            judge["calls"]
        );
    }
    Ok(())
}
