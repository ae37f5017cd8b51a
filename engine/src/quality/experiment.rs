//! Running an experiment and writing its record, `experiment.json`
//! (`cautilus.experiment.v1`).
//!
//! `eval test` on a suite comes here first. A suite that is one plain run
//! (no variants, one trial, no gates, nothing selected) runs as before and
//! writes the eval packets only. Otherwise each group of cells of the
//! [`Plan`] runs as a suite run of its own, in the run directory itself
//! when there is one group, else in `variants/<name>/trial-<n>/` (`<name>`
//! made from the variant's by [`crate::file_names::stem`]: bounded, and
//! distinct per name even ignoring case). The
//! record is then streamed from the groups' journals: every cell with its
//! output, scores and assertion ledger, then the per-variant aggregates,
//! the comparison with the baseline, the gates, `passed` and the
//! fingerprints. Only each cell's facts are held, never its output.

use std::path::Path;

use serde_json::Value;

use super::baseline::{self, Baseline};
use super::plan::{self, Plan};
use super::record;
use super::resume::GroupState;
use crate::eval::files;
use crate::eval::provider::cassette::ReplayMode;
use crate::eval::records::run_dir::{Inputs, RunDir};
use crate::eval::{self, CaseLines, EvalError, TestOptions, TestRun};
use crate::fixture::{self, Suite};
use crate::plugin::Registry;

pub use super::outcome::{ExperimentOutcome, FILE, SCHEMA};

/// What `eval test` ran.
#[derive(Debug)]
pub enum Run {
    /// One plain suite run, or a steps fixture.
    Plain(TestRun),
    Experiment(ExperimentOutcome),
}

/// Runs `options.fixture`: a plain run, a steps fixture, or an experiment.
/// An error about the fixture is placed in its file
/// ([`eval::positions`]).
pub fn test(registry: &Registry, options: &TestOptions) -> Result<Run, EvalError> {
    // Before the fixture is read: it may not interpolate the variables the
    // run's secrets come from, whether the grants came from flags, the
    // config or the run being resumed.
    crate::secrets::register_sources(options.grants.secrets.values().map(String::as_str));
    run(registry, options)
        .map_err(|e| eval::positions::placed(e, &options.fixture, options.path_root.as_deref()))
}

fn run(registry: &Registry, options: &TestOptions) -> Result<Run, EvalError> {
    let resuming_experiment = options.resume
        && options
            .output_dir
            .as_deref()
            .is_some_and(super::resume::is_experiment);
    if options.resume && !resuming_experiment {
        if let Some(dir) = &options.output_dir {
            check_resumable(dir)?;
        }
        return Ok(Run::Plain(eval::test(registry, options)?));
    }
    let mut suite =
        match fixture::load_fixture_within(&options.fixture, options.path_root.as_deref())? {
            fixture::Fixture::Suite(mut suite) => {
                // In the suite before its fingerprints (a baseline graded by
                // another judge is not comparable).
                eval::run::suite_run::apply_judge(options, &mut suite.body);
                suite
            }
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
    let contract = eval::run::check_pass::declared_contract(registry, &suite);
    let plan = plan::plan(&suite, spec, &options.cells, strict, &contract.input_fields)?;
    // A promoted baseline makes every run of the suite a comparison.
    let committed = baseline::read(&options.records_root(), &suite.suite_id)?;
    if !plan.is_experiment()
        && committed.is_none()
        && !resuming_experiment
        && options.reuse_outputs.is_none()
    {
        let options = TestOptions {
            fixture_results: options.fixture_results.clone().or(plan.fixture_results(0)),
            ..options.clone()
        };
        return Ok(Run::Plain(TestRun::Suite(eval::run_suite(
            registry, &options, suite, false,
        )?)));
    }
    run_experiment(registry, options, &suite, &plan, committed, &contract).map(Run::Experiment)
}

/// Refuses `--resume` of an experiment's run directory, which a plain
/// resume would not complete.
pub fn check_resumable(dir: &std::path::Path) -> Result<(), EvalError> {
    if dir.join(FILE).exists() || dir.join("variants").is_dir() {
        return Err(EvalError::Input {
            path: dir.to_path_buf(),
            message: format!(
                "this experiment's run has no {} (it was written by an older cautilus), so it cannot be resumed; its finished cells are in {}; run the experiment again to complete it",
                super::resume::FILE,
                dir.join(FILE).display()
            ),
        });
    }
    Ok(())
}

/// `error` about a variant's suite, saying which variant where its place
/// (a value the base wrote) does not.
fn in_variant(error: EvalError, name: &str) -> EvalError {
    match error {
        EvalError::Cases { file, problems } => EvalError::Cases {
            file,
            problems: problems
                .into_iter()
                .map(|(path, message)| {
                    if path.starts_with("variants.") {
                        (path, message)
                    } else {
                        (path, format!("in variant `{name}`: {message}"))
                    }
                })
                .collect(),
        },
        other => other,
    }
}

fn run_experiment(
    registry: &Registry,
    options: &TestOptions,
    suite: &Suite,
    plan: &Plan,
    committed: Option<Baseline>,
    contract: &crate::fixture::SuiteContract,
) -> Result<ExperimentOutcome, EvalError> {
    let started_at = files::now_rfc3339();
    // Every variant's suite fields, and the program or service it gives
    // its provider, are checked before anything is written or run.
    for (variant, _) in plan.variants.iter().enumerate() {
        if let Some(group) = plan.groups.iter().find(|g| g.variant == variant) {
            let variant_suite = plan.suite_of(suite, group);
            eval::check_service(
                registry,
                options,
                &variant_suite,
                plan.fixture_results(variant).is_some(),
            )
            .map_err(|error| in_variant(error, &plan.variants[variant].name))?;
            eval::check_preset_fields(registry, variant_suite)?;
        }
    }
    let root = options
        .output_dir
        .clone()
        .unwrap_or_else(|| files::new_run_dir(&options.records_root()));
    // Each group's run claims its own directory inside this one (or
    // shares this claim, when the one group runs in the root).
    let claim = RunDir::claim(&root, || {
        let mut inputs = Inputs::of_suite(suite)
            .with(options.fixture_results.as_deref())
            .with(options.reuse_outputs.as_deref());
        for variant in 0..plan.variants.len() {
            inputs = inputs.with(plan.fixture_results(variant).as_deref());
        }
        inputs
    })?;
    let single = plan.groups.len() == 1;
    let print = options.case_lines == CaseLines::Print;
    if print && !plan.skipped.is_empty() {
        eval::records::progress::print(|| {
            for (_, id, reason) in &plan.skipped {
                let why = if reason.is_empty() { "skipped" } else { reason };
                crate::outln!(
                    "  SKIP  {} — {}",
                    crate::term::inline(id),
                    crate::term::inline(why)
                );
            }
        });
    }
    eval::records::progress::plan_groups(plan.groups.len());
    if !options.resume {
        super::resume::write(&root, options)?;
    }
    let mut groups: Vec<record::GroupRecords> = Vec::new();
    let mut interrupted = None;
    for (index, group) in plan.groups.iter().enumerate() {
        let variant = &plan.variants[group.variant];
        let dir = if single {
            root.clone()
        } else {
            root.join("variants")
                .join(crate::file_names::stem(&variant.name))
                .join(format!("trial-{}", group.trial))
        };
        let state = if options.resume {
            super::resume::group_state(&dir)
        } else {
            GroupState::Fresh
        };
        if print && !single {
            let baseline = if plan.baseline == Some(group.variant) {
                " (baseline)"
            } else {
                ""
            };
            let done = if matches!(state, GroupState::Completed(_)) {
                ": finished earlier"
            } else {
                ":"
            };
            eval::records::progress::print(|| {
                crate::outln!(
                    "variant `{}`{baseline}, trial {} of {}{done}",
                    crate::term::inline(&variant.name),
                    group.trial,
                    plan.max_trials
                );
            });
        }
        if let GroupState::Completed(total) = state {
            groups.push(record::GroupRecords {
                group: index,
                dir,
                total,
            });
            continue;
        }
        // The group's directory is claimed before anything is written
        // there (its reused answers); its suite run shares the claim.
        let _group_claim = match RunDir::claim(&dir, Inputs::default) {
            Ok(claim) => claim,
            Err(error) => {
                if groups.is_empty() && claim.created() {
                    let _ = std::fs::remove_dir_all(&root);
                }
                return Err(error);
            }
        };
        let mut group_options = TestOptions {
            output_dir: Some(dir.clone()),
            fixture_results: options
                .fixture_results
                .clone()
                .or(plan.fixture_results(group.variant)),
            trial: group.trial,
            resume: matches!(state, GroupState::Unfinished),
            ..options.clone()
        };
        if let Some(source) = &options.reuse_outputs {
            // The same group of the earlier run answers, through the fixture backend.
            let relative = dir.strip_prefix(&root).unwrap_or(Path::new(""));
            let reused = super::reuse::prepare(&source.join(relative), &dir, contract)?;
            group_options.provider = Some("fixture".into());
            group_options.fixture_results = Some(reused);
            group_options.replay = Some(ReplayMode::Live);
            group_options.require_canned = true;
        }
        let outcome =
            match eval::run_suite(registry, &group_options, plan.suite_of(suite, group), false) {
                Ok(outcome) => outcome,
                Err(error) => {
                    // A suite found invalid in its first group leaves nothing
                    // behind (no other run writes under a root this holds).
                    if groups.is_empty() && claim.created() {
                        let _ = std::fs::remove_dir_all(&root);
                    }
                    return Err(error);
                }
            };
        if print && !single {
            eval::records::progress::print(|| {
                eval::records::terminal_summary::print_counts(
                    &mut std::io::stdout(),
                    &outcome.tally,
                )
                .ok();
            });
        }
        interrupted = outcome.interrupted;
        groups.push(record::GroupRecords {
            group: index,
            dir,
            total: outcome.total,
        });
        if interrupted.is_some() {
            break;
        }
    }
    let context = record::RecordContext {
        suite,
        plan,
        root: &root,
        options,
        committed: committed.as_ref(),
        contract,
    };
    let mut outcome = record::write(&context, &groups, interrupted, started_at)?;
    outcome._claim = Some(claim);
    Ok(outcome)
}
