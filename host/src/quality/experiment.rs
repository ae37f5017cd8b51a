//! Running an experiment and writing its record, `experiment.json`
//! (`cautilus.experiment.v1`).
//!
//! `eval test` on a suite comes here first. A suite that is one plain run
//! (no variants, one trial, no gates, nothing selected) runs as before and
//! writes the eval packets only. Otherwise each group of cells of the
//! [`Plan`] runs as a suite run of its own, in the run directory itself
//! when there is one group, else in `variants/<name>/trial-<n>/`. The
//! record is then streamed from the groups' journals: every cell with its
//! output, scores and assertion ledger, then the per-variant aggregates,
//! the comparison with the baseline, the gates, `passed` and the
//! fingerprints. Only each cell's facts are held, never its output.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::aggregate::{self, Aggregate, CellFacts, Comparison};
use super::baseline::{self, Baseline};
use super::gates::{self, GateResult, Judged};
use super::plan::{self, Plan};
use crate::eval::cassette::ReplayMode;
use crate::eval::journal::{self, Journal};
use crate::eval::records::{self, PacketWriter};
use crate::eval::tally::{recommendation_name, status_name};
use crate::eval::{self, CaseLines, EvalError, Outcome, TestOptions, TestRun};
use crate::fixture::{self, Suite};
use crate::plugin::Registry;

/// The record's schema and file name.
pub const SCHEMA: &str = "cautilus.experiment.v1";
pub const FILE: &str = "experiment.json";

/// What `eval test` ran.
#[derive(Debug)]
pub enum Run {
    /// One plain suite run, or a steps fixture.
    Plain(TestRun),
    Experiment(ExperimentOutcome),
}

/// A finished experiment.
#[derive(Debug)]
pub struct ExperimentOutcome {
    pub output_dir: PathBuf,
    pub record: PathBuf,
    pub passed: bool,
    pub interrupted: Option<&'static str>,
    pub variants: Vec<(String, Aggregate)>,
    pub baseline: Option<String>,
    pub comparisons: Vec<Comparison>,
    pub gates: Vec<GateResult>,
    pub skipped: Vec<(String, String)>,
    pub filtered: bool,
    pub cells: usize,
}

impl ExperimentOutcome {
    /// Cells by status over every variant (with `total`), as a project
    /// summary counts them.
    pub fn counts(&self) -> Map<String, Value> {
        let mut counts = Map::new();
        counts.insert("total".into(), json!(self.cells));
        for (_, aggregate) in &self.variants {
            for (status, n) in &aggregate.statuses {
                let entry = counts.entry(status.clone()).or_insert(json!(0));
                *entry = json!(entry.as_u64().unwrap_or(0) + *n as u64);
            }
        }
        counts
    }
}

/// Runs `options.fixture`: a plain run, a steps fixture, or an experiment.
pub fn test(registry: &Registry, options: &TestOptions) -> Result<Run, EvalError> {
    if options.resume {
        return Ok(Run::Plain(eval::test(registry, options)?));
    }
    let mut suite = match fixture::load_fixture(&options.fixture)? {
        fixture::Fixture::Suite(suite) => suite,
        fixture::Fixture::Steps(..) => return Ok(Run::Plain(eval::test(registry, options)?)),
    };
    let spec = plan::take_spec(&mut suite)?;
    let replay = options
        .replay
        .or_else(|| {
            suite
                .body
                .get("replay")
                .and_then(Value::as_str)
                .and_then(|m| ReplayMode::parse(m).ok())
        })
        .or(options.default_replay);
    let strict = replay == Some(ReplayMode::ReplayStrict);
    let plan = plan::plan(&suite, spec, &options.cells, strict)?;
    // A promoted baseline makes every run of the suite a comparison.
    let committed = baseline::read(&options.records_root(), &suite.suite_id)?;
    if !plan.is_experiment() && committed.is_none() {
        let options = TestOptions {
            fixture_results: options.fixture_results.clone().or(plan.fixture_results(0)),
            ..options.clone()
        };
        return Ok(Run::Plain(TestRun::Suite(eval::run_suite(
            registry, &options, suite, false,
        )?)));
    }
    run_experiment(registry, options, &suite, &plan, committed).map(Run::Experiment)
}

/// A group's run: where it wrote and what it concluded.
struct GroupRun {
    group: usize,
    dir: PathBuf,
    outcome: Outcome,
}

fn run_experiment(
    registry: &Registry,
    options: &TestOptions,
    suite: &Suite,
    plan: &Plan,
    committed: Option<Baseline>,
) -> Result<ExperimentOutcome, EvalError> {
    let started_at = records::now_rfc3339();
    let root = options
        .output_dir
        .clone()
        .unwrap_or_else(|| records::new_run_dir(&options.records_root()));
    let root_existed = root.exists();
    let single = plan.groups.len() == 1;
    let print = options.case_lines == CaseLines::Print;
    if print && !plan.skipped.is_empty() {
        for (id, reason) in &plan.skipped {
            let why = if reason.is_empty() { "skipped" } else { reason };
            println!("  SKIP  {id} — {why}");
        }
    }
    let mut runs = Vec::new();
    let mut interrupted = None;
    for (index, group) in plan.groups.iter().enumerate() {
        let variant = &plan.variants[group.variant];
        let dir = if single {
            root.clone()
        } else {
            root.join("variants")
                .join(&variant.name)
                .join(format!("trial-{}", group.trial))
        };
        if print && !single {
            println!(
                "variant `{}`{}, trial {} of {}:",
                variant.name,
                if plan.baseline == Some(group.variant) {
                    " (baseline)"
                } else {
                    ""
                },
                group.trial,
                plan.max_trials
            );
        }
        let group_options = TestOptions {
            output_dir: Some(dir.clone()),
            fixture_results: options
                .fixture_results
                .clone()
                .or(plan.fixture_results(group.variant)),
            trial: group.trial,
            ..options.clone()
        };
        let outcome =
            match eval::run_suite(registry, &group_options, plan.suite_of(suite, group), false) {
                Ok(outcome) => outcome,
                Err(error) => {
                    // A suite found invalid in its first group leaves nothing behind.
                    if runs.is_empty() && !root_existed {
                        let _ = std::fs::remove_dir_all(&root);
                    }
                    return Err(error);
                }
            };
        if print && !single {
            eval::report::print_totals(&mut std::io::stdout(), &outcome.tally).ok();
        }
        interrupted = outcome.interrupted;
        runs.push(GroupRun {
            group: index,
            dir,
            outcome,
        });
        if interrupted.is_some() {
            break;
        }
    }
    let context = RecordContext {
        suite,
        plan,
        root: &root,
        options,
        committed: committed.as_ref(),
    };
    write_record(&context, &runs, interrupted, started_at)
}

/// What the record is written from, besides the groups' runs.
struct RecordContext<'a> {
    suite: &'a Suite,
    plan: &'a Plan,
    root: &'a Path,
    options: &'a TestOptions,
    committed: Option<&'a Baseline>,
}

/// The suite-level fields every record starts with.
fn identity(suite: &Suite, options: &TestOptions) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("schemaVersion".into(), json!(SCHEMA));
    for key in ["surface", "preset", "suiteId", "suiteDisplayName"] {
        if let Some(value) = suite.body.get(key) {
            header.insert(key.into(), value.clone());
        }
    }
    header.insert(
        "fixtureRef".into(),
        json!(eval::pipeline::fixture_ref(&suite.file, &options.workspace)),
    );
    header
}

fn write_record(
    context: &RecordContext<'_>,
    runs: &[GroupRun],
    interrupted: Option<&'static str>,
    started_at: String,
) -> Result<ExperimentOutcome, EvalError> {
    let RecordContext {
        suite,
        plan,
        root,
        options,
        committed,
    } = *context;
    let (config, task) = baseline::fingerprints(suite, &plan.spec)?;
    // A committed baseline of a suite that changed since informs only.
    let drift = committed.is_some_and(|b| b.config != config || b.task != task);
    if let Some(b) = committed.filter(|_| drift) {
        eprintln!(
            "warning: the suite's cases or scoring changed since the baseline in {} was promoted ({}); the comparison is informational until you promote a new one",
            b.path.display(),
            b.promoted_at
        );
    }
    let mut header = identity(suite, options);
    header.insert("startedAt".into(), json!(started_at));
    header.insert(
        "baseline".into(),
        json!(plan.baseline.map(|b| &plan.variants[b].name)),
    );
    header.insert(
        "variants".into(),
        Value::Array(
            plan.variants
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    json!({"name": v.name, "baseline": plan.baseline == Some(i), "overrides": v.overrides})
                })
                .collect(),
        ),
    );
    header.insert(
        "committedBaseline".into(),
        committed.map_or(Value::Null, |b| {
            json!({
                "path": b.path.to_string_lossy(),
                "variant": b.variant,
                "promotedAt": b.promoted_at,
                "changedSince": drift,
            })
        }),
    );
    header.insert("trials".into(), json!(plan.max_trials));
    header.insert("filtered".into(), json!(plan.filtered));
    header.insert(
        "filters".into(),
        json!({
            "cases": options.cells.cases,
            "variants": options.cells.variants,
            "trials": options.cells.trials,
        }),
    );
    header.insert(
        "skipped".into(),
        Value::Array(
            plan.skipped
                .iter()
                .map(|(id, reason)| json!({"caseId": id, "reason": reason}))
                .collect(),
        ),
    );
    let record = root.join(FILE);
    let mut out = PacketWriter::create(&record, &header, "cells")?;
    let mut facts: Vec<Vec<CellFacts>> = vec![Vec::new(); plan.variants.len()];
    for run in runs {
        let group = &plan.groups[run.group];
        let variant = &plan.variants[group.variant].name;
        let relative = run
            .dir
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| run.dir.to_string_lossy().into_owned());
        let mut journal = Journal::load(&run.dir.join(journal::FILE), run.outcome.total)?;
        for index in 0..run.outcome.total {
            if !journal.contains(index) {
                continue;
            }
            let finished = journal.read(index)?;
            let verdict = &finished.verdict;
            let evaluation: Value = serde_json::from_str(&verdict.body).unwrap_or(Value::Null);
            let status = status_name(verdict.status);
            let recommendation = recommendation_name(verdict.recommendation);
            let cell = CellFacts::from_evaluation(&evaluation, group.trial, status, recommendation);
            out.push(&cell_json(&evaluation, &cell, variant, &relative, plan).to_string())?;
            facts[group.variant].push(cell);
        }
    }

    let aggregates: Vec<(String, Aggregate)> = plan
        .variants
        .iter()
        .zip(&facts)
        .map(|(v, cells)| (v.name.clone(), aggregate::aggregate(cells)))
        .collect();
    let comparisons: Vec<Comparison> = match plan.baseline {
        Some(b) => (0..plan.variants.len())
            .filter(|&v| v != b)
            .map(|v| {
                aggregate::compare(
                    &plan.variants[b].name,
                    &facts[b],
                    &plan.variants[v].name,
                    &facts[v],
                )
            })
            .collect(),
        // No baseline variant in the run: every variant against the committed one.
        None => match committed {
            Some(b) => (0..plan.variants.len())
                .map(|v| Comparison {
                    source: "committed",
                    informational: drift,
                    ..aggregate::compare(&b.variant, &b.cells, &plan.variants[v].name, &facts[v])
                })
                .collect(),
            None => Vec::new(),
        },
    };
    let mut gate_results = Vec::new();
    for (v, (name, aggregate)) in aggregates.iter().enumerate() {
        if aggregate.cells > 0 {
            gate_results.push(gates::errored(name, aggregate));
        }
        if plan.baseline == Some(v) {
            continue; // gates judge the candidates
        }
        let judged = Judged {
            variant: name,
            aggregate,
            comparison: comparisons.iter().find(|c| &c.candidate == name),
            filtered: plan.filtered,
        };
        match &plan.spec.gates {
            Some(declared) => gate_results.extend(gates::evaluate(declared, &judged)),
            None => gate_results.push(gates::default_policy(&judged)),
        }
    }
    let passed = interrupted.is_none() && !gate_results.iter().any(GateResult::blocks);

    let mut trailer = Map::new();
    trailer.insert("finishedAt".into(), json!(records::now_rfc3339()));
    trailer.insert(
        "status".into(),
        json!(if interrupted.is_some() {
            "interrupted"
        } else {
            "completed"
        }),
    );
    if let Some(signal) = interrupted {
        trailer.insert("interruptedBy".into(), json!(signal));
    }
    trailer.insert(
        "aggregates".into(),
        Value::Object(
            aggregates
                .iter()
                .map(|(n, a)| (n.clone(), a.to_json()))
                .collect(),
        ),
    );
    trailer.insert(
        "comparison".into(),
        Value::Array(comparisons.iter().map(Comparison::to_json).collect()),
    );
    trailer.insert(
        "gates".into(),
        Value::Array(gate_results.iter().map(GateResult::to_json).collect()),
    );
    trailer.insert("passed".into(), json!(passed));
    trailer.insert(
        "fingerprints".into(),
        json!({"config": config, "task": task}),
    );
    out.finish(&trailer)?;
    Ok(ExperimentOutcome {
        output_dir: root.to_path_buf(),
        record,
        passed,
        interrupted,
        cells: facts.iter().map(Vec::len).sum(),
        variants: aggregates,
        baseline: plan.baseline.map(|b| plan.variants[b].name.clone()),
        comparisons,
        gates: gate_results,
        skipped: plan.skipped.clone(),
        filtered: plan.filtered,
    })
}

/// One cell of the record.
fn cell_json(
    evaluation: &Value,
    cell: &CellFacts,
    variant: &str,
    record: &str,
    plan: &Plan,
) -> Value {
    let field = |key: &str| evaluation.get(key).cloned().unwrap_or(Value::Null);
    let output = evaluation
        .get("observed")
        .and_then(|o| o.get("finalText"))
        .or_else(|| evaluation.get("output"))
        .cloned()
        .unwrap_or(Value::Null);
    json!({
        "caseId": cell.case_id,
        "variant": variant,
        "trial": cell.trial,
        "status": cell.status,
        "passed": cell.passed(),
        "recommendation": cell.recommendation,
        "summary": field("summary"),
        "tags": plan.tags.get(&cell.case_id).cloned().unwrap_or_default(),
        "output": output,
        "scores": Value::Object(cell.scores.iter().map(|(n, s)| (n.clone(), json!(s))).collect()),
        "assertions": evaluation.get("assertions").cloned().unwrap_or(json!([])),
        "usage": field("usage"),
        "costUsd": field("costUsd"),
        "durationMs": field("durationMs"),
        "provider": field("provider"),
        "model": field("model"),
        "harness": field("harness"),
        "record": record,
    })
}
