//! Running a multi-step fixture (C3).
//!
//! Steps run in order, each through the normal pipeline with its records in
//! `<run>/steps/step-<i>/`. Before a step runs, the placeholders of its
//! fixture are replaced with the outputs of the steps before it. A step's
//! output is the output node of its last case ([`crate::eval::run::case_output::case_output`]), plus
//! `cases.<caseId>` for every case when it has several. Execution stops at
//! the first step whose recommendation is not accept-now, or that cannot
//! run; the later steps are reported `not-run`. The run's own
//! `eval-summary.json` (`cautilus.evaluation_summary.v1`) lists every step,
//! sums the counts, and is written even when a step stopped the run.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::files;
use crate::eval::options::TestOptions;
use crate::eval::run::suite_run::run_suite;
use crate::eval::verdict::tally::Tally;
use crate::fixture::StepsFixture;
use crate::plugin::Registry;
use crate::schema::packets::{StepEntry, StepsCounts, StepsSummary};

/// The schema of the run's summary.
pub const SUMMARY_SCHEMA: &str = "cautilus.evaluation_summary.v1";

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    Passed,
    /// Nothing in the step had anything to check (a step that only
    /// produces output for later ones); the run goes on.
    Unchecked,
    Failed,
    /// The step could not run (e.g. a placeholder path that does not resolve).
    Errored,
    NotRun,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Unchecked => "unchecked",
            Self::Failed => "failed",
            Self::Errored => "errored",
            Self::NotRun => "not-run",
        }
    }
}

/// One step of a finished run.
#[derive(Debug)]
pub struct StepReport {
    pub index: usize,
    pub surface: String,
    pub preset: String,
    pub suite_id: String,
    pub status: StepStatus,
    /// The step's records, relative to the run directory.
    pub output_dir: Option<String>,
    pub output: Value,
    /// The step's own tally (when it ran).
    pub tally: Option<Tally>,
    pub error: Option<String>,
}

/// A finished steps run.
#[derive(Debug)]
pub struct StepsOutcome {
    pub steps: Vec<StepReport>,
    pub recommendation: &'static str,
    pub summary_path: PathBuf,
    pub output_dir: PathBuf,
    /// The claim on the run directory, held as long as the outcome.
    pub(crate) _claim: Option<crate::eval::records::run_dir::RunDir>,
}

/// Runs every step in order (see the module docs). A step that cannot run
/// is returned as the error, after the run's summary is written.
pub fn run(
    registry: &Registry,
    options: &TestOptions,
    fixture: &StepsFixture,
) -> Result<StepsOutcome, EvalError> {
    let output_dir = options
        .output_dir
        .clone()
        .unwrap_or_else(|| files::new_run_dir(&options.records_root()));
    let mut outputs: Vec<Value> = Vec::new();
    let mut reports = Vec::with_capacity(fixture.steps.len());
    let mut failure = None;
    let mut stopped = false;
    // A step's preset fields, and the program or service it gives its
    // provider, are checked before the first step runs, unless they wait
    // on an earlier step's output (then when the step runs).
    for step in &fixture.steps {
        if let Ok(suite) = step.suite(&fixture.file, &[]) {
            let in_step = |error| EvalError::Step {
                index: step.index,
                error: Box::new(error),
            };
            crate::eval::check_service(registry, options, &suite, false).map_err(in_step)?;
            crate::eval::check_preset_fields(registry, suite).map_err(in_step)?;
        }
    }
    // Every step's files are the fixture's inputs; each step's run claims
    // its own directory inside this one.
    let claim = crate::eval::records::run_dir::RunDir::claim(&output_dir, || {
        let mut inputs = crate::eval::records::run_dir::Inputs::of_files(
            std::iter::once(&fixture.file).chain(&fixture.read),
        )
        .with(options.fixture_results.as_deref());
        for suite in fixture
            .steps
            .iter()
            .filter_map(|step| step.suite(&fixture.file, &[]).ok())
        {
            inputs.merge(crate::eval::records::run_dir::Inputs::of_suite(&suite));
        }
        inputs
    })?;
    for step in &fixture.steps {
        let field = |key: &str| {
            step.document
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let mut report = StepReport {
            index: step.index,
            surface: field("surface"),
            preset: field("preset"),
            suite_id: field("suiteId"),
            status: StepStatus::NotRun,
            output_dir: None,
            output: Value::Null,
            tally: None,
            error: None,
        };
        if stopped {
            reports.push(report);
            continue;
        }
        let relative = format!("steps/step-{}", step.index);
        let step_options = TestOptions {
            fixture: step.file.clone(),
            output_dir: Some(output_dir.join(&relative)),
            case_lines: crate::eval::CaseLines::Keep,
            ..options.clone()
        };
        let result = step
            .suite(&fixture.file, &outputs)
            .map_err(EvalError::from)
            .and_then(|suite| run_suite(registry, &step_options, suite, true));
        match result {
            Ok(outcome) if outcome.interrupted.is_some() => {
                report.status = StepStatus::Errored;
                report.error = Some(format!(
                    "interrupted ({}) after {} of {} cases",
                    outcome.interrupted.unwrap_or("signal"),
                    outcome.finished,
                    outcome.total
                ));
                report.output_dir = Some(relative);
                report.tally = Some(outcome.tally);
                stopped = true;
            }
            Ok(outcome) => {
                report.output = step_output(&outcome.outputs);
                report.status = if outcome.recommendation() == "accept-now" {
                    StepStatus::Passed
                } else if outcome.tally.checked_recommendation() == "accept-now" {
                    // Held back only by cases with nothing to check.
                    StepStatus::Unchecked
                } else {
                    stopped = true;
                    StepStatus::Failed
                };
                report.output_dir = Some(relative);
                report.tally = Some(outcome.tally);
                outputs.push(report.output.clone());
            }
            Err(error) => {
                report.status = StepStatus::Errored;
                report.error = Some(error.to_string());
                stopped = true;
                failure = Some(EvalError::Step {
                    index: step.index,
                    error: Box::new(error),
                });
            }
        }
        reports.push(report);
    }
    let ran_clean = reports
        .iter()
        .all(|r| matches!(r.status, StepStatus::Passed | StepStatus::Unchecked));
    let recommendation = if !ran_clean {
        "reject"
    } else if reports.iter().any(|r| r.status == StepStatus::Passed) {
        "accept-now"
    } else {
        "defer" // nothing in the whole run was checked
    };
    let summary_path = output_dir.join("eval-summary.json");
    let mut summary = summary(fixture, &reports, recommendation);
    // The steps' outputs are what later steps read, kept whole until now;
    // the record of them is redacted like every other.
    options.redact.apply(&mut summary);
    files::write_json(&summary_path, &summary)?;
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(StepsOutcome {
        steps: reports,
        recommendation,
        summary_path,
        output_dir,
        _claim: Some(claim),
    })
}

/// The run's summary packet.
fn summary(fixture: &StepsFixture, reports: &[StepReport], recommendation: &str) -> Value {
    let mut counts = [0u64; 3];
    for tally in reports.iter().filter_map(|r| r.tally.as_ref()) {
        for (slot, key) in counts.iter_mut().zip(["total", "passed", "failed"]) {
            *slot += tally.counts().get(key).and_then(Value::as_u64).unwrap_or(0);
        }
    }
    let steps = reports
        .iter()
        .map(|r| StepEntry {
            step_index: r.index as u64,
            surface: r.surface.clone(),
            preset: r.preset.clone(),
            suite_id: r.suite_id.clone(),
            status: r.status.as_str().to_string(),
            output: r.output.clone(),
            output_dir: r.output_dir.clone(),
            summary_file: r
                .output_dir
                .as_ref()
                .map(|dir| format!("{dir}/eval-summary.json")),
            error: r.error.clone(),
        })
        .collect();
    let summary = StepsSummary {
        schema_version: SUMMARY_SCHEMA.to_string(),
        suite_id: fixture.suite_id.clone(),
        suite_display_name: fixture.suite_display_name.clone(),
        recommendation: recommendation.to_string(),
        evaluation_counts: StepsCounts {
            total: counts[0],
            passed: counts[1],
            failed: counts[2],
        },
        steps,
        evaluated_at: files::now_rfc3339(),
    };
    Value::Object(crate::schema::object_of(&summary))
}

/// A step's output: its last case's node, and every case's under `cases`
/// when it has several.
fn step_output(nodes: &[Value]) -> Value {
    let mut output = nodes.last().cloned().unwrap_or_else(|| json!({}));
    if nodes.len() > 1
        && let Value::Object(map) = &mut output
    {
        let cases: Map<String, Value> = nodes
            .iter()
            .map(|node| {
                let id = node["caseId"].as_str().unwrap_or_default().to_string();
                (id, node.clone())
            })
            .collect();
        map.insert("cases".into(), Value::Object(cases));
    }
    output
}

/// Prints each step (and its cases) and the run's recommendation.
pub fn print_summary(
    out: &mut (impl std::io::Write + ?Sized),
    outcome: &StepsOutcome,
) -> std::io::Result<()> {
    for step in &outcome.steps {
        writeln!(
            out,
            "step {} `{}` ({}/{}): {}",
            step.index,
            crate::term::inline(&step.suite_id),
            crate::term::inline(&step.surface),
            crate::term::inline(&step.preset),
            step.status.as_str()
        )?;
        if let Some(tally) = &step.tally {
            crate::eval::records::terminal_summary::print_summary(out, tally)?;
        }
    }
    let ran = outcome.steps.iter().filter(|s| s.tally.is_some()).count();
    writeln!(
        out,
        "recommendation: {} ({ran} of {} steps ran)",
        outcome.recommendation,
        outcome.steps.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_output_is_its_last_case_with_every_case_under_cases() {
        let nodes = vec![
            json!({"caseId": "a", "text": "1"}),
            json!({"caseId": "b", "text": "2"}),
        ];
        let output = step_output(&nodes);
        assert_eq!(output["text"], "2");
        assert_eq!(output["cases"]["a"]["text"], "1");
        assert!(step_output(&nodes[..1]).get("cases").is_none());
    }
}
