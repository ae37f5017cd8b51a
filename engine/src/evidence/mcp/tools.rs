//! The server's tools, their arguments (each a closed object: an unknown
//! argument is refused) and their answers.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Server;
use super::cli::check_patterns;
use crate::evidence::summary::RunSummary;
use crate::evidence::{EvidenceError, cell, compare, detail, list, progress};

/// `validate`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateArgs {
    /// A suite id from `list_suites`; every suite when absent.
    pub suite: Option<String>,
}

/// `run`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The suite's id, from `list_suites`.
    pub suite: String,
    /// Run only these cases: case ids or `*` patterns.
    pub cases: Option<Vec<String>>,
    /// Run only these variants: names or `*` patterns.
    pub variants: Option<Vec<String>>,
}

/// `list_runs`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRunsArgs {
    /// Only this suite's runs.
    pub suite: Option<String>,
    /// Runs to skip (from the newest); `nextOffset` of the last page.
    pub offset: Option<usize>,
    /// Runs in a page (default 20, at most 200).
    pub limit: Option<usize>,
}

/// `run_summary`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunIdArgs {
    /// A run id from `list_runs`, or `latest`.
    pub run: String,
}

/// `cell_evidence`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CellArgs {
    /// A run id from `list_runs`, or `latest`.
    pub run: String,
    /// The case id.
    pub case: String,
    /// The variant, when the run is an experiment with several.
    pub variant: Option<String>,
    /// The trial (1-based), when the run has several.
    pub trial: Option<u32>,
}

/// `compare_runs`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CompareArgs {
    /// Side A: a run id from `list_runs`, or `latest`.
    pub a: String,
    /// Side B: a run id (the same as `a` to compare two variants of one run).
    pub b: String,
    /// Only this variant's cells on side A.
    pub variant_a: Option<String>,
    /// Only this variant's cells on side B.
    pub variant_b: Option<String>,
}

/// `suite_progress`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteArgs {
    /// The suite's id.
    pub suite: String,
}

/// What `run` answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RunOutcome {
    /// `eval test`'s exit status: 0 accepted (gates pass), 1 not.
    exit_code: i32,
    /// The new run, as `list_runs` shows it.
    run: Option<RunSummary>,
}

/// A read model as the tool's answer, or its error as a tool error.
fn answer<T: Serialize>(result: Result<T, String>) -> CallToolResult {
    match result.and_then(|v| serde_json::to_value(v).map_err(|e| e.to_string())) {
        Ok(value) => CallToolResult::structured(value),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

/// Runs `read` off the server's threads (it reads files).
async fn blocking<T, F>(read: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, EvidenceError> + Send + 'static,
{
    match tokio::task::spawn_blocking(read).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(e) => Err(format!("the read failed: {e}")),
    }
}

#[tool_router]
impl Server {
    #[tool(
        description = "The project's suites (cautilus.manifest.v1): id, fixture path, surface/preset, provider, model, cases, variants, gates, tags. Every suite is checked offline; invalid ones are listed under `invalid` with their errors. Nothing runs."
    )]
    async fn list_suites(&self) -> CallToolResult {
        answer(self.project.binary.manifest().await)
    }

    #[tool(
        description = "Checks the project's suites offline (schema, taxonomy, preset case shape, assertions), or one suite. Runs nothing. Answers {valid, suites, invalid}."
    )]
    async fn validate(&self, Parameters(args): Parameters<ValidateArgs>) -> CallToolResult {
        let checked = self.project.binary.manifest().await.and_then(|manifest| {
            let ids = |key: &str| -> Vec<Value> {
                manifest[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|s| {
                        let id = s["id"].as_str().unwrap_or_default();
                        args.suite.as_deref().is_none_or(|want| want == id)
                    })
                    .cloned()
                    .collect()
            };
            let (suites, invalid) = (ids("suites"), ids("invalid"));
            if let Some(want) = &args.suite
                && suites.is_empty()
                && invalid.is_empty()
            {
                return Err(format!(
                    "the project has no suite `{want}` (a fixture that does not load has no id: see `invalid` of `list_suites`)"
                ));
            }
            Ok(json!({"valid": invalid.is_empty(), "suites": suites, "invalid": invalid}))
        });
        answer(checked)
    }

    #[tool(
        description = "Runs a suite of the project, or only some of its cases or variants, with what the project's cautilus.toml sets (provider, replay mode, grants, judge); no argument can add a provider, a grant, a path or a flag. Answers the new run's summary (use its id with run_summary, cell_evidence, compare_runs)."
    )]
    async fn run(&self, Parameters(args): Parameters<RunArgs>) -> CallToolResult {
        answer(self.run_suite(args).await)
    }

    #[tool(
        description = "The project's finished runs, newest first, a page at a time (cautilus.run_list.v1): id, suite, when, recommendation or gate verdict, counts, pass rate, mean score, cost, p95 latency, interrupted."
    )]
    async fn list_runs(&self, Parameters(args): Parameters<ListRunsArgs>) -> CallToolResult {
        let records = self.project.records.clone();
        answer(
            blocking(move || {
                Ok(list::run_list(
                    &records,
                    args.suite.as_deref(),
                    args.offset.unwrap_or(0),
                    args.limit,
                ))
            })
            .await,
        )
    }

    #[tool(
        description = "One run in detail (cautilus.run_detail.v1): verdict, counts, gates, variants and their aggregates, the comparison with the baseline, the cases that did not pass with their failed assertions."
    )]
    async fn run_summary(&self, Parameters(args): Parameters<RunIdArgs>) -> CallToolResult {
        let records = self.project.records.clone();
        answer(blocking(move || detail::run_detail(&records, &args.run)).await)
    }

    #[tool(
        description = "One case of a run (one cell: variant, trial) with its evidence (cautilus.cell_evidence.v1): verdict, the ordered assertion ledger with scores, thresholds, check sentences and the file:line each assertion was written at, the observed output, the promoted baseline's verdict, and the command that reruns it."
    )]
    async fn cell_evidence(&self, Parameters(args): Parameters<CellArgs>) -> CallToolResult {
        let records = self.project.records.clone();
        answer(
            blocking(move || {
                cell::cell_evidence(
                    &records,
                    &args.run,
                    &args.case,
                    args.variant.as_deref(),
                    args.trial,
                )
            })
            .await,
        )
    }

    #[tool(
        description = "Compares two runs, or two variants of one run (cautilus.evidence_comparison.v1): cases whose verdict changed first, then score moves, per-assertion score deltas, pass rate, cost and latency deltas, and who answered on each side."
    )]
    async fn compare_runs(&self, Parameters(args): Parameters<CompareArgs>) -> CallToolResult {
        let records = self.project.records.clone();
        answer(
            blocking(move || {
                compare::compare_runs(
                    &records,
                    &args.a,
                    args.variant_a.as_deref(),
                    &args.b,
                    args.variant_b.as_deref(),
                )
            })
            .await,
        )
    }

    #[tool(
        description = "One suite's runs over time, oldest first (cautilus.suite_progress.v1): pass rate, mean score ± SEM, cost and p95 latency per run, and the promoted baseline's values to compare with."
    )]
    async fn suite_progress(&self, Parameters(args): Parameters<SuiteArgs>) -> CallToolResult {
        let records = self.project.records.clone();
        answer(blocking(move || Ok(progress::suite_progress(&records, &args.suite))).await)
    }
}

#[tool_handler(
    name = "cautilus",
    instructions = "Evaluations of this project: list_suites and validate to see what exists, run to run a suite as the project's cautilus.toml allows, then list_runs, run_summary, cell_evidence, compare_runs and suite_progress to read the results from the records."
)]
impl ServerHandler for Server {}

impl Server {
    async fn run_suite(&self, args: RunArgs) -> Result<RunOutcome, String> {
        let cases = args.cases.unwrap_or_default();
        let variants = args.variants.unwrap_or_default();
        check_patterns("case", &cases)?;
        check_patterns("variant", &variants)?;
        let binary = &self.project.binary;
        let manifest = binary.manifest().await?;
        let entry = manifest["suites"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["id"] == args.suite.as_str());
        let Some(fixture) = entry.and_then(|s| s["path"].as_str()) else {
            let invalid = manifest["invalid"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["id"] == args.suite.as_str());
            return Err(match invalid {
                Some(bad) => format!(
                    "suite `{}` is invalid and cannot run: {}",
                    args.suite,
                    bad["error"].as_str().unwrap_or("?")
                ),
                None => format!(
                    "the project has no suite `{}`; take an id from `list_suites`",
                    args.suite
                ),
            });
        };
        let records = &self.project.records;
        let output = crate::eval::files::new_run_dir(records.root());
        let ran = binary
            .run_suite(fixture, &output, &cases, &variants)
            .await?;
        if !matches!(ran.code, 0 | 1) {
            return Err(format!(
                "suite `{}` did not run (exit {}): {}",
                args.suite,
                ran.code,
                ran.stderr_tail()
            ));
        }
        let id = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let records = records.clone();
        let run = blocking(move || {
            let run = records.resolve(&id)?;
            let report = records.report(&run)?;
            Ok(RunSummary::of(&run, &report))
        })
        .await
        .ok();
        Ok(RunOutcome {
            exit_code: ran.code,
            run,
        })
    }
}
