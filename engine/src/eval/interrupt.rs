//! Interrupting a run: the first SIGINT or SIGTERM asks the run to stop
//! after the cases in flight (workers take no new batch; every finished
//! case is written, the run directory says how far it got); a second one
//! exits at once (the journal still holds every case that finished, and
//! `answers.jsonl` every answer the provider gave, so `--resume` asks for
//! none of them again).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// Set by the first signal; arms the immediate exit of the second.
static ARMED: AtomicBool = AtomicBool::new(false);
/// The number of the first signal that arrived, 0 before any.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs the handlers (once per process).
pub fn install() -> std::io::Result<()> {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    for signal in [SIGINT, SIGTERM] {
        // Order matters: the exit checks the flag before this signal sets it.
        flag::register_conditional_shutdown(signal, 128 + signal, &ARMED)?;
        flag::register_usize(signal, &SIGNAL, usize::try_from(signal).unwrap_or(0))?;
        flag::register(signal, &ARMED)?;
    }
    Ok(())
}

/// True once the run was asked to stop.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// The signal that interrupted the run (`SIGINT`, `SIGTERM`).
pub fn signal_name() -> Option<&'static str> {
    match i32::try_from(SIGNAL.load(Ordering::SeqCst)).ok()? {
        0 => None,
        s if s == SIGINT => Some("SIGINT"),
        s if s == SIGTERM => Some("SIGTERM"),
        _ => Some("signal"),
    }
}

/// The conventional exit status of a process stopped by that signal
/// (130 for SIGINT, 143 for SIGTERM).
pub fn exit_status() -> u8 {
    let signal = SIGNAL.load(Ordering::SeqCst);
    u8::try_from(128 + signal).unwrap_or(130)
}

/// Runs `f`, telling the user on stderr as soon as an interruption arrives
/// what happens next (the work itself notices it between cases).
pub fn announcing<R>(f: impl FnOnce() -> R) -> R {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let announcer = scope.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                if requested() {
                    eprintln!(
                        "interrupted: finishing the cases in flight and writing every finished case; interrupt again to stop at once (`--resume` picks up from the journal and the answers already received)"
                    );
                    return;
                }
                std::thread::park_timeout(Duration::from_millis(25));
            }
        });
        let result = f();
        done.store(true, Ordering::SeqCst);
        // Woken now, so the run does not wait out its nap.
        announcer.thread().unpark();
        result
    })
}
