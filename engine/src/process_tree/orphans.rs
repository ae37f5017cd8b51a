//! The host's side of containment on Linux: the backstop for the two
//! signals a supervisor cannot block.
//!
//! A program may SIGKILL its supervisor (its parent, same user), or SIGSTOP
//! it and leave the host to kill it at the deadline. Either way the
//! supervisor's remaining descendants are re-parented: to init, unless the
//! host is itself a child subreaper. A process that calls
//! [`adopt_orphans`] becomes one; from then on, every time a supervisor is
//! reaped, the host kills every child of its own that is not a live
//! supervisor (with that child's descendants) and reaps it.
//!
//! That is only sound in a process whose every child is started through
//! this module, since any other child would be taken for an orphan: the
//! `cautilus` binary (it starts no other process while it runs programs),
//! not a test binary or a library user with children of its own. Spawning
//! and sweeping take the same lock, so a supervisor being started is never
//! mistaken for an orphan.

use std::io;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::proc_walk;

/// Whether this process adopts and ends orphans.
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// The supervisors started and not yet reaped.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());
/// Longest time one sweep keeps killing (each round kills every adopted
/// process it sees; a tree still growing after that is left for the next
/// sweep).
const SWEEP_BOUND: Duration = Duration::from_secs(2);

/// Makes this process the subreaper of every process its runs start, and
/// ends the orphans it adopts after each run. Call it only in a process
/// whose every child is started by [`super::run`] (the `cautilus` binary
/// does, first thing).
pub fn adopt_orphans() -> io::Result<()> {
    // SAFETY: prctl(2) with an integer argument touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    ADOPTING.store(true, Ordering::SeqCst);
    Ok(())
}

fn live() -> MutexGuard<'static, Vec<i32>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Spawns a supervised command and records its supervisor as live.
pub(super) fn spawn(command: &mut Command) -> io::Result<Child> {
    let mut live = live();
    let child = command.spawn()?;
    live.push(i32::try_from(child.id()).unwrap_or(i32::MAX));
    Ok(child)
}

/// After a supervisor was reaped: forgets it and, in a process that adopts
/// orphans, ends every one it adopted.
pub(super) fn reaped(pid: u32) {
    let mut live = live();
    if let Some(at) = live.iter().position(|p| u32::try_from(*p) == Ok(pid)) {
        live.swap_remove(at);
    }
    if ADOPTING.load(Ordering::SeqCst) {
        sweep(&live);
    }
}

/// Kills and reaps every child of this process that is not a live
/// supervisor, with all its descendants.
fn sweep(live: &[i32]) {
    // SAFETY: getpid(2) has no preconditions.
    let me = unsafe { libc::getpid() };
    let give_up = Instant::now() + SWEEP_BOUND;
    loop {
        let mut adopted = Vec::new();
        proc_walk::for_each_child(me, |pid| {
            if !live.contains(&pid) && !adopted.contains(&pid) {
                adopted.push(pid);
            }
        });
        if adopted.is_empty() {
            return;
        }
        proc_walk::kill_descendants(me, |pid| live.contains(&pid));
        let mut reaped_one = false;
        for pid in adopted {
            let mut status = 0;
            // SAFETY: waitpid(2) on a child that is not a live supervisor
            // (no `Child` of ours waits for it); writes only `status`.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG | libc::__WALL) } > 0 {
                reaped_one = true;
            }
        }
        if Instant::now() >= give_up {
            return;
        }
        if !reaped_one {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
