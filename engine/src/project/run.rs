//! One run over a project's suites (`eval test` without `--fixture`): every
//! suite of the manifest (or those `--suite` selects), several at once
//! within the run's concurrency and worker budget (`--parallel-suites`),
//! each with its own run records, then one project summary
//! (`cautilus.project_summary.v1`) and one exit status, the worst of the
//! suites'.
//!
//! Layout: `<records>/runs/<id>/project-summary.json`, and each suite's
//! run directory under `<records>/runs/<id>/suites/<suite id>/`. A suite
//! that cannot run (a definition error) or fails while running is recorded
//! with its error and the others still run; a signal stops the project run (no suite starts
//! after it; the running ones keep what they finished).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::manifest::SuiteEntry;
use crate::eval::{self, EvalError, TestOptions, TestRun};
use crate::plugin::Registry;
use crate::quality::Run;

/// The project summary's schema id.
pub const SCHEMA: &str = "cautilus.project_summary.v1";
/// Its file name in the project run's directory.
pub const FILE: &str = "project-summary.json";

/// What a project run concluded.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "cautilus.project_summary.v1")]
pub struct ProjectSummary {
    pub schema_version: String,
    /// The worst recommendation of the suites that ran (`reject` when one
    /// could not run).
    pub recommendation: String,
    /// 0 when every suite is `accept-now`, 1 when one is not, 2 when one
    /// could not run.
    pub exit_code: u8,
    pub suites: Vec<SuiteResult>,
    /// Set when a signal stopped the run (the suites after it did not run).
    pub interrupted: Option<String>,
}

/// One suite of a project run.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuiteResult {
    pub id: String,
    pub path: String,
    /// Its run directory, relative to the project run's.
    pub run_dir: Option<String>,
    /// `accept-now`, `defer` or `reject`; absent when it could not run.
    pub recommendation: Option<String>,
    /// The summary packet's counts (`total`, `passed`, `failed` …).
    pub counts: Option<Map<String, Value>>,
    /// Why it could not run.
    pub error: Option<String>,
    /// Its experiment record, when the suite is an experiment (variants,
    /// trials, gates), relative to the project run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experiment: Option<String>,
    /// An experiment's gates: how many passed, and each that blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gates: Option<GateSummary>,
    /// The total cost its cases reported (absent when none did).
    pub cost_usd: Option<f64>,
    pub duration_ms: u64,
}

impl SuiteResult {
    /// Its recommendation, or why it could not run.
    pub fn outcome(&self) -> String {
        match (&self.recommendation, &self.error) {
            (_, Some(error)) => format!("could not run: {error}"),
            (Some(recommendation), None) => recommendation.clone(),
            (None, None) => "did not run".into(),
        }
    }
}

/// A suite's gates in the project summary.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GateSummary {
    pub passed: usize,
    /// Failed but informational (a filtered run's gates, a drifted baseline).
    pub informational: usize,
    /// `<variant> <gate>: <message>` of each gate that fails the suite.
    pub failed: Vec<String>,
}

/// Suite ids that match `patterns` (`*` matches any run of characters);
/// every suite without patterns.
pub fn select<'a>(suites: &'a [SuiteEntry], patterns: &[String]) -> Vec<&'a SuiteEntry> {
    suites
        .iter()
        .filter(|s| {
            patterns.is_empty() || patterns.iter().any(|p| crate::wildcard::matches(p, &s.id))
        })
        .collect()
}

/// How many suites run at once and how the run's budget is shared.
#[derive(Debug, Clone, Copy)]
pub struct Parallelism {
    /// Suites at once (1: one after another, each printing its cases).
    pub suites: usize,
    /// Provider calls in flight over all suites (`--concurrency`): each of
    /// `suites` running suites gets an equal share, at least 1. `None`:
    /// the default budget shared by the app suites, while a coding-agent
    /// suite keeps its default of one agent at a time.
    pub concurrency: Option<usize>,
    /// Worker threads over all suites (`--jobs`), shared the same way.
    pub jobs: usize,
}

/// What a project run tells its caller as it goes.
pub enum Event<'a> {
    Starting(&'a SuiteEntry),
    Finished(&'a SuiteResult),
}

/// Claims the project run's directory `dir` (see `eval::records::run_dir`): no
/// other run may write there meanwhile, and it may hold none of the
/// suites' fixtures or the files they read. Each suite's run claims its
/// own directory inside it.
pub fn claim(
    root: &Path,
    suites: &[&SuiteEntry],
    base: &TestOptions,
    dir: &Path,
) -> Result<eval::records::run_dir::RunDir, EvalError> {
    eval::records::run_dir::RunDir::claim(dir, || {
        let mut inputs =
            eval::records::run_dir::Inputs::default().with(base.fixture_results.as_deref());
        for suite in suites {
            let file = root.join(&suite.path);
            // What loading the suite reads; a suite that does not load
            // reads nothing more (its run reports why).
            let loaded = crate::fixture::load_fixture_within(&file, base.path_root.as_deref());
            inputs.merge(match loaded {
                Ok(crate::fixture::Fixture::Suite(suite)) => {
                    eval::records::run_dir::Inputs::of_suite(&suite)
                }
                Ok(crate::fixture::Fixture::Steps(steps, _)) => {
                    eval::records::run_dir::Inputs::of_files(
                        std::iter::once(&file).chain(&steps.read),
                    )
                }
                Err(_) => eval::records::run_dir::Inputs::of_files([&file]),
            });
        }
        inputs
    })
}

/// Runs `suites` with `base` (its fixture and output directory are set per
/// suite) under `dir`, `parallel.suites` at a time, telling `events` as
/// each starts and finishes; writes and returns the project summary
/// (suites in manifest order whatever order they finished in).
pub fn run_suites(
    registry: &Registry,
    root: &Path,
    suites: &[&SuiteEntry],
    base: &TestOptions,
    dir: &Path,
    parallel: Parallelism,
    events: impl Fn(Event<'_>) + Sync,
) -> Result<ProjectSummary, EvalError> {
    let _claim = claim(root, suites, base, dir)?;
    let at_once = parallel.suites.clamp(1, suites.len().max(1));
    let options = if at_once > 1 {
        TestOptions {
            concurrency: parallel.concurrency.map(|n| (n / at_once).max(1)),
            jobs: Some((parallel.jobs / at_once).max(1)),
            // Lines of suites running at once would interleave.
            case_lines: eval::CaseLines::Drop,
            ..base.clone()
        }
    } else {
        base.clone()
    };
    // The default budget, shared by the app suites running at once.
    let app_share = (at_once > 1 && parallel.concurrency.is_none())
        .then(|| (eval::DEFAULT_CONCURRENCY / at_once).max(1));
    let slots: Vec<Mutex<Option<SuiteResult>>> = suites.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    // A signal stops every suite between cases (the runs see the same
    // flag); no suite starts after it.
    let work = || {
        while !eval::interrupt::requested() {
            let index = next.fetch_add(1, Ordering::SeqCst);
            let Some(suite) = suites.get(index) else {
                return;
            };
            events(Event::Starting(suite));
            let options = match app_share {
                Some(share)
                    if crate::taxonomy::surface_mode(&suite.surface)
                        == Some(crate::taxonomy::Mode::Messaging) =>
                {
                    TestOptions {
                        concurrency: Some(share),
                        ..options.clone()
                    }
                }
                _ => options.clone(),
            };
            let result = run_one(registry, root, suite, &options, dir);
            events(Event::Finished(&result));
            *slots[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
        }
    };
    if at_once == 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..at_once {
                scope.spawn(work);
            }
        });
    }
    let results = slots
        .into_iter()
        .filter_map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let interrupted = eval::interrupt::signal_name().map(str::to_string);
    let summary = summarize(results, interrupted);
    let json = serde_json::to_value(&summary).map_err(|e| EvalError::Write {
        path: dir.join(FILE),
        source: std::io::Error::other(e),
    })?;
    eval::files::write_json(&dir.join(FILE), &json)?;
    Ok(summary)
}

/// Runs one suite; a suite that cannot run or fails is a result with its
/// error, never the end of the project run.
fn run_one(
    registry: &Registry,
    root: &Path,
    suite: &SuiteEntry,
    base: &TestOptions,
    dir: &Path,
) -> SuiteResult {
    let run_dir = dir.join("suites").join(safe_name(&suite.id));
    let options = TestOptions {
        fixture: root.join(&suite.path),
        output_dir: Some(run_dir.clone()),
        ..base.clone()
    };
    let started = Instant::now();
    let relative = |p: &Path| {
        p.strip_prefix(dir)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut result = SuiteResult {
        id: suite.id.clone(),
        path: suite.path.clone(),
        run_dir: None,
        recommendation: None,
        counts: None,
        error: None,
        experiment: None,
        gates: None,
        cost_usd: None,
        duration_ms: 0,
    };
    match crate::quality::test(registry, &options) {
        Ok(Run::Experiment(outcome)) => {
            result.run_dir = Some(relative(&run_dir));
            // An experiment's gates decide, as its exit code does.
            result.recommendation = Some(
                if outcome.passed {
                    "accept-now"
                } else {
                    "reject"
                }
                .to_string(),
            );
            result.counts = Some(outcome.counts());
            result.experiment = Some(relative(&outcome.record));
            result.cost_usd = outcome
                .variants
                .iter()
                .filter_map(|(_, a)| a.cost.as_ref().map(|c| c.total_usd))
                .reduce(|a, b| a + b);
            result.gates = Some(GateSummary {
                passed: outcome.gates.iter().filter(|g| g.passed).count(),
                informational: outcome
                    .gates
                    .iter()
                    .filter(|g| !g.passed && g.informational)
                    .count(),
                failed: outcome
                    .gates
                    .iter()
                    .filter(|g| g.blocks())
                    .map(|g| format!("{} {}: {}", g.variant, g.gate, g.message))
                    .collect(),
            });
        }
        Ok(Run::Plain(TestRun::Suite(outcome))) => {
            result.run_dir = Some(relative(&run_dir));
            result.recommendation = Some(outcome.recommendation().to_string());
            result.counts = Some(outcome.tally.counts().clone());
            result.cost_usd = outcome.tally.cost_usd();
        }
        Ok(Run::Plain(TestRun::Steps(outcome))) => {
            result.run_dir = Some(relative(&outcome.output_dir));
            result.recommendation = Some(outcome.recommendation.to_string());
        }
        Err(error) if error.is_definition_error() => {
            result.error = Some(error.to_string());
        }
        // A suite that failed while running (its records say how far it
        // got) does not take the other suites' results with it.
        Err(error) => {
            result.run_dir = Some(relative(&run_dir));
            result.error = Some(format!("failed while running: {error}"));
        }
    }
    result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    result
}

/// A suite id as a directory name ([`crate::file_names::stem`]: bounded,
/// inside its directory, and distinct per id, even ignoring case).
pub fn safe_name(id: &str) -> String {
    crate::file_names::stem(id)
}

/// The worst recommendation and the exit code of the suites' results.
fn summarize(suites: Vec<SuiteResult>, interrupted: Option<String>) -> ProjectSummary {
    let rank = |r: &str| match r {
        "accept-now" => 0,
        "defer" => 1,
        _ => 2,
    };
    let failed_to_run = suites.iter().any(|s| s.error.is_some());
    let worst = suites
        .iter()
        .filter_map(|s| s.recommendation.as_deref())
        .max_by_key(|r| rank(r))
        .unwrap_or("accept-now");
    let recommendation = if failed_to_run { "reject" } else { worst };
    let exit_code = if failed_to_run {
        2
    } else if recommendation == "accept-now" && interrupted.is_none() {
        0
    } else {
        1
    };
    ProjectSummary {
        schema_version: SCHEMA.into(),
        recommendation: recommendation.into(),
        exit_code,
        suites,
        interrupted,
    }
}

/// The summary of the project run at `path` (its directory or its
/// `project-summary.json`); `None` when `path` is not a project run's.
pub fn read_summary(path: &Path) -> Result<Option<(PathBuf, ProjectSummary)>, EvalError> {
    let (dir, file) = if path.is_dir() {
        (path.to_path_buf(), path.join(FILE))
    } else if path.file_name().is_some_and(|n| n == FILE) {
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        (dir, path.to_path_buf())
    } else {
        return Ok(None);
    };
    if !file.is_file() {
        return Ok(None);
    }
    let error = |message: String| EvalError::Input {
        path: file.clone(),
        message,
    };
    let text = std::fs::read_to_string(&file).map_err(|e| error(format!("cannot read: {e}")))?;
    let summary = serde_json::from_str(&text).map_err(|e| {
        error(format!(
            "not a project summary ({SCHEMA}): {e}; was the run interrupted while writing it?"
        ))
    })?;
    Ok(Some((dir, summary)))
}

/// The directory of a new project run under the records root.
pub fn new_dir(records: &Path) -> PathBuf {
    eval::files::new_run_dir(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, recommendation: Option<&str>, error: Option<&str>) -> SuiteResult {
        SuiteResult {
            id: id.into(),
            path: format!("evals/{id}.fixture.json"),
            run_dir: None,
            recommendation: recommendation.map(str::to_string),
            counts: None,
            error: error.map(str::to_string),
            experiment: None,
            gates: None,
            cost_usd: None,
            duration_ms: 1,
        }
    }

    #[test]
    fn the_project_is_its_worst_suite() {
        let all_good = summarize(vec![result("a", Some("accept-now"), None)], None);
        assert_eq!(
            (all_good.recommendation.as_str(), all_good.exit_code),
            ("accept-now", 0)
        );
        let one_rejects = summarize(
            vec![
                result("a", Some("accept-now"), None),
                result("b", Some("reject"), None),
                result("c", Some("defer"), None),
            ],
            None,
        );
        assert_eq!(
            (one_rejects.recommendation.as_str(), one_rejects.exit_code),
            ("reject", 1)
        );
        let broken = summarize(
            vec![
                result("a", Some("accept-now"), None),
                result("b", None, Some("bad fixture")),
            ],
            None,
        );
        assert_eq!(broken.exit_code, 2);
        let stopped = summarize(
            vec![result("a", Some("accept-now"), None)],
            Some("SIGINT".into()),
        );
        assert_eq!(stopped.exit_code, 1);
    }

    #[test]
    fn suite_ids_stay_inside_the_project_run() {
        for id in ["../../x", "/tmp/x", "..", "a/b"] {
            let name = safe_name(id);
            assert!(
                !name.contains('/') && !name.starts_with('.'),
                "{id} → {name}"
            );
        }
        assert_ne!(safe_name("a/b"), safe_name("a_b"));
    }
}
