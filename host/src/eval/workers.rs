//! Ordered parallel batches: worker threads process batches in any order,
//! each with its own state (its own plugin stores), and the calling thread
//! receives the results strictly in batch order, so records stream to disk
//! in case order while both cores work.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

/// Splits `0..len` into consecutive ranges of at most `size` items.
pub fn batches(len: usize, size: usize) -> Vec<Range<usize>> {
    let size = size.max(1);
    (0..len)
        .step_by(size)
        .map(|start| start..(start + size).min(len))
        .collect()
}

/// Lets a batch notice that the run is stopping (after another batch's
/// error), so it can return early instead of finishing work that will be
/// thrown away.
pub struct Stop<'a>(&'a AtomicBool);

impl Stop<'_> {
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Runs `work` over every batch on up to `jobs` threads and hands each result
/// to `sink` on the calling thread, in batch order.
///
/// Each thread builds its state once with `state`. The first error (from a
/// state, a batch or the sink) stops the run: workers take no new batch,
/// running batches can check [`Stop`], and that first error is returned.
/// Results already delivered stay delivered. Workers stay within a window
/// of batches ahead of the writer, so a slow batch never makes the others
/// pile up in memory.
pub fn run_ordered<S, T, E>(
    batches: &[Range<usize>],
    jobs: usize,
    state: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&mut S, Range<usize>, &Stop<'_>) -> Result<T, E> + Sync,
    mut sink: impl FnMut(Range<usize>, T) -> Result<(), E>,
) -> Result<(), E>
where
    T: Send,
    E: Send,
{
    let jobs = jobs.clamp(1, batches.len().max(1));
    let window = jobs * 4;
    let next = AtomicUsize::new(0);
    let delivered = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<E>> = Mutex::new(None);
    // The first failure wins; `stop` is set only after it is recorded.
    let fail = |error: E| {
        let mut slot = failure.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(error);
        }
        stop.store(true, Ordering::SeqCst);
    };
    let (send, receive) = mpsc::sync_channel::<(usize, T)>(window);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let send = send.clone();
            let (next, delivered, stop, state, work, fail) =
                (&next, &delivered, &stop, &state, &work, &fail);
            scope.spawn(move || {
                let mut own = match state() {
                    Ok(own) => own,
                    Err(error) => return fail(error),
                };
                while !stop.load(Ordering::SeqCst) {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(range) = batches.get(index) else {
                        break;
                    };
                    while index >= delivered.load(Ordering::SeqCst) + window {
                        if stop.load(Ordering::SeqCst) {
                            return;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    match work(&mut own, range.clone(), &Stop(stop)) {
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
        let mut pending = BTreeMap::new();
        let mut expected = 0;
        for (index, value) in receive.iter() {
            if stop.load(Ordering::SeqCst) {
                continue; // drain so no worker blocks on a full channel
            }
            pending.insert(index, value);
            while let Some(value) = pending.remove(&expected) {
                if let Err(error) = sink(batches[expected].clone(), value) {
                    fail(error);
                    break;
                }
                expected += 1;
                delivered.store(expected, Ordering::SeqCst);
            }
        }
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(error) => Err(error),
        None => Ok(()),
    }
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
        let ranges = batches(1000, 7);
        let mut seen = Vec::new();
        run_ordered::<(), _, String>(
            &ranges,
            4,
            || Ok(()),
            |_, range, _| {
                // Later batches finish first half of the time.
                if range.start % 2 == 0 {
                    std::thread::yield_now();
                }
                Ok(range.clone().collect::<Vec<_>>())
            },
            |_, items| {
                seen.extend(items);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn an_error_stops_the_run_and_is_returned() {
        let ranges = batches(100, 1);
        let mut delivered = 0;
        let result = run_ordered::<(), _, String>(
            &ranges,
            2,
            || Ok(()),
            |_, range, _| {
                if range.start == 10 {
                    Err(format!("batch {} failed", range.start))
                } else {
                    Ok(())
                }
            },
            |_, ()| {
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
    fn a_state_error_is_returned() {
        let ranges = batches(4, 1);
        let result = run_ordered::<(), (), String>(
            &ranges,
            2,
            || Err("no store".to_string()),
            |_, _, _| Ok(()),
            |_, ()| Ok(()),
        );
        assert_eq!(result, Err("no store".to_string()));
    }
}
