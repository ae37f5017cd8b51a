//! The run pass: each batch's unfinished cases through the provider, the
//! preset's `collect` and the assertions, delivered in case order to the
//! run's records.
//!
//! Two shapes, chosen by what the provider does:
//! - **inline**: a provider that does no I/O (the fixture backend) runs on
//!   the worker threads, one case after another, beside the preset and the
//!   scorers: there is nothing to wait for, so nothing to overlap.
//! - **concurrent**: a provider that waits on the network or a program
//!   (`http` or `process`) gets `--concurrency` calls in flight on the I/O
//!   runtime, however few cores there are. One feeder thread takes the
//!   batches in order and starts each case's call as soon as a slot is
//!   free (so calls start in case order); the worker threads take the
//!   batches in order, wait for their calls, and collect and score them.
//!   Between the two, a bounded queue of batches keeps memory flat.
//!
//! An interruption stops cases from starting; every call already started
//! finishes and its case is written, so what finished is never lost.

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, mpsc};

use crate::eval::EvalError;
use crate::eval::assert::assertions::ScorerPool;
use crate::eval::assert::scoring::CaseExtras;
use crate::eval::assert::snapshots;
use crate::eval::interrupt;
use crate::eval::options::{TestOptions, batch_size, local_batch_size, workers};
use crate::eval::provider::calls::{CaseSamples, ProviderCalls};
use crate::eval::records::run_records::{Delivered, RanCase, RunRecords};
use crate::eval::run::batch::{Batch, Preparer, RawBatch};
use crate::eval::run::case_run::{
    RunContext, case_run, case_workspace, requests, run_cases, with_first_byte,
};
use crate::eval::run::check_pass::{Checked, Kept, Validated, case_batches, translate};
use crate::eval::run::preset_sessions::Lent;
use crate::eval::run::spilled_plans::text_hash;
use crate::eval::run::workers::{never, run_ordered, run_ordered_on_workers};
use crate::plugin::Registry;
use crate::plugin::bindings::preset_api::{CasePlan, CaseRun};
use crate::plugin::preset::PresetSession;

/// What the run pass needs of the run.
pub struct RunPass<'a> {
    pub registry: &'a Registry,
    pub validated: &'a Validated,
    pub options: &'a TestOptions,
    pub context: &'a RunContext<'a>,
    /// Cases a resumed run finished earlier, by index.
    pub finished: &'a [bool],
    /// Worker threads (the preset, the scorers, an inline provider).
    pub jobs: usize,
    /// Provider calls in flight at once, for a provider that does I/O;
    /// `None` runs the provider inline.
    pub concurrency: Option<usize>,
    pub keep_outputs: bool,
    pub calls: Arc<ProviderCalls>,
}

/// Runs every unfinished case (see the module docs); `kept` is what the
/// checking pass kept (its batches, which need no second reading, or its
/// plans, which need no second translation).
pub fn run(
    pass: &RunPass<'_>,
    kept: Option<Kept>,
    records: &mut RunRecords,
) -> Result<(), EvalError> {
    // The checking pass's preset instances serve this pass only when it
    // translates nothing again: an instance never sees a case translated
    // twice. At most one a worker (and the feeder) is kept.
    let sessions = &pass.validated.sessions;
    if kept.is_some() {
        sessions.keep_at_most(pass.workers() + usize::from(pass.concurrency.is_some()));
    } else {
        sessions.keep_at_most(0);
    }
    let source = pass.source(kept);
    match pass.concurrency {
        None => pass.inline(source, records),
        Some(concurrency) => pass.concurrent(source, concurrency.max(1), records),
    }
}

/// One batch of the run pass: read from the source (to prepare, and to
/// translate unless the checking pass set its plans aside: then each plan
/// comes with the hash of the case text it was made of), or as the
/// checking pass kept it.
enum Work {
    Raw(Range<usize>, RawBatch, Option<Vec<(u64, CasePlan)>>),
    Checked(Range<usize>, Checked),
}

/// A batch whose provider calls have started: one call per case of a
/// prefix of `plans` (all of them unless the run was interrupted).
struct InFlight {
    range: Range<usize>,
    batch: Batch,
    plans: Vec<CasePlan>,
    calls: Vec<tokio::task::JoinHandle<CaseSamples>>,
    workspaces: Vec<Option<tempfile::TempDir>>,
}

/// A batch made ready for the preset, and its case plans.
type Planned = (Batch, Vec<CasePlan>);

type Source<'s> = Box<dyn Iterator<Item = Result<Work, EvalError>> + Send + 's>;

impl RunPass<'_> {
    fn batch_size(&self) -> usize {
        let cases = self.validated.case_count;
        // Cases that wait on nothing outside the process are cheap next to
        // another worker's instances (unless `--jobs` asked for workers).
        let local = self.concurrency.is_none()
            && self.options.jobs.is_none()
            && !self.calls.waits_on_io()
            && !self.validated.assertions.may_wait_outside();
        if local {
            local_batch_size(cases, self.jobs)
        } else {
            batch_size(cases, self.jobs)
        }
    }

    fn workers(&self) -> usize {
        workers(self.validated.case_count, self.batch_size(), self.jobs)
    }

    fn source(&self, kept: Option<Kept>) -> Source<'_> {
        let size = self.batch_size();
        let read = || {
            case_batches(self.validated.suite.cases.open(), size).flat_map(|raw| match raw {
                Ok(raw) => unfinished(raw, self.finished).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            })
        };
        match kept {
            Some(Kept::Batches(kept)) => Box::new(
                kept.into_iter()
                    .flat_map(move |checked| checked.split(size))
                    .map(|checked| Ok(Work::Checked(checked.batch.range(), checked))),
            ),
            Some(Kept::Plans(mut spilled)) => Box::new(read().map(move |work| match work? {
                Work::Raw(range, raw, None) => {
                    let plans = spilled.take(&raw.indices)?;
                    Ok(Work::Raw(range, raw, Some(plans)))
                }
                other => Ok(other),
            })),
            None => Box::new(read()),
        }
    }

    fn preparer(&self) -> Preparer<'_> {
        let suite = &self.validated.suite;
        Preparer {
            registry: self.registry,
            fixture: &suite.file,
            assertions: &self.validated.assertions,
            contract: &crate::eval::run::packets::preset_description(&self.validated.preset)
                .contract,
            update_snapshots: self.options.update_snapshots,
            root: &suite.root,
            run_root: None, // checked by the checking pass
        }
    }

    /// The batch's cases made ready and planned (`None`: nothing to run).
    fn plan(
        &self,
        session: &mut PresetSession,
        work: Work,
    ) -> Result<(Range<usize>, Option<Planned>), EvalError> {
        let suite = &self.validated.suite;
        let (range, raw, spilled) = match work {
            Work::Checked(range, Checked { batch, plans }) => {
                return Ok((range, Some((batch, plans))));
            }
            Work::Raw(range, raw, spilled) => (range, raw, spilled),
        };
        if raw.cases.is_empty() {
            return Ok((range, None));
        }
        let batch = self
            .preparer()
            .prepare(raw, None)
            .map_err(|problems| cases_error(&suite.file, problems))?;
        let plans = match spilled {
            None => translate(session, &self.validated.suite_json, &batch)?
                .map_err(|problems| cases_error(&suite.file, problems))?,
            Some(plans) => {
                let cases = batch.indices.iter().zip(&batch.texts);
                if let Some((_, (i, _))) = plans
                    .iter()
                    .zip(cases)
                    .find(|((hash, _), (_, text))| *hash != text_hash(text))
                {
                    return Err(EvalError::Input {
                        path: suite.file.clone(),
                        message: format!(
                            "cases[{i}] changed while the suite ran (it is not the case that was checked); run again once the fixture and its case files stay as they are"
                        ),
                    });
                }
                plans.into_iter().map(|(_, plan)| plan).collect()
            }
        };
        Ok((range, Some((batch, plans))))
    }

    /// A worker's preset session (one the checking pass made, if idle).
    fn session(&self) -> Result<Lent<'_>, EvalError> {
        self.validated.sessions.lend()
    }

    /// The provider on the worker threads, a case at a time.
    fn inline(&self, source: Source<'_>, records: &mut RunRecords) -> Result<(), EvalError> {
        run_ordered(
            source,
            self.workers(),
            &interrupt::requested,
            || Ok((self.session()?, ScorerPool::new())),
            |(session, pool), work, stop| {
                if stop.interrupted() {
                    let range = match &work {
                        Work::Raw(range, ..) | Work::Checked(range, _) => range.clone(),
                    };
                    return Ok(Delivered {
                        range,
                        ran: Vec::new(),
                    });
                }
                let (range, planned) = self.plan(session, work)?;
                let Some((batch, plans)) = planned else {
                    return Ok(Delivered {
                        range,
                        ran: Vec::new(),
                    });
                };
                let (ran, workspaces) = run_cases(
                    &batch.indices,
                    &plans,
                    &batch.origins,
                    &batch.settings,
                    self.context,
                    &self.calls,
                    stop,
                )?;
                let (runs, first_bytes) = ran.into_iter().unzip();
                self.finish(
                    session,
                    pool,
                    range,
                    batch,
                    plans,
                    (runs, first_bytes),
                    &workspaces,
                )
            },
            |delivered| records.deliver(delivered),
        )
    }

    /// Calls in flight on the I/O runtime, started by one feeder thread;
    /// the worker threads collect and score.
    fn concurrent(
        &self,
        source: Source<'_>,
        concurrency: usize,
        records: &mut RunRecords,
    ) -> Result<(), EvalError> {
        // Enough batches queued that the slots, not the queue, limit the
        // calls in flight.
        let queued = concurrency.div_ceil(self.batch_size()) + 1;
        let (send, receive) = mpsc::sync_channel::<Result<InFlight, EvalError>>(queued);
        let slots = Arc::new(tokio::sync::Semaphore::new(concurrency));
        std::thread::scope(|scope| {
            // The feeder owns the sender: the queue closes when it ends.
            let feeder_slots = slots.clone();
            scope.spawn(move || {
                if let Err(error) = self.feed(source, &feeder_slots, &send) {
                    let _ = send.send(Err(error));
                }
            });
            // Fed as calls start: no look at a second batch first.
            let worked = run_ordered_on_workers(
                receive.into_iter(),
                self.workers(),
                // Every batch the feeder queued has started calls: all are
                // delivered; the feeder stops queueing when interrupted.
                never(),
                || Ok((self.session()?, ScorerPool::new())),
                |(session, pool), flight, stop| {
                    let closer = CloseOnError(&slots);
                    let InFlight {
                        range,
                        batch,
                        plans,
                        calls,
                        workspaces,
                    } = flight;
                    let samples = crate::plugin::io::block_on(async {
                        let mut all = Vec::with_capacity(calls.len());
                        for call in calls {
                            // A call only ends early by panicking: raise it
                            // here, as the inline mode would.
                            all.push(call.await.unwrap_or_else(|e| match e.try_into_panic() {
                                Ok(panic) => std::panic::resume_unwind(panic),
                                Err(e) => panic!("a provider call was cancelled: {e}"),
                            }));
                        }
                        all
                    });
                    if stop.failed() {
                        return closer.check(Err(EvalError::Stopped));
                    }
                    let runs = plans
                        .iter()
                        .zip(samples)
                        .map(|(plan, samples)| case_run(plan, self.context, samples))
                        .unzip();
                    closer.check(self.finish(session, pool, range, batch, plans, runs, &workspaces))
                },
                |delivered| CloseOnError(&slots).check(records.deliver(delivered)),
            );
            // The workers are done (finished, or stopped by an error): a
            // feeder waiting for a slot starts nothing more.
            slots.close();
            worked
        })
    }

    /// The feeder: takes the batches in order and starts each case's calls
    /// when a slot is free, until the source ends, the run is interrupted
    /// or the workers stop listening.
    fn feed(
        &self,
        source: Source<'_>,
        slots: &Arc<tokio::sync::Semaphore>,
        send: &mpsc::SyncSender<Result<InFlight, EvalError>>,
    ) -> Result<(), EvalError> {
        let mut session: Option<Lent<'_>> = None;
        for work in source {
            if interrupt::requested() {
                break;
            }
            let work = work?;
            let session = match &mut session {
                Some(session) => session,
                None => session.insert(self.session()?),
            };
            let (range, planned) = self.plan(session, work)?;
            let (batch, plans) = planned.unwrap_or_else(|| (Batch::default(), Vec::new()));
            let mut flight = InFlight {
                range,
                batch,
                plans,
                calls: Vec::new(),
                workspaces: Vec::new(),
            };
            for (i, (plan, origin)) in flight.plans.iter().zip(&flight.batch.origins).enumerate() {
                if interrupt::requested() {
                    break;
                }
                // Closed when the workers stopped: nothing more is wanted,
                // and the calls of this batch will not be read.
                let Ok(slot) = crate::plugin::io::block_on(slots.clone().acquire_owned()) else {
                    flight.calls.iter().for_each(tokio::task::JoinHandle::abort);
                    return Ok(());
                };
                if interrupt::requested() {
                    break;
                }
                let workspace = case_workspace(origin, self.context.root)?;
                let requests = requests(plan, self.context, flight.batch.settings.get(i));
                let path = workspace.as_ref().map(|w| w.path().to_path_buf());
                let calls = self.calls.clone();
                let case = flight.batch.indices[i];
                flight
                    .calls
                    .push(crate::plugin::io::handle().spawn(async move {
                        // Kept by the call's task as soon as it finishes,
                        // whatever case before it is still waiting.
                        let samples = calls.samples(case, requests, path).await;
                        drop(slot);
                        samples
                    }));
                flight.workspaces.push(workspace);
            }
            let stopped = flight.calls.len() < flight.plans.len();
            if let Err(unsent) = send.send(Ok(flight)) {
                if let Ok(flight) = unsent.0 {
                    flight.calls.iter().for_each(tokio::task::JoinHandle::abort);
                }
                break;
            }
            if stopped {
                break;
            }
        }
        Ok(())
    }

    /// Collects and scores a batch whose cases ran (`runs` may be a prefix
    /// of `plans` when the run was interrupted).
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        session: &mut PresetSession,
        pool: &mut ScorerPool,
        range: Range<usize>,
        batch: Batch,
        mut plans: Vec<CasePlan>,
        (runs, first_bytes): (Vec<CaseRun>, Vec<Option<u64>>),
        workspaces: &[Option<tempfile::TempDir>],
    ) -> Result<Delivered, EvalError> {
        let validated = self.validated;
        let ran = runs.len();
        plans.truncate(ran);
        if ran == 0 {
            return Ok(Delivered {
                range,
                ran: Vec::new(),
            });
        }
        let mut bodies: Vec<String> = plans
            .iter_mut()
            .map(|p| std::mem::take(&mut p.body))
            .collect();
        if self.options.update_snapshots {
            for (k, body) in bodies.iter_mut().enumerate() {
                if let Some(snapshot) = &batch.snapshots[k]
                    && let Some(message) = snapshots::update(snapshot, &runs[k], body)?
                {
                    eprintln!("{}", crate::term::inline(&message));
                }
            }
        }
        let first = batch.indices.first().copied().unwrap_or(0);
        let (evaluations, mut verdicts): (Vec<String>, Vec<_>) = session
            .collect(&bodies, &runs, first)?
            .into_iter()
            .map(|c| (c.evaluation, c.verdict))
            .unzip();
        let mut body_checked = vec![false; verdicts.len()];
        if !validated.assertions.none_in(&batch.assertions) {
            let fixture_dir = validated
                .suite
                .file
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
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
            for ((verdict, outcomes), checked) in
                verdicts.iter_mut().zip(&outcomes).zip(&mut body_checked)
            {
                *checked = crate::eval::verdict::verdicts::apply(verdict, outcomes);
            }
        }
        let ran = evaluations
            .into_iter()
            .zip(verdicts)
            .zip(body_checked)
            .enumerate()
            .map(|(k, ((observed, mut verdict), body_checked))| {
                // The host's time to first byte, in both packets (the
                // summary's evaluation is what records and aggregates read).
                let first_byte = first_bytes.get(k).copied().flatten();
                verdict.body = with_first_byte(std::mem::take(&mut verdict.body), first_byte);
                (
                    k,
                    with_first_byte(observed, first_byte),
                    verdict,
                    body_checked,
                )
            })
            .map(|(k, observed, verdict, body_checked)| RanCase {
                index: batch.indices[k],
                observed,
                verdict,
                body_checked,
                output: self.keep_outputs.then(|| {
                    crate::eval::run::case_output::case_output(&plans[k].case_id, &runs[k])
                }),
            })
            .collect();
        Ok(Delivered { range, ran })
    }
}

/// Closes the slots when a worker's batch or the writer fails, so the
/// feeder starts no more calls for a run that is stopping.
struct CloseOnError<'a>(&'a tokio::sync::Semaphore);

impl CloseOnError<'_> {
    fn check<T>(&self, result: Result<T, EvalError>) -> Result<T, EvalError> {
        if result.is_err() {
            self.0.close();
        }
        result
    }
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
    for ((i, case), origin) in raw.indices.into_iter().zip(raw.cases).zip(raw.origins) {
        if finished.get(i).copied().unwrap_or(false) {
            continue;
        }
        if let Some(&last) = current.indices.last()
            && i != last + 1
        {
            works.push(Work::Raw(
                start..last + 1,
                std::mem::take(&mut current),
                None,
            ));
            start = last + 1;
        }
        current.indices.push(i);
        current.cases.push(case);
        current.origins.push(origin);
    }
    works.push(Work::Raw(start..range.end, current, None));
    works
}

fn cases_error(file: &Path, problems: Vec<(String, String)>) -> EvalError {
    EvalError::Cases {
        file: file.to_path_buf(),
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_cases_split_into_consecutive_runs_that_tile_the_range() {
        let raw = RawBatch::consecutive(
            10,
            (0..8)
                .map(|i| crate::fixture::SourcedCase::inline(serde_json::json!(i)))
                .collect(),
        );
        let mut finished = vec![false; 20];
        for i in [10, 13, 14, 17] {
            finished[i] = true;
        }
        let works = unfinished(raw, &finished);
        let shown: Vec<(Range<usize>, Vec<usize>)> = works
            .into_iter()
            .map(|work| match work {
                Work::Raw(range, raw, _) => (range, raw.indices),
                Work::Checked(..) => unreachable!(),
            })
            .collect();
        assert_eq!(shown, [(10..13, vec![11, 12]), (13..18, vec![15, 16])]);
    }
}
