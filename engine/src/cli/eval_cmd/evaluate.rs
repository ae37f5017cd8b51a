//! `cautilus eval evaluate`: score an observed packet, by its preset alone
//! or (`--fixture`) as `eval test` scores a run of that fixture.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::summary::finish;
use crate::cli::registry;
use crate::eval::{self, EvaluateOptions};
use crate::term::shown;

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus eval evaluate --input .cautilus/runs/<id>/eval-observed.json --fixture evals/support.fixture.yaml
  cautilus eval evaluate --input observed.json --output summary.json --json

Without --fixture, the preset scores what the packet carries (each
evaluation's `expected`). The fixture's assertions (case and suite level,
scorers, judges) are not in the packet: with --fixture, the packet's
answers are scored as `eval test` scores a run of that fixture (no
provider is called; a judge is), so on a packet `eval test` wrote the
verdicts are the run's. Every case of the fixture needs an answer in the
packet.

Exit status: 0 accept-now, 1 defer or reject, 2 the packet is invalid or
its schemaVersion unknown.";

#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// The observed packet (its schemaVersion selects the preset)
    #[arg(long, value_name = "FILE")]
    pub(super) input: PathBuf,
    /// Score the packet's answers with this fixture's expectations and
    /// assertions, as `eval test` does (app packets)
    #[arg(long, value_name = "FILE")]
    pub(super) fixture: Option<PathBuf>,
    /// Also write the summary packet here
    #[arg(long, value_name = "FILE")]
    pub(super) output: Option<PathBuf>,
    /// Print the summary packet as JSON
    #[arg(long)]
    pub(super) json: bool,
    /// Worker threads (default: one per core)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub(super) jobs: Option<u16>,
}

pub(super) fn evaluate(args: EvaluateArgs) -> anyhow::Result<ExitCode> {
    let registry = registry()?;
    if let Some(fixture) = &args.fixture {
        let _preloading = registry.preload_builtins();
        let cwd = std::env::current_dir()?;
        let (project, config) = crate::project::open(&cwd, None)?;
        let provider_env = crate::cli::provider_env(registry, &project)?;
        let rescored = crate::quality::rescore::rescore(
            registry,
            &args.input,
            fixture,
            &crate::quality::rescore::RescoreOptions {
                output: args.output,
                jobs: args.jobs.map(usize::from),
                default_judge: config
                    .and(project.config.judge.as_ref())
                    .map(crate::project::config::ConfigJudge::to_fixture_value),
                provider_env,
            },
        )?;
        return finish(&rescored.outcome, args.json);
    }
    let outcome = eval::evaluate(
        registry,
        &EvaluateOptions {
            input: args.input.clone(),
            output: args.output,
            jobs: jobs(args.jobs),
        },
    )?;
    warn_unchecked(&args.input, &outcome);
    finish(&outcome, args.json)
}

/// A packet `eval test` wrote (it names its fixture) whose cases came out
/// unchecked: their assertions are in the fixture, not the packet.
fn warn_unchecked(input: &Path, outcome: &eval::SuiteOutcome) {
    let unchecked = outcome
        .tally
        .counts()
        .get("unchecked")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    if unchecked == 0 {
        return;
    }
    if let Some(fixture_ref) = fixture_ref(input) {
        eprintln!(
            "warning: {unchecked} case(s) unchecked: the packet carries the answers, not the fixture's assertions; score it as the run did with `--fixture {}`",
            shown(&fixture_ref)
        );
    }
}

/// The fixture a packet names (`fixtureRef`), when it is a readable JSON
/// object that names one.
fn fixture_ref(packet: &Path) -> Option<String> {
    std::fs::File::open(packet)
        .ok()
        .and_then(|f| {
            serde_json::from_reader::<_, serde_json::Value>(std::io::BufReader::new(f)).ok()
        })
        .and_then(|p| {
            p.get("fixtureRef")
                .and_then(|r| r.as_str().map(str::to_string))
        })
}

fn jobs(flag: Option<u16>) -> usize {
    flag.map_or_else(eval::default_jobs, usize::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_names_its_fixture_only_as_a_string_of_an_object() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                r#"{"fixtureRef": "evals/a.fixture.yaml", "evaluations": []}"#,
                Some("evals/a.fixture.yaml"),
            ),
            (r#"{"fixtureRef": ""}"#, Some("")),
            (r#"{"evaluations": []}"#, None),
            (r#"{"fixtureRef": 3}"#, None),
            (r#"{"fixtureRef": null}"#, None),
            (r#"[{"fixtureRef": "x"}]"#, None),
            (r#"{"fixtureRef": "x""#, None),
            ("", None),
        ];
        for (i, (text, expected)) in cases.iter().enumerate() {
            let packet = dir.path().join(format!("{i}.json"));
            std::fs::write(&packet, text).unwrap();
            assert_eq!(fixture_ref(&packet).as_deref(), *expected, "{text}");
        }
        assert_eq!(fixture_ref(&dir.path().join("missing.json")), None);
        assert_eq!(fixture_ref(dir.path()), None);
    }
}
