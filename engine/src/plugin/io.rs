//! The process's I/O runtime: the tokio runtime that drives provider calls
//! (their `http` and `process` imports are async), so that many calls can
//! wait on the network at once without an OS thread each.
//!
//! Guest code runs wherever its future is polled: on the runtime's worker
//! threads for spawned case calls, or on the caller's thread for
//! [`block_on`] (a judge call, a plugin's `describe`).

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_on_works_outside_and_inside_the_runtime() {
        assert_eq!(block_on(async { 1 }), 1);
        let nested = handle().spawn(async { block_on(async { 2 }) });
        assert_eq!(block_on(async { nested.await.unwrap() }), 2);
    }
}
