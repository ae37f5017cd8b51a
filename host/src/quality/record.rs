//! The experiment record, `experiment.json` (`cautilus.experiment.v1`):
//! what its cells conclude ([`conclude`]: aggregates, comparisons, gates,
//! the verdict) and writing it, streamed from the groups' journals.
//!
//! The same conclusion is drawn by a run and by `eval merge` of its
//! shards: both feed [`conclude`] the cells in one canonical order
//! (variant, trial, case position), so a merged record's statistics equal
//! an unsharded run's, bootstrap intervals included.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::aggregate::{self, Aggregate, CellFacts, Comparison};
use super::baseline::{self, Baseline};
use super::gates::{self, GateResult, Gates, Judged};
use super::outcome::{ExperimentOutcome, FILE, SCHEMA};
use super::plan::Plan;
use crate::eval::files::{self, PacketWriter};
use crate::eval::records::journal::{self, Journal};
use crate::eval::verdict::tally::{recommendation_name, status_name};
use crate::eval::{self, EvalError, TestOptions};
use crate::fixture::Suite;

/// What a set of cells is judged by.
pub struct Judging<'a> {
    /// Variant names, the baseline first when there is one.
    pub variants: &'a [String],
    /// The baseline variant's index, when it ran.
    pub baseline: Option<usize>,
    /// A promoted baseline, and whether the suite changed since.
    pub committed: Option<(&'a Baseline, bool)>,
    pub gates: Option<&'a Gates>,
    /// Gates inform only (a filtered or sharded run).
    pub informational: bool,
    pub interrupted: bool,
}

/// What the cells conclude.
pub struct Conclusion {
    pub aggregates: Vec<(String, Aggregate)>,
    pub comparisons: Vec<Comparison>,
    pub gates: Vec<GateResult>,
    pub passed: bool,
}

impl Conclusion {
    /// The record's trailing fields it owns.
    pub fn insert_into(&self, trailer: &mut Map<String, Value>) {
        trailer.insert(
            "aggregates".into(),
            Value::Object(
                self.aggregates
                    .iter()
                    .map(|(n, a)| (n.clone(), a.to_json()))
                    .collect(),
            ),
        );
        trailer.insert(
            "comparison".into(),
            Value::Array(self.comparisons.iter().map(Comparison::to_json).collect()),
        );
        trailer.insert(
            "gates".into(),
            serde_json::to_value(&self.gates).unwrap_or_default(),
        );
        trailer.insert("passed".into(), json!(self.passed));
    }
}

/// Aggregates per variant, each candidate against the baseline (the run's
/// baseline variant, else the committed one), and the gates.
pub fn conclude(judging: &Judging<'_>, facts: &[Vec<CellFacts>]) -> Conclusion {
    let names = judging.variants;
    let aggregates: Vec<(String, Aggregate)> = names
        .iter()
        .zip(facts)
        .map(|(name, cells)| (name.clone(), aggregate::aggregate(cells)))
        .collect();
    let comparisons: Vec<Comparison> = match (judging.baseline, judging.committed) {
        (Some(b), _) => (0..names.len())
            .filter(|&v| v != b)
            .map(|v| aggregate::compare(&names[b], &facts[b], &names[v], &facts[v]))
            .collect(),
        (None, Some((committed, drift))) => (0..names.len())
            .map(|v| Comparison {
                source: "committed",
                informational: drift,
                ..aggregate::compare(&committed.variant, &committed.cells, &names[v], &facts[v])
            })
            .collect(),
        (None, None) => Vec::new(),
    };
    let mut results = Vec::new();
    for (v, (name, aggregate)) in aggregates.iter().enumerate() {
        if aggregate.cells > 0 {
            results.push(gates::errored(name, aggregate));
        }
        if judging.baseline == Some(v) {
            continue; // gates judge the candidates
        }
        let judged = Judged {
            variant: name,
            aggregate,
            comparison: comparisons.iter().find(|c| &c.candidate == name),
            filtered: judging.informational,
        };
        match judging.gates {
            Some(declared) => results.extend(gates::evaluate(declared, &judged)),
            None => results.push(gates::default_policy(&judged)),
        }
    }
    Conclusion {
        passed: !judging.interrupted && !results.iter().any(GateResult::blocks),
        aggregates,
        comparisons,
        gates: results,
    }
}

/// A group's run directory and its case count.
pub struct GroupRecords {
    pub group: usize,
    pub dir: PathBuf,
    pub total: usize,
}

/// What the record is written from, besides the groups' runs.
pub struct RecordContext<'a> {
    pub suite: &'a Suite,
    pub plan: &'a Plan,
    pub root: &'a Path,
    pub options: &'a TestOptions,
    pub committed: Option<&'a Baseline>,
}

/// The suite-level fields a record starts with.
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
        json!(eval::run::packets::fixture_ref(
            &suite.file,
            &options.workspace
        )),
    );
    header
}

fn header(context: &RecordContext<'_>, drift: bool, started_at: String) -> Map<String, Value> {
    let RecordContext {
        suite,
        plan,
        options,
        committed,
        ..
    } = *context;
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
                    json!({"name": v.name, "baseline": plan.baseline == Some(i), "overrides": v.written})
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
    header.insert("suiteTags".into(), json!(plan.spec.tags));
    header.insert(
        "shard".into(),
        plan.shard
            .map_or(Value::Null, |(k, n)| json!({"index": k, "count": n})),
    );
    header.insert(
        "filters".into(),
        json!({
            "cases": options.cells.cases,
            "variants": options.cells.variants,
            "tags": options.cells.tags,
            "trials": options.cells.trials,
        }),
    );
    header.insert(
        "declaredGates".into(),
        plan.spec.gates_json.clone().unwrap_or(Value::Null),
    );
    header.insert(
        "skipped".into(),
        Value::Array(
            plan.skipped
                .iter()
                .map(|(i, id, reason)| json!({"caseIndex": i, "caseId": id, "reason": reason}))
                .collect(),
        ),
    );
    header
}

/// Writes the record of a run's groups and returns what it concluded.
pub fn write(
    context: &RecordContext<'_>,
    groups: &[GroupRecords],
    interrupted: Option<&'static str>,
    started_at: String,
) -> Result<ExperimentOutcome, EvalError> {
    let RecordContext {
        suite,
        plan,
        root,
        committed,
        ..
    } = *context;
    let (config, task) = baseline::fingerprints(suite, &plan.spec)?;
    // A committed baseline of a suite that changed since informs only.
    let drift = committed.is_some_and(|b| b.config != config || b.task != task);
    if let Some(b) = committed.filter(|_| drift) {
        eprintln!(
            "warning: the suite's cases or scoring changed since the baseline in {} was promoted ({}); the comparison is informational until you promote a new one",
            crate::term::shown(b.path.display()),
            crate::term::inline(&b.promoted_at)
        );
    }
    let record = root.join(FILE);
    let mut out = PacketWriter::create(&record, &header(context, drift, started_at), "cells")?;
    let mut facts: Vec<Vec<CellFacts>> = vec![Vec::new(); plan.variants.len()];
    for run in groups {
        let group = &plan.groups[run.group];
        let variant = &plan.variants[group.variant].name;
        let relative = run
            .dir
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| run.dir.to_string_lossy().into_owned());
        // The suite position of the group's i-th case.
        let positions: Option<Vec<usize>> = group.keep.as_ref().map(|keep| {
            keep.iter()
                .enumerate()
                .filter(|(_, k)| **k)
                .map(|(i, _)| i)
                .collect()
        });
        let mut journal = Journal::load(&run.dir.join(journal::FILE), run.total)?;
        for index in 0..run.total {
            if !journal.contains(index) {
                continue;
            }
            let verdict = journal.read(index)?.verdict;
            let evaluation: Value = serde_json::from_str(&verdict.body).unwrap_or(Value::Null);
            let cell = CellFacts::from_evaluation(
                &evaluation,
                group.trial,
                status_name(verdict.status),
                recommendation_name(verdict.recommendation),
            );
            let position = positions.as_ref().map_or(index, |p| p[index]);
            let json = cell_json(&evaluation, &cell, variant, position, &relative, plan);
            out.push(&json.to_string())?;
            facts[group.variant].push(cell);
        }
    }
    let names: Vec<String> = plan.variants.iter().map(|v| v.name.clone()).collect();
    let conclusion = conclude(
        &Judging {
            variants: &names,
            baseline: plan.baseline,
            committed: committed.map(|b| (b, drift)),
            gates: plan.spec.gates.as_ref(),
            informational: plan.filtered || plan.shard.is_some(),
            interrupted: interrupted.is_some(),
        },
        &facts,
    );
    let mut trailer = Map::new();
    trailer.insert("finishedAt".into(), json!(files::now_rfc3339()));
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
    conclusion.insert_into(&mut trailer);
    trailer.insert(
        "fingerprints".into(),
        json!({"config": config, "task": task}),
    );
    out.finish(&trailer)?;
    Ok(ExperimentOutcome {
        output_dir: root.to_path_buf(),
        record,
        passed: conclusion.passed,
        interrupted,
        cells: facts.iter().map(Vec::len).sum(),
        variants: conclusion.aggregates,
        baseline: plan.baseline.map(|b| plan.variants[b].name.clone()),
        comparisons: conclusion.comparisons,
        gates: conclusion.gates,
        filtered: plan.filtered || plan.shard.is_some(),
        _claim: None,
    })
}

/// One cell of the record.
fn cell_json(
    evaluation: &Value,
    cell: &CellFacts,
    variant: &str,
    position: usize,
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
        "caseIndex": position,
        "variant": variant,
        "trial": cell.trial,
        "status": cell.status,
        "passed": cell.passed(),
        "recommendation": cell.recommendation,
        "summary": field("summary"),
        "tags": plan.tags_of(&cell.case_id),
        "output": output,
        "scores": Value::Object(cell.scores.iter().map(|(n, s)| (n.clone(), json!(s))).collect()),
        "assertions": evaluation.get("assertions").cloned().unwrap_or(json!([])),
        "usage": field("usage"),
        "costUsd": field("costUsd"),
        "durationMs": field("durationMs"),
        "firstByteMs": field("firstByteMs"),
        "provider": field("provider"),
        "model": field("model"),
        "harness": field("harness"),
        "record": record,
    })
}
