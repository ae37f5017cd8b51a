//! Running one suite: the checking pass ([`super::validate`], which also
//! writes `eval-cases.json`), then the cases again in batches on worker
//! threads (provider → preset `collect` → assertions), their results
//! written in case order by [`RunRecords`] with a journal line each, and
//! `run.json` saying how the run ended.
//!
//! An interruption (SIGINT, SIGTERM) stops the workers between cases:
//! every case that finished is written and journaled, the summary says the
//! run was interrupted, `run.json` says how far it got, and no partial
//! file is left. `--resume <run-dir>` checks the fixture is unchanged
//! (fingerprint), takes the finished cases from the journal and runs the
//! rest only.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::EvalError;
use super::assertions::{CaseExtras, ScorerPool};
use super::batch::{Preparer, RawBatch};
use super::cases::{RunContext, run_cases};
use super::cassette::{Cassette, ReplayMode};
use super::interrupt;
use super::journal::{self, Journal};
use super::pipeline::{
    HEADER_KEYS, Outcome, SuiteOptions, TestOptions, batch_size, default_jobs, fixture_ref, header,
    preset_info, preset_limits, read_fixture_results,
};
use super::records::{self, PacketWriter, partial_path};
use super::run_provider::RunProvider;
use super::run_records::{CaseLines, Delivered, RanCase, RunRecords};
use super::run_state::{RunOptions, RunState, RunStatus};
use super::snapshots;
use super::tally::Tally;
use super::validate::{Checked, Validated, case_batches, translate, validate_suite};
use super::workers::run_ordered;
use crate::fixture::Suite;
use crate::plugin::preset::PresetSession;
use crate::plugin::provider::ProviderSession;
use crate::plugin::{Grants, Registry};

/// The packets a run writes, by file name.
const CASES: &str = "eval-cases.json";
const OBSERVED: &str = "eval-observed.json";
const SUMMARY: &str = "eval-summary.json";

/// Runs one suite and writes its records. With `keep_outputs`, the outcome
/// also holds each case's output node (what later steps read).
pub fn run_suite(
    registry: &Registry,
    options: &TestOptions,
    suite: Suite,
    keep_outputs: bool,
) -> Result<Outcome, EvalError> {
    let jobs = options.jobs.unwrap_or(match suite.pair.mode {
        crate::taxonomy::Mode::Workspace => 1,
        crate::taxonomy::Mode::Messaging => default_jobs(),
    });
    let preset = registry.preset_for(suite.pair)?;
    let info = preset_info(&preset);
    let canned = read_fixture_results(options.fixture_results.as_deref())?;
    let run_provider = RunProvider::for_suite(registry, options, &suite.body)?;
    let provider = run_provider.setup.plugin.clone();
    let grants = run_provider.grants(&options.workspace);
    let cassette = run_provider.cassette.clone();
    let reference = run_provider.reference.clone();
    let secrets = run_provider.setup.secret_values();
    // Checks the provider's world before anything is written.
    let harness = ProviderSession::new(provider.clone(), options.limits.clone(), grants.clone())?
        .harness()
        .to_string();

    let fixture_ref = fixture_ref(&suite.file, &options.workspace);
    let mut fields: Map<String, Value> = HEADER_KEYS
        .iter()
        .filter_map(|key| Some((key.to_string(), suite.body.get(*key)?.clone())))
        .collect();
    fields.insert("suiteDisplayName".into(), json!(suite.suite_display_name));
    fields.insert("fixtureRef".into(), json!(fixture_ref));
    let output_dir = options
        .output_dir
        .clone()
        .unwrap_or_else(|| records::new_run_dir(&options.workspace));
    let resumed = if options.resume {
        let state = RunState::read(&output_dir)?;
        clean_partials(&output_dir);
        Some(state)
    } else {
        None
    };
    let existed = output_dir.exists();

    // The checking pass writes eval-cases.json; an invalid suite leaves nothing.
    let mut cases_out = PacketWriter::create(
        &output_dir.join(CASES),
        &header(&info.cases_schema, &fields),
        "cases",
    )?;
    let validated = validate_suite(
        registry,
        suite,
        options.jobs.unwrap_or_else(default_jobs),
        &SuiteOptions {
            update_snapshots: options.update_snapshots,
            judge_limits: Some(options.limits.clone()),
            cassette: cassette.clone(),
        },
        Some(&mut cases_out),
        !options.resume,
    );
    let mut validated = match validated {
        Ok(validated) => validated,
        Err(error) => {
            drop(cases_out);
            if !existed {
                let _ = std::fs::remove_dir(&output_dir);
            }
            return Err(error);
        }
    };
    let total = validated.case_count;
    if let Some(state) = &resumed
        && state.fingerprint != validated.fingerprint
    {
        drop(cases_out); // the run's own records stay as they were
        return Err(EvalError::Input {
            path: output_dir.join(super::run_state::FILE),
            message: format!(
                "the fixture changed since this run started (its cases or suite fields differ), so its finished cases no longer apply; start a new run with `cautilus eval test --fixture {}`",
                state.options.fixture.display()
            ),
        });
    }
    cases_out.finish(&Map::new())?;

    let journal_path = output_dir.join(journal::FILE);
    let (mut state, journal) = match resumed {
        Some(mut state) => {
            let journal = Journal::load(&journal_path, total)?;
            state.status = RunStatus::Running;
            state.resumed += 1;
            state.ended_at = None;
            state.interrupted_by = None;
            state.error = None;
            eprintln!(
                "resuming {}: {} of {total} cases finished earlier; running the other {}",
                output_dir.display(),
                journal.finished(),
                total - journal.finished()
            );
            (state, Some(journal))
        }
        None => {
            std::fs::File::create(&journal_path).map_err(|source| EvalError::Write {
                path: journal_path.clone(),
                source,
            })?;
            let state = RunState::start(
                run_options(options, &reference),
                validated.fingerprint.clone(),
                total,
            );
            (state, None)
        }
    };
    state.write(&output_dir)?;
    let finished: Vec<bool> = (0..total)
        .map(|i| journal.as_ref().is_some_and(|j| j.contains(i)))
        .collect();

    let tally = if options.case_lines == CaseLines::Keep {
        Tally::new(&info.counts)
    } else {
        Tally::without_lines(&info.counts)
    };
    let mut records = RunRecords::new(
        PacketWriter::create(
            &output_dir.join(OBSERVED),
            &header(&info.observed_schema, &fields),
            "evaluations",
        )?,
        PacketWriter::create(
            &output_dir.join(SUMMARY),
            &header(&info.summary_schema, &fields),
            "evaluations",
        )?,
        &journal_path,
        journal,
        tally,
        options.case_lines,
    )?;
    let context = RunContext {
        provider: provider.id(),
        harness: &harness,
        mode: validated.suite.pair.mode.as_str(),
        fixture_ref: &fixture_ref,
        canned: canned.as_ref(),
        provider_options: &run_provider.setup.options,
        cassette: cassette.as_deref(),
        secrets: &secrets,
    };
    let kept = validated.kept.take();
    let worked = interrupt::announcing(|| {
        run_cases_of(
            registry,
            &validated,
            kept,
            options,
            &context,
            &finished,
            jobs,
            keep_outputs,
            (provider.clone(), grants.clone()),
            &mut records,
        )
    });
    let interrupted = interrupt::signal_name();
    // What was recorded is kept whatever happened to the run.
    let saved = cassette.as_deref().map_or(Ok(()), Cassette::save);
    if let Err(error) = worked {
        let written = records.written();
        drop(records);
        state.end(RunStatus::Failed, written);
        state.error = Some(error.to_string());
        state.write(&output_dir)?;
        return Err(error);
    }
    saved?;
    let (tally, outputs) = records.finish(total, interrupted, records::now_rfc3339())?;
    let done = usize::try_from(tally.total()).unwrap_or(usize::MAX);
    match interrupted {
        Some(signal) => {
            state.end(RunStatus::Interrupted, done);
            state.interrupted_by = Some(signal.to_string());
        }
        None => state.end(RunStatus::Completed, done),
    }
    state.write(&output_dir)?;
    Ok(Outcome {
        tally,
        summary_path: output_dir.join(SUMMARY),
        output_dir: Some(output_dir),
        outputs,
        interrupted,
        finished: done,
        total,
        _scratch: None,
    })
}

/// The run pass: each batch's unfinished cases through the provider, the
/// preset's `collect` and the assertions, delivered in order to `records`.
#[allow(clippy::too_many_arguments)]
fn run_cases_of(
    registry: &Registry,
    validated: &Validated,
    kept: Option<Vec<Checked>>,
    options: &TestOptions,
    context: &RunContext<'_>,
    finished: &[bool],
    jobs: usize,
    keep_outputs: bool,
    (provider, grants): (Arc<crate::plugin::Plugin>, Arc<Grants>),
    records: &mut RunRecords,
) -> Result<(), EvalError> {
    let suite = &validated.suite;
    let fixture_dir = suite
        .file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let preparer = Preparer {
        registry,
        fixture: &suite.file,
        assertions: &validated.assertions,
        snapshots: suite.pair.surface == "app",
        update_snapshots: options.update_snapshots,
    };
    // Each batch keeps its range (for the writer) and only the cases to
    // run; batches the checking pass kept need no second reading.
    let source: Box<dyn Iterator<Item = Result<Work, EvalError>> + Send> = match kept {
        Some(kept) => {
            let size = batch_size(validated.case_count, jobs);
            Box::new(
                kept.into_iter()
                    .flat_map(move |checked| checked.split(size))
                    .map(|checked| Ok(Work::Checked(checked.batch.range(), checked))),
            )
        }
        None => {
            let size = batch_size(validated.case_count, jobs);
            Box::new(
                case_batches(suite.cases.open(), size).flat_map(|raw| match raw {
                    Ok(raw) => unfinished(raw, finished).into_iter().map(Ok).collect(),
                    Err(error) => vec![Err(error)],
                }),
            )
        }
    };
    run_ordered(
        source,
        jobs,
        &interrupt::requested,
        || -> Result<_, EvalError> {
            Ok((
                PresetSession::new(validated.preset.clone(), preset_limits())?,
                ProviderSession::new(provider.clone(), options.limits.clone(), grants.clone())?,
                ScorerPool::new(),
            ))
        },
        |(session, provider, pool), work, stop| {
            let (range, batch, mut plans) = match work {
                Work::Raw(range, raw) if raw.cases.is_empty() || stop.interrupted() => {
                    return Ok(Delivered {
                        range,
                        ran: Vec::new(),
                    });
                }
                Work::Checked(range, _) if stop.interrupted() => {
                    return Ok(Delivered {
                        range,
                        ran: Vec::new(),
                    });
                }
                Work::Raw(range, raw) => {
                    let batch = preparer
                        .prepare(raw, None)
                        .map_err(|problems| cases_error(&suite.file, problems))?;
                    let plans = translate(session, &validated.suite_json, &batch)?
                        .map_err(|problems| cases_error(&suite.file, problems))?;
                    (range, batch, plans)
                }
                Work::Checked(range, Checked { batch, plans }) => (range, batch, plans),
            };
            let (runs, workspaces) = run_cases(&plans, &batch.origins, context, provider, stop)?;
            let ran = runs.len(); // fewer than planned when interrupted
            plans.truncate(ran);
            let mut bodies: Vec<String> = plans
                .iter_mut()
                .map(|p| std::mem::take(&mut p.body))
                .collect();
            if options.update_snapshots {
                for (k, body) in bodies.iter_mut().enumerate() {
                    if let Some(snapshot) = &batch.snapshots[k]
                        && let Some(message) = snapshots::update(snapshot, &runs[k], body)?
                    {
                        eprintln!("{message}");
                    }
                }
            }
            let first = batch.indices.first().copied().unwrap_or(0);
            let (evaluations, mut verdicts): (Vec<String>, Vec<_>) = if ran == 0 {
                (Vec::new(), Vec::new())
            } else {
                session
                    .collect(&bodies, &runs, first)?
                    .into_iter()
                    .map(|c| (c.evaluation, c.verdict))
                    .unzip()
            };
            if ran > 0 && !validated.assertions.none_in(&batch.assertions) {
                let extras = CaseExtras {
                    metadata: batch.metadata[..ran].iter().map(Option::as_ref).collect(),
                    workspaces: workspaces
                        .iter()
                        .map(|w| w.as_ref().map(tempfile::TempDir::path))
                        .collect(),
                    default_dir: fixture_dir,
                };
                let outcomes =
                    validated
                        .assertions
                        .run_batch(&batch.assertions, pool, &plans, &runs, &extras);
                for (verdict, outcomes) in verdicts.iter_mut().zip(&outcomes) {
                    super::verdicts::apply(verdict, outcomes);
                }
            }
            let ran = evaluations
                .into_iter()
                .zip(verdicts)
                .enumerate()
                .map(|(k, (observed, verdict))| RanCase {
                    index: batch.indices[k],
                    observed,
                    verdict,
                    output: keep_outputs
                        .then(|| super::steps::case_output(&plans[k].case_id, &runs[k])),
                })
                .collect();
            Ok(Delivered { range, ran })
        },
        |delivered| records.deliver(delivered),
    )
}

/// The cases of `raw` still to run (a resumed run skips finished ones), as
/// batches of consecutive cases, so the preset's indices stay right. Their
/// ranges tile `raw`'s, so the writer still sees every case of it (finished
/// ones come from the journal).
fn unfinished(raw: RawBatch, finished: &[bool]) -> Vec<Work> {
    let range = raw.range();
    let mut works = Vec::new();
    let mut start = range.start;
    let mut current = RawBatch::default();
    for (i, case) in raw.indices.into_iter().zip(raw.cases) {
        if finished.get(i).copied().unwrap_or(false) {
            continue;
        }
        if let Some(&last) = current.indices.last()
            && i != last + 1
        {
            works.push(Work::Raw(start..last + 1, std::mem::take(&mut current)));
            start = last + 1;
        }
        current.indices.push(i);
        current.cases.push(case);
    }
    works.push(Work::Raw(start..range.end, current));
    works
}

/// One batch of the run pass: read from the source (to prepare and
/// translate), or as the checking pass kept it.
enum Work {
    Raw(std::ops::Range<usize>, RawBatch),
    Checked(std::ops::Range<usize>, Checked),
}

fn cases_error(file: &Path, problems: Vec<(String, String)>) -> EvalError {
    EvalError::Cases {
        file: file.to_path_buf(),
        problems,
    }
}

/// What `run.json` records of the options (what `--resume` reuses).
fn run_options(options: &TestOptions, reference: &str) -> RunOptions {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    RunOptions {
        fixture: absolute(&options.fixture),
        workspace: absolute(&options.workspace),
        provider: reference.to_string(),
        grants: options.grants.clone(),
        replay: options.replay.map(|mode| mode.as_str().to_string()),
        cassette: options.cassette.clone(),
        fixture_results: options.fixture_results.as_deref().map(absolute),
        jobs: options.jobs,
        timeout_ms: u64::try_from(options.limits.timeout.as_millis()).unwrap_or(u64::MAX),
        memory_bytes: options.limits.memory_bytes,
        fuel: options.limits.fuel,
        update_snapshots: options.update_snapshots,
    }
}

/// The options of the run in `dir`, to resume it.
pub fn resume_options(dir: &Path, case_lines: CaseLines) -> Result<TestOptions, EvalError> {
    let state = RunState::read(dir)?;
    if state.status == RunStatus::Completed {
        return Err(EvalError::Input {
            path: dir.join(super::run_state::FILE),
            message: format!(
                "this run completed ({} of {} cases); there is nothing to resume",
                state.finished_cases, state.total_cases
            ),
        });
    }
    let o = state.options;
    Ok(TestOptions {
        fixture: o.fixture,
        workspace: o.workspace,
        output_dir: Some(dir.to_path_buf()),
        provider: Some(o.provider),
        grants: o.grants,
        replay: o
            .replay
            .as_deref()
            .map(ReplayMode::parse)
            .transpose()
            .map_err(|message| EvalError::Input {
                path: dir.join(super::run_state::FILE),
                message,
            })?,
        cassette: o.cassette,
        fixture_results: o.fixture_results,
        limits: crate::plugin::Limits {
            timeout: std::time::Duration::from_millis(o.timeout_ms),
            memory_bytes: o.memory_bytes,
            fuel: o.fuel,
            ..crate::plugin::Limits::default()
        },
        jobs: o.jobs,
        update_snapshots: o.update_snapshots,
        resume: true,
        case_lines,
    })
}

/// Removes the partial files a killed run left behind.
fn clean_partials(dir: &Path) {
    for name in [CASES, OBSERVED, SUMMARY] {
        let _ = std::fs::remove_file(partial_path(&dir.join(name)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_cases_split_into_consecutive_runs_that_tile_the_range() {
        let raw = RawBatch::consecutive(10, (0..8).map(|i| serde_json::json!(i)).collect());
        let mut finished = vec![false; 20];
        for i in [10, 13, 14, 17] {
            finished[i] = true;
        }
        let works = unfinished(raw, &finished);
        let shown: Vec<(std::ops::Range<usize>, Vec<usize>)> = works
            .into_iter()
            .map(|work| match work {
                Work::Raw(range, raw) => (range, raw.indices),
                Work::Checked(..) => unreachable!(),
            })
            .collect();
        assert_eq!(shown, [(10..13, vec![11, 12]), (13..18, vec![15, 16])]);
    }
}
