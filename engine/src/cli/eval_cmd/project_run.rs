//! `eval test` without `--fixture`: every suite of the project (several at
//! once, `--parallel-suites`), then the project summary and the worst
//! suite's exit status.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use crate::eval::TestOptions;
use crate::project::{self, Loaded};
use crate::term::shown;

pub fn run(
    loaded: &Loaded,
    config: Option<&Path>,
    options: TestOptions,
    patterns: &[String],
    json: bool,
    reports: &crate::cli::report_cmd::ReportFiles,
    parallel_suites: Option<usize>,
) -> anyhow::Result<ExitCode> {
    // `--quiet` (no case lines) keeps the per-suite lines quiet too.
    let quiet = options.case_lines == crate::eval::CaseLines::Drop;
    let mut manifest = project::manifest::manifest(loaded, config)?;
    let tags = &options.cells.tags;
    let selected = |s: &project::manifest::SuiteEntry| {
        (patterns.is_empty() || patterns.iter().any(|p| crate::wildcard::matches(p, &s.id)))
            && (tags.is_empty() || s.tags.iter().any(|t| tags.contains(t)))
    };
    // Every suite that would run is checked before any runs: nothing is
    // set up, called or written while one is invalid.
    let registry = crate::cli::registry_for(&options.limits)?;
    let _preloading = registry.preload_builtins();
    let check = crate::quality::check::CheckOptions {
        path_root: options.path_root.as_deref(),
        judge: options.judge.as_ref(),
        default_judge: options.default_judge.as_ref(),
        provider_env: options.provider_env.clone(),
        cells: options.cells.clone(),
    };
    project::check::check_suites(registry, loaded, &mut manifest, &check, selected);
    if !manifest.invalid.is_empty() {
        let mut err = std::io::stderr().lock();
        writeln!(
            err,
            "error: {} suite(s) of the project are invalid; nothing ran (no provider was called, no records were written):",
            manifest.invalid.len()
        )?;
        project::check::print_invalid(&mut err, &manifest.invalid)?;
        return Ok(ExitCode::from(2));
    }
    let suites: Vec<_> = manifest.suites.iter().filter(|s| selected(s)).collect();
    if suites.is_empty() {
        if tags.is_empty() {
            anyhow::bail!(
                "no suite of the project matches {patterns:?}; `cautilus eval list` shows their ids"
            );
        }
        anyhow::bail!(
            "no suite of the project has a case tagged {} (and no suite carries it); `cautilus eval list --json` shows each suite's tags",
            tags.join(" or ")
        );
    }
    let dir = match &options.output_dir {
        Some(dir) => dir.clone(),
        None => project::run::new_dir(&options.records_root()),
    };
    // Held until the reports are written (the suites' runs share it).
    let _claim = project::run::claim(&loaded.root, &suites, &options, &dir)?;
    crate::eval::interrupt::install()?;
    let at_once = suites_at_once(&suites, &options, parallel_suites);
    let parallel = project::run::Parallelism {
        suites: at_once,
        concurrency: options.concurrency,
        jobs: options.jobs.unwrap_or_else(crate::eval::default_jobs),
    };
    let one_at_a_time = at_once.min(suites.len()) <= 1;
    crate::eval::records::progress::open_ended();
    let summary = project::run::run_suites(
        registry,
        &loaded.root,
        &suites,
        &options,
        &dir,
        parallel,
        |event| match event {
            project::run::Event::Starting(suite) if !json && !quiet && one_at_a_time => {
                crate::eval::records::progress::print(|| {
                    crate::outln!("== {} ({})", shown(&suite.id), shown(&suite.path));
                });
            }
            project::run::Event::Finished(result) if !json && !quiet && !one_at_a_time => {
                crate::eval::records::progress::print(|| {
                    crate::outln!("== {} {}", shown(&result.id), shown(outcome_line(result)));
                });
            }
            _ => {}
        },
    )?;
    crate::eval::records::progress::finish();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if json {
        let text = serde_json::to_string_pretty(&summary)?;
        writeln!(out, "{}", crate::term::json(&text))?;
    } else {
        writeln!(out, "== project: {}", summary.recommendation)?;
        for suite in &summary.suites {
            let outcome = outcome_line(suite);
            let mut extra = format!(" in {:.1} s", suite.duration_ms as f64 / 1000.0);
            if let Some(cost) = suite.cost_usd {
                extra.push_str(&format!(", ${cost:.4}"));
            }
            if let Some(gates) = &suite.gates {
                extra.push_str(&format!(
                    "; gates: {} passed, {} failed",
                    gates.passed,
                    gates.failed.len()
                ));
            }
            writeln!(out, "  {:<24} {}{extra}", shown(&suite.id), shown(&outcome))?;
            if let Some(gates) = &suite.gates {
                for failed in &gates.failed {
                    writeln!(out, "    FAIL  {}", shown(failed))?;
                }
            }
        }
        if let Some(signal) = &summary.interrupted {
            writeln!(
                out,
                "interrupted by {signal}: the suites after the last one listed did not run"
            )?;
        }
        writeln!(out, "records: {}", shown(dir.display()))?;
    }
    out.flush()?;
    // After the summary is out: a report that cannot be written is an
    // error, but what ran has been said.
    reports.write_project(&dir, &summary)?;
    Ok(ExitCode::from(summary.exit_code))
}

/// A suite's outcome, with its counts when it ran.
fn outcome_line(suite: &project::run::SuiteResult) -> String {
    let counts = suite
        .counts
        .as_ref()
        .filter(|_| suite.error.is_none())
        .map(|c| {
            let counts: Vec<String> = c.iter().map(|(k, v)| format!("{k} {v}")).collect();
            format!(" ({})", counts.join(", "))
        })
        .unwrap_or_default();
    format!("{}{counts}", suite.outcome())
}

/// How many suites run at once: `--parallel-suites` (default one per
/// core), never more than the calls the run may have in flight; one at a
/// time when suites would write one cassette file (a `--cassette` for all,
/// or two ids that name the same file), and by default when a suite runs
/// a coding agent (one agent at a time unless `--concurrency` or
/// `--parallel-suites` says otherwise).
fn suites_at_once(
    suites: &[&project::manifest::SuiteEntry],
    options: &crate::eval::TestOptions,
    asked: Option<usize>,
) -> usize {
    let budget = options
        .concurrency
        .unwrap_or(crate::eval::DEFAULT_CONCURRENCY);
    let records = options.records_root();
    let mut cassettes = std::collections::HashSet::new();
    let shared_cassette = options.cassette.is_some()
        || !suites.iter().all(|s| {
            cassettes.insert(crate::eval::provider::cassette::default_path(
                &records, &s.id,
            ))
        });
    let agents = options.concurrency.is_none()
        && suites
            .iter()
            .any(|s| crate::taxonomy::works_in_a_workspace(&s.surface));
    match asked {
        _ if shared_cassette => 1,
        Some(n) => n.min(budget),
        None if agents => 1,
        None => crate::eval::default_jobs().min(budget),
    }
}
