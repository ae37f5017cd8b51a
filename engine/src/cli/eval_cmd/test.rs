//! `cautilus eval test`: the run's options from the flags, the project
//! config and (on `--resume`) the interrupted run; then the run, its
//! summary and exit status.

use std::process::ExitCode;

use super::summary::{experiment, finish, print};
use super::test_args::TestArgs;
use crate::cli::{LimitArgs, registry_for};
use crate::eval::provider::setup::GrantFlags;
use crate::eval::{self, TestOptions};
use crate::project::config::ConfigGrants;
use crate::term::shown;

pub(super) fn test(args: TestArgs) -> anyhow::Result<ExitCode> {
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
            let limits = args.limits.limits(
                defaults
                    .timeout_ms
                    .unwrap_or(LimitArgs::PROVIDER_TIMEOUT_MS),
            );
            // The run's registry (the same for the same limits): the
            // project's `[providers.<id>]` tables are checked against it.
            let registry = registry_for(&limits)?;
            let provider_env = crate::cli::provider_env(registry, &project)?;
            let options = TestOptions {
                fixture: fixture.unwrap_or_default(),
                path_root: args.path_root,
                provider_env,
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
                grants: grant_flags(
                    &project.config.grants,
                    &args.grant_http,
                    args.grant_program,
                    args.grant_secret,
                ),
                replay: args.replay,
                cassette: args.cassette,
                max_cassette_mib: args.max_cassette_mib,
                fixture_results: args.fixture_results,
                limits,
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

/// What the provider is granted: the config's `[grants]`, then the
/// `--grant-*` flags (host names in lower case; a flag's secret over the
/// config's of the same name).
fn grant_flags(
    config: &ConfigGrants,
    http: &[String],
    programs: Vec<String>,
    secrets: Vec<(String, String)>,
) -> GrantFlags {
    GrantFlags {
        http_hosts: config
            .http
            .iter()
            .chain(http)
            .map(|h| h.to_ascii_lowercase())
            .collect(),
        programs: config.programs.iter().cloned().chain(programs).collect(),
        secrets: config.secrets.clone().into_iter().chain(secrets).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn flags_add_to_the_config_grants() {
        let config = ConfigGrants {
            http: strings(&["API.example.com"]),
            programs: strings(&["git"]),
            secrets: [("TOKEN".to_string(), "CONFIG_TOKEN".to_string())].into(),
        };
        // No flags: the config's grants, host names in lower case.
        let granted = grant_flags(&config, &[], Vec::new(), Vec::new());
        assert_eq!(granted.http_hosts, ["api.example.com"]);
        assert_eq!(granted.programs, ["git"]);
        assert_eq!(granted.secrets["TOKEN"], "CONFIG_TOKEN");
        // Flags after the config's, a flag's secret over the config's.
        let granted = grant_flags(
            &config,
            &strings(&["Other.EXAMPLE", "api.example.com"]),
            strings(&["node", "git"]),
            vec![
                ("TOKEN".into(), "FLAG_TOKEN".into()),
                ("KEY".into(), "KEY".into()),
            ],
        );
        assert_eq!(
            granted.http_hosts,
            ["api.example.com", "other.example", "api.example.com"]
        );
        assert_eq!(granted.programs, ["git", "node", "git"]);
        assert_eq!(granted.secrets.len(), 2);
        assert_eq!(granted.secrets["TOKEN"], "FLAG_TOKEN");
        assert_eq!(granted.secrets["KEY"], "KEY");
        // No config grants: the flags alone.
        let granted = grant_flags(
            &ConfigGrants::default(),
            &strings(&["A.B"]),
            Vec::new(),
            Vec::new(),
        );
        assert_eq!(granted.http_hosts, ["a.b"]);
        assert!(granted.programs.is_empty() && granted.secrets.is_empty());
    }
}
