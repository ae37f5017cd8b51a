//! Ordered parallel batches: worker threads process batches in any order,
//! each with its own state (its own plugin stores), and the calling thread
//! receives the results strictly in batch order, so records stream to disk
//! in case order while both cores work.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, mpsc};
use std::time::Duration;

/// Splits `0..len` into consecutive ranges of at most `size` items.
pub fn batches(len: usize, size: usize) -> Vec<Range<usize>> {
    let size = size.max(1);
    (0..len)
        .step_by(size)
        .map(|start| start..(start + size).min(len))
        .collect()
}

/// Lets a batch notice that the run is stopping: after another batch's
/// error (its work will be thrown away) or because the user interrupted
/// the run (its finished cases are kept).
pub struct Stop<'a> {
    failed: &'a AtomicBool,
    interrupted: &'a (dyn Fn() -> bool + Sync),
}

impl Stop<'_> {
    /// Another batch failed: stop, nothing of this batch will be kept.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// The run was interrupted: finish the case in hand and return what is
    /// done.
    pub fn interrupted(&self) -> bool {
        (self.interrupted)()
    }
}

/// Sets the stop flag if its thread unwinds, and wakes the workers
/// waiting for the writer.
struct PanicStops<'a>(&'a AtomicBool, &'a Window);

impl Drop for PanicStops<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
            self.1.moved();
        }
    }
}

/// A [`Stop`] that never fires (for callers that run one batch by hand).
pub fn never() -> &'static (dyn Fn() -> bool + Sync) {
    &|| false
}

/// Runs `work` over every batch `source` yields, on up to `jobs` threads,
/// and hands each result to `sink` on the calling thread, in the order the
/// batches were taken from `source`.
///
/// Batches are pulled lazily, so a source can stream a suite of any size.
/// Each thread builds its state once with `state`, when it takes its first
/// batch (a thread that takes none builds nothing). The first error (from
/// the source, a state, a batch or the sink) stops the run: workers take no
/// new batch, running batches can check [`Stop::failed`], and that first
/// error is returned. Results already delivered stay delivered. When
/// `interrupted()` turns true, workers take no new batch, and every batch
/// already taken is still worked (it can return early with what it
/// finished) and delivered, so nothing that finished is lost. Workers stay
/// within a window of batches ahead of the writer, so a slow batch never
/// makes the others pile up in memory.
///
/// A source of one batch is worked on the calling thread: there is nothing
/// to overlap, and a thread (with its plugin instances) would cost more
/// than a small suite takes to run.
pub fn run_ordered<B, S, T, E>(
    source: impl Iterator<Item = Result<B, E>> + Send,
    jobs: usize,
    interrupted: &(dyn Fn() -> bool + Sync),
    state: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&mut S, B, &Stop<'_>) -> Result<T, E> + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E>
where
    B: Send,
    T: Send,
    E: Send,
{
    if interrupted() {
        return Ok(()); // as a worker would: no batch is taken
    }
    let mut source = source.peekable();
    let first = match source.next() {
        None => return Ok(()),
        Some(Err(error)) => return Err(error),
        Some(Ok(first)) => first,
    };
    if source.peek().is_none() {
        let failed = AtomicBool::new(false);
        let halt = Stop {
            failed: &failed,
            interrupted,
        };
        let mut own = state()?;
        return sink(work(&mut own, first, &halt)?);
    }
    run_ordered_on_workers(
        std::iter::once(Ok(first)).chain(source),
        jobs,
        interrupted,
        state,
        work,
        sink,
    )
}

/// [`run_ordered`] always on `jobs` worker threads, the calling thread
/// delivering: for a source that another thread feeds as its work gets
/// under way (a look at the second batch before working the first would
/// hold back the first delivery until the second is fed), and for a
/// source of more than one batch.
pub fn run_ordered_on_workers<B, S, T, E>(
    source: impl Iterator<Item = Result<B, E>> + Send,
    jobs: usize,
    interrupted: &(dyn Fn() -> bool + Sync),
    state: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&mut S, B, &Stop<'_>) -> Result<T, E> + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E>
where
    B: Send,
    T: Send,
    E: Send,
{
    let upper = source.size_hint().1.unwrap_or(usize::MAX);
    let jobs = jobs.clamp(1, upper.max(1));
    let window = jobs * 4;
    let source = Mutex::new((0usize, source));
    let delivered = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<E>> = Mutex::new(None);
    let ahead = Window::default();
    // The first failure wins; `stop` is set only after it is recorded.
    let fail = |error: E| {
        let mut slot = failure.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(error);
        }
        stop.store(true, Ordering::SeqCst);
        ahead.moved();
    };
    let (send, receive) = mpsc::sync_channel::<(usize, T)>(window);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let send = send.clone();
            let (source, delivered, stop, state, work, fail, ahead) =
                (&source, &delivered, &stop, &state, &work, &fail, &ahead);
            scope.spawn(move || {
                // A panicking batch never delivers: stop the others instead
                // of letting them wait for it (the scope re-raises the panic).
                let _guard = PanicStops(stop, ahead);
                // Made when the first batch is taken: a worker that finds
                // none (a suite of fewer batches than workers) makes no
                // plugin instance for nothing.
                let mut own = None;
                let halt = Stop {
                    failed: stop,
                    interrupted,
                };
                while !stop.load(Ordering::SeqCst) && !interrupted() {
                    let (index, batch) = {
                        let mut source = source.lock().unwrap_or_else(|p| p.into_inner());
                        let (next, batches) = &mut *source;
                        match batches.next() {
                            None => break,
                            Some(Err(error)) => return fail(error),
                            Some(Ok(batch)) => {
                                *next += 1;
                                (*next - 1, batch)
                            }
                        }
                    };
                    if index >= delivered.load(Ordering::SeqCst) + window {
                        let mut waiting = ahead.enter();
                        while index >= delivered.load(Ordering::SeqCst) + window {
                            if stop.load(Ordering::SeqCst) {
                                return ahead.leave(waiting);
                            }
                            if interrupted() {
                                break; // the batch is taken: work it (briefly) and deliver it
                            }
                            waiting = ahead.wait(waiting);
                        }
                        ahead.leave(waiting);
                    }
                    let own = match &mut own {
                        Some(own) => own,
                        None => match state() {
                            Ok(made) => own.insert(made),
                            Err(error) => return fail(error),
                        },
                    };
                    match work(own, batch, &halt) {
                        Ok(value) => {
                            if send.send((index, value)).is_err() {
                                break;
                            }
                        }
                        Err(error) => return fail(error),
                    }
                }
            });
        }
        drop(send);
        // A writer that unwinds stops the workers, and drops the receiver
        // (moved in here) so none stays blocked sending to it.
        let receive = receive;
        let _guard = PanicStops(&stop, &ahead);
        let mut pending = BTreeMap::new();
        let mut expected = 0;
        for (index, value) in receive.iter() {
            if stop.load(Ordering::SeqCst) {
                continue; // drain so no worker blocks on a full channel
            }
            pending.insert(index, value);
            while let Some(value) = pending.remove(&expected) {
                if let Err(error) = sink(value) {
                    fail(error);
                    break;
                }
                expected += 1;
                delivered.store(expected, Ordering::SeqCst);
            }
            ahead.moved();
        }
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// Where workers that ran a window ahead of the writer wait for it to
/// catch up: woken when it delivers (or the run stops), and every few
/// milliseconds to look at the interruption flag, which nothing signals.
#[derive(Default)]
struct Window {
    lock: Mutex<()>,
    moved: Condvar,
    /// Workers inside [`Window::enter`]: the writer signals only then.
    waiters: AtomicUsize,
}

impl Window {
    fn enter(&self) -> MutexGuard<'_, ()> {
        let guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.waiters.fetch_add(1, Ordering::SeqCst);
        guard
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, ()>) -> MutexGuard<'a, ()> {
        self.moved
            .wait_timeout(guard, Duration::from_millis(20))
            .map_or_else(|p| p.into_inner().0, |(guard, _)| guard)
    }

    fn leave(&self, guard: MutexGuard<'_, ()>) {
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
    }

    /// The writer delivered, or the run stops. A waiter checks its
    /// condition holding the lock, so taking it here before signalling
    /// means no waiter misses this.
    fn moved(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()));
            self.moved.notify_all();
        }
    }
}

/// The batches of `0..len` (at most `size` items each) as a source for
/// [`run_ordered`].
pub fn ranges<E>(len: usize, size: usize) -> impl Iterator<Item = Result<Range<usize>, E>> + Send {
    batches(len, size).into_iter().map(Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_everything_once() {
        assert_eq!(batches(5, 2), vec![0..2, 2..4, 4..5]);
        assert_eq!(batches(0, 3), Vec::<Range<usize>>::new());
        assert_eq!(batches(3, 0), vec![0..1, 1..2, 2..3]);
    }

    #[test]
    fn results_arrive_in_batch_order() {
        let mut seen = Vec::new();
        run_ordered::<_, (), _, String>(
            ranges(1000, 7),
            4,
            never(),
            || Ok(()),
            |_, range, _| {
                // Later batches finish first half of the time.
                if range.start % 2 == 0 {
                    std::thread::yield_now();
                }
                Ok(range.clone().collect::<Vec<_>>())
            },
            |items| {
                seen.extend(items);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn an_error_stops_the_run_and_is_returned() {
        let mut delivered = 0;
        let result = run_ordered::<_, (), _, String>(
            ranges(100, 1),
            2,
            never(),
            || Ok(()),
            |_, range, _| {
                if range.start == 10 {
                    Err(format!("batch {} failed", range.start))
                } else {
                    Ok(())
                }
            },
            |()| {
                delivered += 1;
                Ok(())
            },
        );
        assert_eq!(result, Err("batch 10 failed".to_string()));
        assert!(
            delivered <= 10,
            "nothing after the failed batch is delivered"
        );
    }

    #[test]
    fn a_worker_that_takes_no_batch_builds_no_state() {
        // A source of unknown length: every worker starts, two batches exist.
        let mut left = 2;
        let source = std::iter::from_fn(move || {
            (left > 0).then(|| {
                left -= 1;
                Ok::<_, String>(0..1)
            })
        });
        assert_eq!(source.size_hint().1, None);
        let built = AtomicUsize::new(0);
        let mut delivered = 0;
        run_ordered(
            source,
            4,
            never(),
            || {
                built.fetch_add(1, Ordering::SeqCst);
                Ok(())
            },
            |_, range, _| Ok(range.len()),
            |n| {
                delivered += n;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(delivered, 2);
        // Four workers making theirs at start would make four; one or two
        // take the batches.
        assert!(
            built.load(Ordering::SeqCst) <= 2,
            "two of four workers at most"
        );
    }

    #[test]
    fn a_source_of_one_batch_is_worked_on_the_calling_thread() {
        let caller = std::thread::current().id();
        for source in [ranges::<String>(5, 8).collect::<Vec<_>>(), vec![Ok(0..1)]] {
            let mut seen = Vec::new();
            run_ordered(
                source.into_iter(),
                4,
                never(),
                || {
                    assert_eq!(std::thread::current().id(), caller, "state made here");
                    Ok(())
                },
                |_, range, _| {
                    assert_eq!(std::thread::current().id(), caller, "worked here");
                    Ok(range)
                },
                |range| {
                    seen.push(range);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(seen.len(), 1);
        }
        // Two batches go to the workers, in order.
        let mut seen = Vec::new();
        run_ordered(
            ranges::<String>(2, 1),
            2,
            never(),
            || Ok(()),
            |_, range, _| {
                assert_ne!(std::thread::current().id(), caller, "on a worker");
                Ok(range.start)
            },
            |start| {
                seen.push(start);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, vec![0, 1]);
    }

    #[test]
    fn a_fed_source_delivers_its_first_batch_before_the_second_is_fed() {
        // The feeder sends batch 1 only once batch 0 is delivered: a look
        // at the second batch before working the first would wait forever.
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let (send, receive) = mpsc::sync_channel::<Result<usize, String>>(4);
            let (delivered, seen_first) = mpsc::channel::<usize>();
            let feeder = std::thread::spawn(move || {
                send.send(Ok(0)).unwrap();
                if seen_first.recv_timeout(Duration::from_secs(600)).is_ok() {
                    send.send(Ok(1)).unwrap();
                }
            });
            let mut seen = Vec::new();
            let result = run_ordered_on_workers(
                receive.into_iter(),
                2,
                never(),
                || Ok(()),
                |_, batch, _| Ok(batch),
                |batch| {
                    seen.push(batch);
                    let _ = delivered.send(batch);
                    Ok(())
                },
            );
            feeder.join().unwrap();
            let _ = done.send((result, seen));
        });
        let (result, seen) = finished
            .recv_timeout(Duration::from_secs(600))
            .expect("the first batch was held back until the second was fed");
        assert_eq!(result, Ok(()));
        assert_eq!(seen, vec![0, 1]);
    }

    #[test]
    fn a_single_batch_keeps_the_errors_and_the_interruption_of_the_workers() {
        // The source's error.
        let failing = vec![Err::<Range<usize>, _>("unreadable".to_string())];
        let result = run_ordered(
            failing.into_iter(),
            2,
            never(),
            || Ok(()),
            |_, _, _| Ok(()),
            |()| Ok(()),
        );
        assert_eq!(result, Err("unreadable".to_string()));
        // The state's, a batch's and the sink's, with one batch and with
        // several (on the workers).
        for step in ["state", "work", "sink"] {
            for batches in [1, 4] {
                assert_eq!(
                    failing_at(batches, step),
                    Err(format!("{step} failed")),
                    "{batches} batch(es)"
                );
            }
        }
        // Interrupted before it starts: nothing is taken or made.
        let made = AtomicUsize::new(0);
        run_ordered::<_, (), (), String>(
            ranges(1, 1),
            2,
            &|| true,
            || {
                made.fetch_add(1, Ordering::SeqCst);
                Ok(())
            },
            |_, _, _| Ok(()),
            |()| Ok(()),
        )
        .unwrap();
        assert_eq!(made.load(Ordering::SeqCst), 0);
    }

    /// Runs `batches` batches on two workers, `step` failing each time.
    fn failing_at(batches: usize, step: &str) -> Result<(), String> {
        let fail = |at: &str| {
            if step == at {
                Err(format!("{at} failed"))
            } else {
                Ok(())
            }
        };
        run_ordered(
            ranges(batches, 1),
            2,
            never(),
            || fail("state"),
            |_, _, _| fail("work"),
            |()| fail("sink"),
        )
    }

    #[test]
    fn an_interruption_delivers_every_batch_taken_and_no_other() {
        // Batch 3 interrupts the run while batches after it may be taken.
        let flag = AtomicBool::new(false);
        let interrupted = || flag.load(Ordering::SeqCst);
        let mut seen: Vec<(usize, bool)> = Vec::new();
        run_ordered::<_, (), _, String>(
            ranges(1000, 10),
            2,
            &interrupted,
            || Ok(()),
            |_, range, stop| {
                if range.start == 30 {
                    flag.store(true, Ordering::SeqCst);
                }
                Ok((range.start, stop.interrupted()))
            },
            |item| {
                seen.push(item);
                Ok(())
            },
        )
        .unwrap();
        let starts: Vec<usize> = seen.iter().map(|(s, _)| *s).collect();
        let expected: Vec<usize> = (0..starts.len()).map(|i| i * 10).collect();
        assert_eq!(starts, expected, "delivered in order without gaps");
        assert!(starts.contains(&30), "the interrupting batch is delivered");
        assert!(
            starts.len() < 100,
            "the run stopped early: {}",
            starts.len()
        );
    }

    #[test]
    fn a_writer_that_panics_stops_the_workers_instead_of_hanging() {
        // Workers a window ahead wait for the writer, and others block
        // sending to it: its panic must release both, then surface.
        let caught = std::panic::catch_unwind(|| {
            run_ordered::<_, (), _, String>(
                ranges(10_000, 1),
                4,
                never(),
                || Ok(()),
                |_, range, _| Ok(range.start),
                |start| {
                    assert!(start < 50, "the writer gives up at batch 50");
                    Ok(())
                },
            )
        });
        assert!(caught.is_err(), "the writer's panic is raised again");
    }

    #[test]
    fn a_worker_that_panics_stops_the_workers_waiting_for_the_writer() {
        // Run on its own thread: if the waiting workers were never woken the
        // run would hang, and the watchdog turns that into a failure. Its
        // bound only tells a hang from a finish (a panic hook that prints a
        // backtrace of this debug binary alone can take seconds), so it is
        // no timing.
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let caught = std::panic::catch_unwind(|| {
                run_ordered::<_, (), _, String>(
                    ranges(10_000, 1),
                    4,
                    never(),
                    || Ok(()),
                    |_, range, _| {
                        // Batch 0 holds the writer back until the others wait.
                        if range.start == 0 {
                            std::thread::sleep(std::time::Duration::from_millis(50));
                            panic!("batch 0 fails");
                        }
                        Ok(range.start)
                    },
                    |_| Ok(()),
                )
            });
            let _ = done.send(caught.is_err());
        });
        let raised = finished
            .recv_timeout(Duration::from_secs(600))
            .expect("the run hung: the workers waiting for the writer were never woken");
        assert!(raised, "the worker's panic is raised again");
    }
}
