//! `cautilus eval test|evaluate|validate|compare`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::{LimitArgs, registry, registry_for};
use crate::eval::{self, EvaluateOptions, SuiteOutcome, TestOptions};
use crate::term::shown;

const TEST_EXAMPLES: &str = "\
Examples:
  cautilus eval test --fixture fixtures/eval/app/prompt/tagline.fixture.json
  cautilus eval test --fixture fixtures/eval/app/chat/onboarding.fixture.yaml --output-dir /tmp/run --json
  cautilus eval test --fixture suite.json --fixture-results canned.json
  cautilus eval test --resume .cautilus/runs/<id>

Interrupting (Ctrl-C, SIGTERM) stops the run between cases: every finished
case is written, run.json says how far it got, and `--resume <run-dir>`
runs the remaining cases only. A second interrupt stops at once; the
journal (cells.jsonl) still holds every finished case.

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

const EVALUATE_EXAMPLES: &str = "\
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

const VALIDATE_EXAMPLES: &str = "\
Examples:
  cautilus eval validate --fixture fixtures/eval/app/prompt/tagline.fixture.json

Exit status: 0 valid, 2 invalid (the error names the file and JSON path).";

const COMPARE_EXAMPLES: &str = "\
Examples:
  cautilus eval compare .cautilus/runs/<before> latest
  cautilus eval compare .cautilus/runs/<api-run> .cautilus/runs/<cli-run> --json

OLD and NEW are runs of any kind (one fixture's run, an experiment with
variants and trials, a project run), `latest` (the newest finished run of
the project), or observed packets.

Verdicts: each case (per suite, and per variant in an experiment) is
`passed` when every trial passed, else its worst trial's status. Listed:
each case whose verdict changed (REGRESSED: passed in OLD, not in NEW;
FIXED: the reverse; CHANGED: another change, or a different number of
trials passed), NEW cases and REMOVED ones.

Harness parity: each observed packet at the same place in both runs is
checked against the cross-runtime rules: surface, preset, fixtureRef and
caseId are byte-equal; provider, model, harness, mode, durationMs,
observed.messages and observed.finalText are present on both sides; what
may differ (the answer, the model, usage, cost, duration) is listed with
each side's harness, to tell a harness-driven change from a real one.

Exit status: 0 no case regressed and the rules hold, 1 a case regressed or
a rule is broken, 2 a run cannot be read.";

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Run a fixture's cases through a provider and score them
    #[command(after_help = TEST_EXAMPLES)]
    Test(Box<TestArgs>),
    /// Score an observed packet produced by any runner
    #[command(after_help = EVALUATE_EXAMPLES)]
    Evaluate(EvaluateArgs),
    /// Check a fixture offline (schema, taxonomy, preset case shape); runs nothing
    #[command(after_help = VALIDATE_EXAMPLES)]
    Validate(ValidateArgs),
    /// Compare two runs: which cases changed verdict (regressed, fixed,
    /// new, removed), and the cross-runtime rules between their harnesses
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// List the project's suites (its cautilus.toml's fixtures) without running them
    #[command(after_help = super::list_cmd::LIST_EXAMPLES)]
    List(super::list_cmd::ListArgs),
    /// Make a finished run the suite's committed baseline
    /// (<records>/baselines/<suiteId>.json); later runs compare with it
    #[command(after_help = PROMOTE_EXAMPLES)]
    Promote(PromoteArgs),
    /// Join the shard runs of one experiment (`--shard K/N`) into one record
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
}

const MERGE_EXAMPLES: &str = "\
Examples:
  cautilus eval test --fixture evals/support.fixture.yaml --shard 1/2 --output-dir shards/1
  cautilus eval test --fixture evals/support.fixture.yaml --shard 2/2 --output-dir shards/2
  cautilus eval merge shards/1 shards/2 --output-dir merged

The shards must be every part (1/N … N/N) of one suite's run, completed.
The merged experiment.json holds every cell in the order an unsharded run
writes them, and its aggregates, comparison and gates equal that run's.

Exit status: 0 the gates pass, 1 they fail, 2 the shards cannot be merged.";

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' run directories (or their experiment.json)
    #[arg(value_name = "RUN_DIR", required = true)]
    runs: Vec<PathBuf>,
    /// Where to write the merged experiment.json [default:
    /// <records>/runs/<id>/]
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Print the merged record instead of the summary
    #[arg(long)]
    json: bool,
}

const PROMOTE_EXAMPLES: &str = "\
Examples:
  cautilus eval promote latest
  cautilus eval promote .cautilus/runs/<id> --variant candidate

Promotes one variant (default: the run's baseline variant, else its only
one) of a completed, unfiltered run. Commit the file it writes: every later
run of the suite (that declares no baseline variant of its own) compares
each variant with it, cell by cell, and its `minDeltaVsBaseline` and
`minDeltaCiLow` gates read that comparison. When the suite's cases or
scoring change, the comparison turns informational until you promote again.

Exit status: 0 promoted, 2 the run cannot be promoted (interrupted,
filtered, no such variant).";

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// A run directory, or `latest` (the newest finished run under
    /// <records>/runs)
    #[arg(value_name = "RUN_DIR|latest")]
    run: PathBuf,
    /// The variant to promote
    #[arg(long, value_name = "NAME")]
    variant: Option<String>,
    /// The project config (default: the nearest cautilus.toml upward); its
    /// `dir` holds the runs and baselines
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The fixture (JSON or YAML, `cautilus.evaluation_input.v1`); without
    /// it (and without --resume), every suite of the project runs (its
    /// cautilus.toml's fixtures, or evals/**/*.fixture.{json,yaml,yml})
    #[arg(long, value_name = "FILE")]
    fixture: Option<PathBuf>,
    /// With no --fixture: run only the project's suites whose id matches
    /// (`*` matches anything; repeatable)
    #[arg(long, value_name = "ID", conflicts_with_all = ["fixture", "resume"])]
    suite: Vec<String>,
    /// Continue an interrupted or killed run: its finished cases are kept,
    /// the others run, with the options it was started with (from its
    /// run.json); the fixture must be unchanged
    #[arg(
        long,
        value_name = "RUN_DIR",
        conflicts_with_all = ["fixture", "workspace", "output_dir", "provider", "fixture_results", "update_snapshots", "keep_workspaces", "config", "jobs", "timeout_ms", "memory_mib", "fuel", "grant_http", "grant_program", "grant_secret", "replay", "cassette"]
    )]
    resume: Option<PathBuf>,
    /// The workspace under test (default: the current directory)
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Every path the fixture names (extends, case files, goldens,
    /// templates, graders, .wasm files) must lie inside DIR, symbolic links
    /// followed (default: the project root, else the git work tree, else
    /// the fixture's directory)
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    path_root: Option<PathBuf>,
    /// Where to write eval-cases.json, eval-observed.json, eval-summary.json
    /// (default: <workspace>/.cautilus/runs/<id>/). Refused (exit 2) when
    /// another run is writing there, when it holds the fixture or a file
    /// the fixture reads, or when it holds files named like records that
    /// no cautilus run wrote
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Provider: `fixture` (canned answers), `openai` (any OpenAI-compatible
    /// server: OPENAI_BASE_URL, OPENAI_API_KEY), `anthropic`
    /// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), `claude-cli` (`claude -p`),
    /// `codex-cli` (`codex exec`), or a .wasm path [default: `fixture` with
    /// --fixture-results, else what the fixture's `provider` asks for and
    /// this machine can reach]
    #[arg(long, value_name = "ID|PATH")]
    provider: Option<String>,
    /// Provider calls and the cassette: `live` (default; no cassette),
    /// `record-new` (answer from the cassette, record what is missing),
    /// `replay-strict` (only from the cassette: no network, no process; a
    /// missing call fails its case), `refresh` (call live, re-record all)
    #[arg(long, value_name = "MODE", value_parser = parse_replay)]
    replay: Option<eval::provider::cassette::ReplayMode>,
    /// The cassette: <workspace>/.cautilus/cassettes/<NAME>.json [default:
    /// the suite id]
    #[arg(long, value_name = "NAME")]
    cassette: Option<String>,
    /// The largest cassette file read, in MiB: a larger one is refused
    /// before it is read (a cassette may come with a pull request)
    /// [default: 256]
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    max_cassette_mib: Option<u64>,
    /// Let the provider reach this host through `http` (repeatable); the
    /// built-in API providers are granted their base URL's host already
    #[arg(long, value_name = "HOST")]
    grant_http: Vec<String>,
    /// Let the provider run this program through `process` (repeatable)
    #[arg(long, value_name = "PROGRAM")]
    grant_program: Vec<String>,
    /// Let the provider send secret NAME, read from ENV_VAR, in a request
    /// header (repeatable; the provider never sees its value)
    #[arg(long, value_name = "NAME[=ENV_VAR]", value_parser = parse_secret_grant)]
    grant_secret: Vec<(String, String)>,
    /// Canned results for the fixture backend: a JSON object keyed by caseId
    #[arg(long, value_name = "FILE")]
    fixture_results: Option<PathBuf>,
    /// Print the summary packet as JSON instead of the readable summary
    #[arg(long)]
    json: bool,
    /// Write (or refresh) the golden files of `expected.snapshot` from this
    /// run's output, and say which; without it a missing golden is an error
    #[arg(long)]
    update_snapshots: bool,
    /// The project config (default: the nearest cautilus.toml upward); its
    /// `dir` holds the run directories and cassettes, its `[defaults]` and
    /// `[grants]` apply where no flag says otherwise
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Keep the workspace copy each coding-agent sample ran in (printed on
    /// stderr) instead of removing it, to inspect what the agent did
    #[arg(long)]
    keep_workspaces: bool,
    /// Worker threads [default: one per core; 1 on the repo surface, whose
    /// cases share one workspace]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Provider calls in flight at once on the app surface, for a provider
    /// that waits on the network or a program (the API and CLI providers);
    /// they need no thread each. On the repo surface, coding-agent cases run
    /// at once (each sample in its own workspace copy) [default: 8 on the
    /// app surface; 1 on the repo surface]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    concurrency: Option<u16>,
    /// Run only these variants (names or `*` patterns; repeatable). A
    /// filtered run's declared gates are informational; without declared
    /// gates a cell that ran and did not pass still fails it (exit 1)
    #[arg(long, value_name = "NAME", conflicts_with = "resume")]
    variant: Vec<String>,
    /// Run only these cases (caseIds or `*` patterns; repeatable). A
    /// filtered run's declared gates are informational; without declared
    /// gates a cell that ran and did not pass still fails it (exit 1)
    #[arg(long, value_name = "ID", conflicts_with = "resume")]
    case: Vec<String>,
    /// Run only cases tagged so (repeatable; any of them): a case matches
    /// when the case or its suite carries the tag. Without --fixture, only
    /// the suites with such cases run. A filtered run's declared gates are
    /// informational; without declared gates a cell that ran and did not
    /// pass still fails it (exit 1)
    #[arg(long, value_name = "TAG", conflicts_with = "resume")]
    tag: Vec<String>,
    /// Run one part of the cells: the cases at positions p with p mod N =
    /// K − 1, every variant and trial of each (`--shard 2/4`). A shard's
    /// declared gates are informational; without declared gates a cell
    /// that did not pass fails it (exit 1), as it fails the whole run;
    /// an errored cell always does. `cautilus eval merge` joins the shards
    /// and its exit code is the whole run's
    #[arg(long, value_name = "K/N", value_parser = parse_shard, conflicts_with = "resume")]
    shard: Option<(u32, u32)>,
    /// Re-score the outputs an earlier run of the suite recorded (its
    /// run directory, or `latest`), cell by cell, without calling any
    /// provider: for iterating on assertions and judges. App suites only
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["resume", "provider", "replay", "fixture_results"])]
    reuse_outputs: Option<PathBuf>,
    /// Run every case this many times (over the fixture's `trials`; 1
    /// under --replay replay-strict)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100), conflicts_with = "resume")]
    trials: Option<u32>,
    /// The judge of every suite, over the fixture's `judge` and the
    /// config's `[judge]`: PROVIDER/MODEL or PROVIDER:MODEL (e.g.
    /// `openai/gpt-5-mini`; a .wasm provider: `./judge.wasm:MODEL`)
    #[arg(long, value_name = "PROVIDER/MODEL", value_parser = parse_judge, conflicts_with = "resume")]
    judge: Option<(String, String)>,
    /// Redact this value-relative path (`customer.email`, `items.*.token`)
    /// in everything the run keeps: packets, journal, experiment.json,
    /// cassettes (repeatable; adds to cautilus.toml's `redact`)
    #[arg(long, value_name = "PATH", conflicts_with = "resume", value_parser = parse_redact)]
    redact: Vec<String>,
    /// With no --fixture: how many of the project's suites run at once;
    /// they share --concurrency and --jobs, and print one line each when
    /// done [default: one per core; 1 with --cassette]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64), conflicts_with_all = ["fixture", "resume"])]
    parallel_suites: Option<u16>,
    /// No per-case lines and no progress bar: only the summary
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    reports: super::report_cmd::ReportFiles,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// The observed packet (its schemaVersion selects the preset)
    #[arg(long, value_name = "FILE")]
    input: PathBuf,
    /// Score the packet's answers with this fixture's expectations and
    /// assertions, as `eval test` does (app packets)
    #[arg(long, value_name = "FILE")]
    fixture: Option<PathBuf>,
    /// Also write the summary packet here
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the summary packet as JSON
    #[arg(long)]
    json: bool,
    /// Worker threads (default: one per core)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The fixture to check
    #[arg(long, value_name = "FILE")]
    fixture: PathBuf,
    /// Every path the fixture names must lie inside DIR (see `eval test`)
    #[arg(long, value_name = "DIR")]
    path_root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The earlier run: a run directory of any kind, `latest`, or an
    /// eval-observed.json
    #[arg(value_name = "OLD")]
    a: PathBuf,
    /// The later run, the same way
    #[arg(value_name = "NEW")]
    b: PathBuf,
    /// Print the comparison as JSON (`cautilus.run_comparison.v1`)
    #[arg(long)]
    json: bool,
    /// The project config whose runs `latest` looks at (default: the
    /// nearest cautilus.toml upward)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn run(command: EvalCommand) -> anyhow::Result<ExitCode> {
    match command {
        EvalCommand::Test(args) => test(*args),
        EvalCommand::Evaluate(args) => evaluate(args),
        EvalCommand::Validate(args) => validate(args),
        EvalCommand::Compare(args) => compare(args),
        EvalCommand::List(args) => super::list_cmd::list(args),
        EvalCommand::Promote(args) => promote(args),
        EvalCommand::Merge(args) => {
            let output_dir = match args.output_dir {
                Some(dir) => dir,
                None => eval::files::new_run_dir(&std::env::current_dir()?.join(".cautilus")),
            };
            let outcome = crate::quality::merge::merge(&args.runs, &output_dir)?;
            experiment(&outcome, args.json)
        }
    }
}

fn test(args: TestArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    if !args.json && !args.quiet && std::io::stderr().is_terminal() {
        eval::records::progress::enable();
        crate::plugin::notice::set_sink(eval::records::progress::notice);
    }
    let result = run_test(args);
    eval::records::progress::finish();
    result
}

fn run_test(args: TestArgs) -> anyhow::Result<ExitCode> {
    let case_lines = if args.json || args.quiet {
        eval::CaseLines::Drop
    } else {
        eval::CaseLines::Print
    };
    let mut options = match (args.resume, args.fixture) {
        (Some(dir), _) if crate::quality::resume::is_experiment(&dir) => {
            crate::quality::resume::options(&dir, case_lines)?
        }
        (Some(dir), _) => {
            crate::quality::experiment::check_resumable(&dir)?;
            eval::resume_options(&dir, case_lines)?
        }
        (None, fixture) => {
            let project_run = fixture.is_none();
            let cwd = std::env::current_dir()?;
            let (project, config_file) = crate::project::open(&cwd, args.config.as_deref())?;
            let defaults = &project.config.defaults;
            let grants = &project.config.grants;
            let options = TestOptions {
                fixture: fixture.unwrap_or_default(),
                path_root: args.path_root,
                provider_env: project.config.providers.as_env(),
                judge: args.judge.map(
                    |(provider, model)| serde_json::json!({"provider": provider, "model": model}),
                ),
                default_judge: project
                    .config
                    .judge
                    .as_ref()
                    .map(crate::project::config::ConfigJudge::to_fixture_value),
                redact: eval::redact::Redaction::parse(
                    &project
                        .config
                        .redact
                        .iter()
                        .cloned()
                        .chain(args.redact)
                        .collect::<Vec<_>>(),
                )
                .map_err(anyhow::Error::msg)?,
                records: config_file.is_some().then(|| project.records_dir()),
                workspace: match args.workspace {
                    Some(dir) => dir,
                    None => cwd,
                },
                output_dir: args.output_dir,
                provider: args.provider,
                default_provider: defaults.provider.clone(),
                // Checked when the config was read.
                default_replay: defaults
                    .replay
                    .as_deref()
                    .and_then(|mode| eval::provider::cassette::ReplayMode::parse(mode).ok()),
                grants: eval::provider::setup::GrantFlags {
                    http_hosts: grants
                        .http
                        .iter()
                        .chain(&args.grant_http)
                        .map(|h| h.to_ascii_lowercase())
                        .collect(),
                    programs: grants
                        .programs
                        .iter()
                        .cloned()
                        .chain(args.grant_program)
                        .collect(),
                    secrets: grants
                        .secrets
                        .clone()
                        .into_iter()
                        .chain(args.grant_secret)
                        .collect(),
                },
                replay: args.replay,
                cassette: args.cassette,
                max_cassette_mib: args.max_cassette_mib,
                fixture_results: args.fixture_results,
                limits: args.limits.limits(
                    defaults
                        .timeout_ms
                        .unwrap_or(LimitArgs::PROVIDER_TIMEOUT_MS),
                ),
                jobs: args.jobs.or(defaults.jobs).map(usize::from),
                concurrency: args.concurrency.or(defaults.concurrency).map(usize::from),
                update_snapshots: args.update_snapshots,
                keep_workspaces: args.keep_workspaces,
                resume: false,
                case_lines,
                cells: eval::CellFilters {
                    variants: args.variant,
                    cases: args.case,
                    tags: args.tag.clone(),
                    trials: args.trials,
                    default_trials: defaults.trials,
                    shard: args.shard,
                },
                reuse_outputs: args.reuse_outputs,
                require_canned: false,
                trial: 1,
            };
            eval::files::refuse_linked_records_root(&options.records_root())?;
            let mut options = options;
            if let Some(run) = &options.reuse_outputs {
                options.reuse_outputs = Some(crate::project::latest::resolve(
                    run,
                    &options.records_root(),
                )?);
            }
            if project_run {
                return super::project_run::run(
                    &project,
                    config_file.as_deref(),
                    options,
                    &args.suite,
                    args.json,
                    &args.reports,
                    args.parallel_suites
                        .or(defaults.parallel_suites)
                        .map(usize::from),
                );
            }
            options
        }
    };
    // A read limit, given again when resuming.
    options.max_cassette_mib = args.max_cassette_mib.or(options.max_cassette_mib);
    // Ctrl-C stops the run between cases and keeps every finished one.
    eval::interrupt::install()?;
    let registry = registry_for(&options.limits)?;
    let _preloading = registry.preload_builtins();
    let run = match crate::quality::test(registry, &options)? {
        crate::quality::Run::Plain(run) => run,
        crate::quality::Run::Experiment(outcome) => {
            let code = experiment(&outcome, args.json)?;
            args.reports.write(&outcome.output_dir)?;
            return Ok(code);
        }
    };
    match run {
        eval::TestRun::Suite(outcome) => {
            let code = finish(&outcome, args.json)?;
            let dir = match &outcome.output_dir {
                Some(dir) => dir.clone(),
                None => outcome
                    .summary_path
                    .parent()
                    .unwrap_or(std::path::Path::new("."))
                    .to_path_buf(),
            };
            args.reports.write(&dir)?;
            Ok(match outcome.interrupted {
                Some(signal) => {
                    eprintln!(
                        "interrupted by {signal}: {} of {} cases finished and written; continue with `cautilus eval test --resume {}`",
                        outcome.finished,
                        outcome.total,
                        shown(
                            outcome
                                .output_dir
                                .as_deref()
                                .unwrap_or(std::path::Path::new("."))
                                .display()
                        )
                    );
                    ExitCode::from(eval::interrupt::exit_status())
                }
                None => code,
            })
        }
        eval::TestRun::Steps(outcome) => {
            if args.reports.any() {
                eprintln!(
                    "warning: no report written: --html, --junit and --markdown report a suite of cases, and a steps fixture's records (in {}) are per step",
                    shown(outcome.output_dir.display())
                );
            }
            print(
                &outcome.summary_path,
                outcome.recommendation,
                args.json,
                |out| {
                    eval::run::steps::print_summary(out, &outcome)?;
                    writeln!(out, "records: {}", shown(outcome.output_dir.display()))
                },
            )
        }
    }
}

/// Prints an experiment's record (`--json`) or its summary; exits 0 when
/// its gates pass, 1 when they fail, 130/143 when interrupted.
fn experiment(outcome: &crate::quality::ExperimentOutcome, json: bool) -> anyhow::Result<ExitCode> {
    eval::records::progress::finish();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if json {
        let mut record = std::io::BufReader::new(std::fs::File::open(&outcome.record)?);
        crate::term::copy_json(&mut record, &mut out)?;
    } else {
        crate::quality::report::print(&mut out, outcome)?;
    }
    out.flush()?;
    Ok(match outcome.interrupted {
        Some(signal) => {
            eprintln!(
                "interrupted by {signal}: the cells that finished are in {}",
                shown(outcome.record.display())
            );
            ExitCode::from(eval::interrupt::exit_status())
        }
        None if outcome.passed => ExitCode::SUCCESS,
        None => ExitCode::from(1),
    })
}

fn promote(args: PromoteArgs) -> anyhow::Result<ExitCode> {
    let records = super::inputs::records_root(args.config.as_deref())?;
    let run = crate::project::latest::resolve(&args.run, &records)?;
    let promoted = crate::quality::baseline::promote(&run, args.variant.as_deref(), &records)?;
    println!(
        "promoted variant `{}` of {} ({} cells) as the baseline of `{}`: {} (commit it)",
        shown(&promoted.variant),
        shown(run.display()),
        promoted.cells,
        shown(&promoted.suite_id),
        shown(promoted.path.display())
    );
    Ok(ExitCode::SUCCESS)
}

fn parse_judge(value: &str) -> Result<(String, String), String> {
    eval::assert::judge::JudgeConfig::parse_flag(value).map(|judge| (judge.provider, judge.model))
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

fn evaluate(args: EvaluateArgs) -> anyhow::Result<ExitCode> {
    let registry = registry()?;
    if let Some(fixture) = &args.fixture {
        let _preloading = registry.preload_builtins();
        let cwd = std::env::current_dir()?;
        let (project, config) = crate::project::open(&cwd, None)?;
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
                provider_env: project.config.providers.as_env(),
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
fn warn_unchecked(input: &std::path::Path, outcome: &eval::SuiteOutcome) {
    let unchecked = outcome
        .tally
        .counts()
        .get("unchecked")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    if unchecked == 0 {
        return;
    }
    let fixture_ref = std::fs::File::open(input)
        .ok()
        .and_then(|f| {
            serde_json::from_reader::<_, serde_json::Value>(std::io::BufReader::new(f)).ok()
        })
        .and_then(|p| {
            p.get("fixtureRef")
                .and_then(|r| r.as_str().map(str::to_string))
        });
    if let Some(fixture_ref) = fixture_ref {
        eprintln!(
            "warning: {unchecked} case(s) unchecked: the packet carries the answers, not the fixture's assertions; score it as the run did with `--fixture {}`",
            shown(&fixture_ref)
        );
    }
}

fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let a = super::inputs::run_dir(&args.a, args.config.as_deref())?;
    let b = super::inputs::run_dir(&args.b, args.config.as_deref())?;
    let report = crate::report::diff::compare_runs(&a, &b)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let text = serde_json::to_string_pretty(&report)?;
        writeln!(out, "{}", crate::term::json(&text))?;
    } else {
        crate::report::diff::print(&mut out, &report)?;
    }
    Ok(if report["holds"] == true {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let registry = registry()?;
    let _preloading = registry.preload_builtins();
    // The project's `[judge]` stands in where the fixture names none.
    let cwd = std::env::current_dir()?;
    let (project, config) = crate::project::open(&cwd, None)?;
    let default_judge = config
        .and(project.config.judge.as_ref())
        .map(crate::project::config::ConfigJudge::to_fixture_value);
    let checked = crate::quality::check::check_fixture(
        registry,
        &args.fixture,
        &crate::quality::check::CheckOptions {
            path_root: args.path_root.as_deref(),
            default_judge: default_judge.as_ref(),
            ..Default::default()
        },
    )?;
    let what = match checked.steps {
        Some(steps) => format!(
            "valid steps fixture `{}` with {steps} step(s)",
            shown(&checked.suite_id)
        ),
        None => {
            let variants = if checked.variants == 0 {
                String::new()
            } else {
                format!(", {} variant(s)", checked.variants)
            };
            format!(
                "valid {} fixture `{}` with {} case(s){variants}",
                checked.pair,
                shown(&checked.suite_id),
                checked.cases
            )
        }
    };
    println!("{}: {what}", shown(args.fixture.display()));
    Ok(ExitCode::SUCCESS)
}

fn jobs(flag: Option<u16>) -> usize {
    flag.map_or_else(eval::default_jobs, usize::from)
}

fn finish(outcome: &SuiteOutcome, json: bool) -> anyhow::Result<ExitCode> {
    print(
        &outcome.summary_path,
        outcome.recommendation(),
        json,
        |out| {
            eval::records::terminal_summary::print_summary(out, &outcome.tally)?;
            match &outcome.output_dir {
                Some(dir) => writeln!(out, "records: {}", shown(dir.display())),
                None => Ok(()),
            }
        },
    )
}

/// Prints the summary packet (`--json`) or the readable summary, and turns
/// the recommendation into the exit status.
fn print(
    summary: &std::path::Path,
    recommendation: &str,
    json: bool,
    readable: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<ExitCode> {
    eval::records::progress::finish();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if json {
        let mut packet = std::io::BufReader::new(std::fs::File::open(summary)?);
        crate::term::copy_json(&mut packet, &mut out)?;
    } else {
        readable(&mut out)?;
    }
    out.flush()?;
    Ok(if recommendation == "accept-now" {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
