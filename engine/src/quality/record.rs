//! The experiment record, `experiment.json` (`cautilus.experiment.v1`):
//! what its cells conclude ([`conclude`]: aggregates, comparisons, gates,
//! the verdict) and writing it, streamed from the groups' journals.
//!
//! The same conclusion is drawn by a run and by `eval merge` of its
//! shards: both feed [`conclude`] the cells in one canonical order
//! (variant, trial, case position), so a merged record's statistics equal
//! an unsharded run's, bootstrap intervals included.

use std::path::{Path, PathBuf};

use serde_json::Value;

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
use crate::schema::experiment as record;

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
    /// The record's trailer: when and how the run ended, then what its
    /// cells conclude.
    pub fn trailer(
        &self,
        interrupted: Option<&str>,
        fingerprints: (String, String),
    ) -> record::ExperimentTrailer {
        record::ExperimentTrailer {
            finished_at: files::now_rfc3339(),
            status: if interrupted.is_some() {
                "interrupted"
            } else {
                "completed"
            }
            .into(),
            interrupted_by: interrupted.map(str::to_string),
            aggregates: self
                .aggregates
                .iter()
                .map(|(n, a)| (n.clone(), a.to_record()))
                .collect(),
            comparison: self.comparisons.iter().map(Comparison::to_record).collect(),
            gates: self.gates.clone(),
            passed: self.passed,
            fingerprints: record::Fingerprints {
                config: fingerprints.0,
                task: fingerprints.1,
            },
        }
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
    /// What the suite's preset declared: where its evaluations hold the
    /// answer (a cell's `output`).
    pub contract: &'a crate::fixture::SuiteContract,
}

fn header(
    context: &RecordContext<'_>,
    drift: bool,
    started_at: String,
) -> record::ExperimentHeader {
    let RecordContext {
        suite,
        plan,
        options,
        committed,
        ..
    } = *context;
    record::ExperimentHeader {
        schema_version: SCHEMA.into(),
        surface: suite.pair.surface.into(),
        preset: suite.pair.preset.into(),
        suite_id: suite.suite_id.clone(),
        suite_display_name: suite.suite_display_name.clone(),
        fixture_ref: eval::run::packets::fixture_ref(&suite.file, &options.workspace),
        started_at,
        baseline: plan.baseline.map(|b| plan.variants[b].name.clone()),
        variants: plan
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| record::VariantEntry {
                name: v.name.clone(),
                baseline: plan.baseline == Some(i),
                overrides: v.written.clone(),
            })
            .collect(),
        committed_baseline: committed.map(|b| record::CommittedBaseline {
            path: b.path.to_string_lossy().into_owned(),
            variant: b.variant.clone(),
            promoted_at: b.promoted_at.clone(),
            changed_since: drift,
        }),
        trials: plan.max_trials,
        filtered: plan.filtered,
        suite_tags: plan.spec.tags.clone(),
        shard: plan
            .shard
            .map(|(index, count)| record::ShardInfo { index, count }),
        filters: record::Filters {
            cases: options.cells.cases.clone(),
            variants: options.cells.variants.clone(),
            tags: options.cells.tags.clone(),
            trials: options.cells.trials,
        },
        declared_gates: plan.spec.gates_json.clone(),
        skipped: plan
            .skipped
            .iter()
            .map(|(i, id, reason)| record::Skipped {
                case_index: *i as u64,
                case_id: id.clone(),
                reason: reason.clone(),
            })
            .collect(),
        merged_from: None,
    }
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
        contract,
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
    let header = crate::schema::object_of(&header(context, drift, started_at));
    let mut out = PacketWriter::create(&record, &header, "cells")?;
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
            let cell_record = cell_record(
                evaluation, &cell, variant, position, &relative, plan, contract,
            );
            out.push(&crate::json_text::to_text(&cell_record))?;
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
    let trailer = crate::schema::object_of(&conclusion.trailer(interrupted, (config, task)));
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

/// One cell of the record: the host's facts, and what the preset and the
/// provider reported, as they wrote it.
fn cell_record(
    mut evaluation: Value,
    cell: &CellFacts,
    variant: &str,
    position: usize,
    record: &str,
    plan: &Plan,
    contract: &crate::fixture::SuiteContract,
) -> record::Cell {
    let output = contract.answer_of(&evaluation).cloned();
    let assertions = evaluation
        .as_object_mut()
        .and_then(|o| o.remove("assertions"));
    let mut field = |key: &str| {
        evaluation
            .as_object_mut()
            .and_then(|o| o.remove(key))
            .unwrap_or(Value::Null)
    };
    record::Cell {
        case_id: cell.case_id.clone(),
        case_index: position as u64,
        variant: variant.into(),
        trial: cell.trial,
        status: cell.status.clone(),
        passed: cell.passed(),
        recommendation: cell.recommendation.clone(),
        summary: field("summary"),
        tags: plan.tags_of(&cell.case_id),
        output,
        scores: cell.scores.iter().cloned().collect(),
        assertions: assertions.unwrap_or_else(|| Value::Array(Vec::new())),
        usage: field("usage"),
        cost_usd: field("costUsd"),
        duration_ms: field("durationMs"),
        first_byte_ms: field("firstByteMs"),
        provider: field("provider"),
        model: field("model"),
        harness: field("harness"),
        record: record.into(),
    }
}
