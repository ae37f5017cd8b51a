//! The process's I/O runtime: the tokio runtime that drives provider calls
//! (their `http` and `process` imports are async), so that many calls can
//! wait on the network at once without an OS thread each.
//!
//! Guest code runs wherever its future is polled: on the runtime's worker
//! threads for spawned case calls, or on the caller's thread for
//! [`block_on`] (a judge call, a plugin's `describe`).

use std::cell::OnceCell;
use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};

/// The runtime, built on first use with one worker thread per core.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let threads = crate::cores::available();
        Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("cautilus-io")
            .enable_all()
            .build()
            .expect("building the I/O runtime (threads and an event loop)")
    })
}

/// The runtime's handle, to spawn calls on it.
pub fn handle() -> &'static Handle {
    runtime().handle()
}

/// Runs `future` to completion on the calling thread, with the runtime's
/// timers and sockets available. Callable from any thread outside a
/// runtime, and from a worker of a multi-threaded one (which first hands
/// its other tasks away); never from inside a single-threaded runtime.
pub fn block_on<F: Future>(future: F) -> F::Output {
    match Handle::try_current() {
        Ok(current) if current.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| current.block_on(future))
        }
        _ => runtime().block_on(future),
    }
}

/// Runs `future` to completion on the calling thread's own
/// single-threaded runtime (made on the thread's first call, with timers
/// and sockets), for work that waits on nothing outside the process: a
/// provider that neither calls the network nor runs a program. A small run
/// of such work then never starts the I/O runtime's threads. Its futures
/// must not hand work to other threads that this runtime would have to
/// drive (a pooled connection would wait for this thread's next call).
/// From a worker of the I/O runtime it is [`block_on`]; like that, never
/// to be called inside a single-threaded runtime (nor nested in itself).
pub fn block_on_here<F: Future>(future: F) -> F::Output {
    thread_local! {
        static HERE: OnceCell<Runtime> = const { OnceCell::new() };
    }
    if Handle::try_current().is_ok() {
        return block_on(future);
    }
    HERE.with(|here| {
        here.get_or_init(|| {
            Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("building a thread's runtime (an event loop)")
        })
        .block_on(future)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_on_works_outside_and_inside_the_runtime() {
        assert_eq!(block_on(async { 1 }), 1);
        let nested = handle().spawn(async { block_on(async { 2 }) });
        assert_eq!(block_on(async { nested.await.unwrap() }), 2);
    }

    #[test]
    fn block_on_here_has_timers_and_nests_inside_a_runtime() {
        let slept = block_on_here(async {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            3
        });
        assert_eq!(slept, 3);
        // Twice on one thread: the same runtime serves both.
        assert_eq!(block_on_here(async { 4 }), 4);
        let nested = handle().spawn(async { block_on_here(async { 5 }) });
        assert_eq!(block_on(async { nested.await.unwrap() }), 5);
    }
}
