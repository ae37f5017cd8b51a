//! The flags of `cautilus eval test` and their parsers.

use std::path::PathBuf;

use clap::Args;

use crate::cli::LimitArgs;
use crate::cli::report_cmd::ReportFiles;
use crate::eval;

pub(super) const TEST_EXAMPLES: &str = "\
Examples:
  cautilus eval test --fixture fixtures/eval/app/prompt/tagline.fixture.json
  cautilus eval test --fixture fixtures/eval/app/chat/onboarding.fixture.yaml --output-dir /tmp/run --json
  cautilus eval test --fixture suite.json --fixture-results canned.json
  cautilus eval test --resume .cautilus/runs/<id>

Interrupting (Ctrl-C, SIGTERM) stops the run between cases: every finished
case is written, run.json says how far it got, and `--resume <run-dir>`
runs the remaining cases only. A second interrupt stops at once; the
journal (cells.jsonl) still holds every finished case, and answers.jsonl
every answer a provider gave, so `--resume` does not ask for it again.

A suite with variants, trials, gates or a selection of cases (--case,
--variant, `only`, `skip`) is an experiment: each variant's trial runs as
a group of its own and experiment.json holds every cell, the per-variant
statistics, the comparison with the baseline and the gates (--json prints
it).

Without --fixture, every suite the run would run is checked first (as
`eval list` checks it): when one is invalid, every invalid suite is listed
and nothing runs (no provider, no model call, no records).

Exit status: 0 the recommendation is accept-now (an experiment: its gates
pass), 1 defer or reject (gates fail), 2 the fixture or flags are invalid
(nothing was run), 130/143 interrupted by SIGINT/SIGTERM.";

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The fixture (JSON or YAML, `cautilus.evaluation_input.v1`); without
    /// it (and without --resume), every suite of the project runs (its
    /// cautilus.toml's fixtures, or evals/**/*.fixture.{json,yaml,yml})
    #[arg(long, value_name = "FILE")]
    pub(super) fixture: Option<PathBuf>,
    /// With no --fixture: run only the project's suites whose id matches
    /// (`*` matches anything; repeatable)
    #[arg(long, value_name = "ID", conflicts_with_all = ["fixture", "resume"])]
    pub(super) suite: Vec<String>,
    /// Continue an interrupted or killed run: its finished cases are kept,
    /// the others run, with the options it was started with (from its
    /// run.json); the fixture must be unchanged
    #[arg(
        long,
        value_name = "RUN_DIR",
        conflicts_with_all = ["fixture", "workspace", "output_dir", "provider", "fixture_results", "update_snapshots", "keep_workspaces", "config", "jobs", "timeout_ms", "memory_mib", "fuel", "grant_http", "grant_program", "grant_secret", "replay", "cassette"]
    )]
    pub(super) resume: Option<PathBuf>,
    /// The workspace under test (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub(super) workspace: Option<PathBuf>,
    /// Every path the fixture names (extends, case files, goldens,
    /// templates, graders, .wasm files) must lie inside DIR, symbolic links
    /// followed (default: the project root, else the git work tree, else
    /// the fixture's directory)
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub(super) path_root: Option<PathBuf>,
    /// Where to write eval-cases.json, eval-observed.json, eval-summary.json
    /// (default: <workspace>/.cautilus/runs/<id>/). Refused (exit 2) when
    /// another run is writing there, when it holds the fixture or a file
    /// the fixture reads, or when it holds files named like records that
    /// no cautilus run wrote
    #[arg(long, value_name = "DIR")]
    pub(super) output_dir: Option<PathBuf>,
    /// Provider: `fixture` (canned answers), `openai` (any OpenAI-compatible
    /// server: OPENAI_BASE_URL, OPENAI_API_KEY), `anthropic`
    /// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), `claude-cli` (`claude -p`),
    /// `codex-cli` (`codex exec`), `exec` (your program, named by the
    /// suite's `exec` field), or a .wasm path [default: `fixture` with
    /// --fixture-results, else what the fixture's `provider` asks for and
    /// this machine can reach]
    #[arg(long, value_name = "ID|PATH")]
    pub(super) provider: Option<String>,
    /// Provider calls and the cassette: `live` (default; no cassette),
    /// `record-new` (answer from the cassette, record what is missing),
    /// `replay-strict` (only from the cassette: no network, no process; a
    /// missing call fails its case), `refresh` (call live, re-record all)
    #[arg(long, value_name = "MODE", value_parser = parse_replay)]
    pub(super) replay: Option<eval::provider::cassette::ReplayMode>,
    /// The cassette: <workspace>/.cautilus/cassettes/<NAME>.json [default:
    /// the suite id]
    #[arg(long, value_name = "NAME")]
    pub(super) cassette: Option<String>,
    /// The largest cassette file read, in MiB: a larger one is refused
    /// before it is read (a cassette may come with a pull request)
    /// [default: 256]
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub(super) max_cassette_mib: Option<u64>,
    /// Let the provider reach this host through `http` (repeatable); the
    /// built-in API providers are granted their base URL's host already
    #[arg(long, value_name = "HOST")]
    pub(super) grant_http: Vec<String>,
    /// Let the provider run this program through `process` (repeatable)
    #[arg(long, value_name = "PROGRAM")]
    pub(super) grant_program: Vec<String>,
    /// Let the provider send secret NAME, read from ENV_VAR, in a request
    /// header (repeatable; the provider never sees its value)
    #[arg(long, value_name = "NAME[=ENV_VAR]", value_parser = parse_secret_grant)]
    pub(super) grant_secret: Vec<(String, String)>,
    /// Canned results for the fixture backend: a JSON object keyed by caseId
    #[arg(long, value_name = "FILE")]
    pub(super) fixture_results: Option<PathBuf>,
    /// Print the summary packet as JSON instead of the readable summary
    #[arg(long)]
    pub(super) json: bool,
    /// Write (or refresh) the golden files of `expected.snapshot` from this
    /// run's output, and say which; without it a missing golden is an error
    #[arg(long)]
    pub(super) update_snapshots: bool,
    /// The project config (default: the nearest cautilus.toml upward); its
    /// `dir` holds the run directories and cassettes, its `[defaults]` and
    /// `[grants]` apply where no flag says otherwise
    #[arg(long, value_name = "FILE")]
    pub(super) config: Option<PathBuf>,
    /// Keep the workspace copy each coding-agent sample ran in (printed on
    /// stderr) instead of removing it, to inspect what the agent did
    #[arg(long)]
    pub(super) keep_workspaces: bool,
    /// Worker threads [default: one per core; 1 on the repo surface, whose
    /// cases share one workspace]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub(super) jobs: Option<u16>,
    /// Provider calls in flight at once on the app surface, for a provider
    /// that waits on the network or a program (the API and CLI providers);
    /// they need no thread each. On the repo surface, coding-agent cases run
    /// at once (each sample in its own workspace copy) [default: 8 on the
    /// app surface; 1 on the repo surface]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub(super) concurrency: Option<u16>,
    /// Run only these variants (names or `*` patterns; repeatable). A
    /// filtered run's declared gates are informational; without declared
    /// gates a cell that ran and did not pass still fails it (exit 1)
    #[arg(long, value_name = "NAME", conflicts_with = "resume")]
    pub(super) variant: Vec<String>,
    /// Run only these cases (caseIds or `*` patterns; repeatable). A
    /// filtered run's declared gates are informational; without declared
    /// gates a cell that ran and did not pass still fails it (exit 1)
    #[arg(long, value_name = "ID", conflicts_with = "resume")]
    pub(super) case: Vec<String>,
    /// Run only cases tagged so (repeatable; any of them): a case matches
    /// when the case or its suite carries the tag. Without --fixture, only
    /// the suites with such cases run. A filtered run's declared gates are
    /// informational; without declared gates a cell that ran and did not
    /// pass still fails it (exit 1)
    #[arg(long, value_name = "TAG", conflicts_with = "resume")]
    pub(super) tag: Vec<String>,
    /// Run one part of the cells: the cases at positions p with p mod N =
    /// K − 1, every variant and trial of each (`--shard 2/4`). A shard's
    /// declared gates are informational; without declared gates a cell
    /// that did not pass fails it (exit 1), as it fails the whole run;
    /// an errored cell always does. `cautilus eval merge` joins the shards
    /// and its exit code is the whole run's
    #[arg(long, value_name = "K/N", value_parser = parse_shard, conflicts_with = "resume")]
    pub(super) shard: Option<(u32, u32)>,
    /// Re-score the outputs an earlier run of the suite recorded (its
    /// run directory, or `latest`), cell by cell, without calling any
    /// provider: for iterating on assertions and judges. App suites only
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["resume", "provider", "replay", "fixture_results"])]
    pub(super) reuse_outputs: Option<PathBuf>,
    /// Run every case this many times (over the fixture's `trials`; 1
    /// under --replay replay-strict)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100), conflicts_with = "resume")]
    pub(super) trials: Option<u32>,
    /// The judge of every suite, over the fixture's `judge` and the
    /// config's `[judge]`: PROVIDER/MODEL or PROVIDER:MODEL (e.g.
    /// `openai/gpt-5-mini`; a .wasm provider: `./judge.wasm:MODEL`)
    #[arg(long, value_name = "PROVIDER/MODEL", value_parser = parse_judge, conflicts_with = "resume")]
    pub(super) judge: Option<(String, String)>,
    /// Redact this value-relative path (`customer.email`, `items.*.token`)
    /// in everything the run keeps: packets, journal, experiment.json,
    /// cassettes (repeatable; adds to cautilus.toml's `redact`)
    #[arg(long, value_name = "PATH", conflicts_with = "resume", value_parser = parse_redact)]
    pub(super) redact: Vec<String>,
    /// With no --fixture: how many of the project's suites run at once;
    /// they share --concurrency and --jobs, and print one line each when
    /// done [default: one per core; 1 with --cassette]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64), conflicts_with_all = ["fixture", "resume"])]
    pub(super) parallel_suites: Option<u16>,
    /// No per-case lines and no progress bar: only the summary
    #[arg(long, short)]
    pub(super) quiet: bool,
    #[command(flatten)]
    pub(super) reports: ReportFiles,
    #[command(flatten)]
    pub(super) limits: LimitArgs,
}

fn parse_judge(value: &str) -> Result<(String, String), String> {
    eval::assert::judge_config::JudgeConfig::parse_flag(value)
        .map(|judge| (judge.provider, judge.model))
}

fn parse_redact(value: &str) -> Result<String, String> {
    eval::redact::Redaction::parse(&[value.to_string()]).map(|_| value.to_string())
}

fn parse_shard(value: &str) -> Result<(u32, u32), String> {
    let usage = || format!("`{value}`: give K/N with 1 ≤ K ≤ N ≤ 10000, e.g. 2/4");
    let (k, n) = value.split_once('/').ok_or_else(usage)?;
    let (k, n): (u32, u32) = (
        k.trim().parse().map_err(|_| usage())?,
        n.trim().parse().map_err(|_| usage())?,
    );
    if k == 0 || k > n || n > 10_000 {
        return Err(usage());
    }
    Ok((k, n))
}

fn parse_replay(value: &str) -> Result<eval::provider::cassette::ReplayMode, String> {
    eval::provider::cassette::ReplayMode::parse(value)
}

fn parse_secret_grant(value: &str) -> Result<(String, String), String> {
    eval::provider::setup::GrantFlags::parse_secret(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_k_of_n_within_bounds() {
        for (text, shard) in [
            ("1/1", (1, 1)),
            ("2/4", (2, 4)),
            ("4/4", (4, 4)),
            (" 3 / 7 ", (3, 7)),
            ("10000/10000", (10_000, 10_000)),
        ] {
            assert_eq!(parse_shard(text), Ok(shard), "{text}");
        }
        for text in [
            "0/4", "5/4", "1/0", "0/0", "1/10001", "2", "2-4", "/4", "2/", "a/4", "2/b", "-1/4",
            "2/4/6", "",
        ] {
            let error = parse_shard(text).unwrap_err();
            assert!(
                error.starts_with(&format!("`{text}`: give K/N with 1 ≤ K ≤ N ≤ 10000")),
                "{text}: {error}"
            );
        }
    }
}
