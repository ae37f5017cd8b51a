//! The supervisor (Linux): a process between the host and the program that
//! outlives every process the program starts, and ends them all.
//!
//! [`install`] adds a `pre_exec` step to the command. In the child that
//! `std` forks (the supervisor to be), it makes that child a *child
//! subreaper* (`PR_SET_CHILD_SUBREAPER`) and forks again: the grandchild
//! returns from `pre_exec` and `std` execs the program in it; the child
//! stays and supervises. Every descendant of the program whose parent dies
//! (a background job, a double fork, a `setsid`) is re-parented to the
//! supervisor instead of to init, so none leaves its reach.
//!
//! The supervisor closes every descriptor it inherited (the stdio pipes, the
//! exec-error channel of `std`, any other descriptor of the host), so the host
//! sees end-of-file once the program's tree is gone. It then waits until
//!
//! - the program exits: it kills every remaining descendant, reaps them all,
//!   and exits with the program's status (re-raising its signal);
//! - the deadline passes: it kills the whole tree and then itself with
//!   SIGKILL (the host reads that, at or after the deadline, as a timeout);
//! - the host goes away (its parent changes; a parent-death signal wakes it
//!   at once): it kills the whole tree and exits.
//!
//! It blocks every signal it can (the program may signal its parent); only
//! SIGKILL and SIGSTOP reach it, and the host covers those cases
//! (`super::orphans`). It is not dumpable, so a program running as the same
//! unprivileged user cannot ptrace it.
//!
//! Everything after the first fork runs in a copy of a multi-threaded
//! process: only async-signal-safe system calls, no allocation, no lock, no
//! panic (see `proc_walk`).

use std::ffi::{c_int, c_ulong};
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use super::proc_walk;

/// Longest sleep of the supervisor between looks at its parent (a
/// parent-death signal usually wakes it first).
const TICK_NS: i64 = 50_000_000;
/// Sleep between rounds of killing while descendants are still dying.
const REAP_TICK_NS: i64 = 5_000_000;

/// Makes `command` run under a supervisor that ends the program's whole
/// tree when it exits, at `timeout` from now, or when this process dies.
pub(super) fn install(command: &mut Command, timeout: Duration) {
    // SAFETY: getpid(2) has no preconditions.
    let host = unsafe { libc::getpid() };
    let deadline = add(monotonic(), timeout);
    // SAFETY: `split` only makes async-signal-safe system calls and
    // allocates nothing (see the module doc).
    unsafe {
        command.pre_exec(move || split(host, deadline));
    }
}

/// Runs in the forked child: forks the program, and supervises it.
fn split(host: libc::pid_t, deadline: libc::timespec) -> io::Result<()> {
    // SAFETY: prctl, sigfillset, pthread_sigmask and fork are
    // async-signal-safe system calls on memory we own.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as c_ulong, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        // Blocked before the fork, so no handler of the host's runs in the
        // supervisor; the program gets its mask back.
        let mut all = empty_set();
        libc::sigfillset(&mut all);
        let mut before = empty_set();
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        let program = libc::fork();
        if program < 0 {
            let error = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
            return Err(error);
        }
        if program == 0 {
            libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
            return Ok(());
        }
        supervise(host, program, deadline)
    }
}

/// The supervisor's whole life; never returns.
///
/// # Safety
/// Only in the forked child, after `split` blocked every signal.
unsafe fn supervise(host: libc::pid_t, program: libc::pid_t, deadline: libc::timespec) -> ! {
    // SAFETY: async-signal-safe system calls on memory we own.
    unsafe {
        close_every_descriptor();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP as c_ulong, 0, 0, 0);
        libc::prctl(libc::PR_SET_DUMPABLE, 0 as c_ulong, 0, 0, 0);
        // Children must stay waitable whatever the host did with SIGCHLD.
        set_default(libc::SIGCHLD);
        let mut wake = empty_set();
        libc::sigaddset(&mut wake, libc::SIGCHLD);
        libc::sigaddset(&mut wake, libc::SIGHUP);
        let mut status = None;
        let mut timed_out = false;
        loop {
            // Orphans that exit while the program runs are reaped here too.
            reap(program, &mut status);
            if status.is_some() || libc::getppid() != host {
                break;
            }
            let left = nanos_until(deadline);
            if left <= 0 {
                timed_out = true;
                break;
            }
            let sleep = timespec_of(left.min(TICK_NS));
            libc::sigtimedwait(&wake, std::ptr::null_mut(), &sleep);
        }
        end_every_descendant(program, &mut status);
        if timed_out {
            die_by(libc::SIGKILL);
        }
        match status {
            Some(status) if libc::WIFEXITED(status) => libc::_exit(libc::WEXITSTATUS(status)),
            Some(status) if libc::WIFSIGNALED(status) => die_by(libc::WTERMSIG(status)),
            _ => libc::_exit(1),
        }
    }
}

/// Kills every descendant, round after round, until none is left, reaping
/// them all (and recording the program's status if it is among them).
fn end_every_descendant(program: libc::pid_t, status: &mut Option<c_int>) {
    // SAFETY: getpid(2) has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut child_exit = empty_set();
    // SAFETY: sigaddset on a set we own.
    unsafe {
        libc::sigaddset(&mut child_exit, libc::SIGCHLD);
    }
    loop {
        proc_walk::kill_descendants(me, |_| false);
        if reap(program, status) {
            return;
        }
        let sleep = timespec_of(REAP_TICK_NS);
        // SAFETY: sigtimedwait(2) on a set and a timespec we own.
        unsafe {
            libc::sigtimedwait(&child_exit, std::ptr::null_mut(), &sleep);
        }
    }
}

/// Reaps every child that has ended (clone children too: `__WALL`); true
/// when no child is left.
fn reap(program: libc::pid_t, status: &mut Option<c_int>) -> bool {
    loop {
        let mut raw = 0;
        // SAFETY: waitpid(2) writes only `raw`.
        let pid = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG | libc::__WALL) };
        if pid > 0 {
            if pid == program {
                *status = Some(raw);
            }
            continue;
        }
        if pid == 0 {
            return false;
        }
        if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return true;
    }
}

/// Ends the supervisor by `signal`, as the program ended (no core file).
fn die_by(signal: c_int) -> ! {
    // SAFETY: async-signal-safe system calls on memory we own.
    unsafe {
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        set_default(signal);
        let mut only = empty_set();
        libc::sigaddset(&mut only, signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
    }
}

/// Closes every descriptor (close_range(2), or one by one before Linux 5.9).
fn close_every_descriptor() {
    // SAFETY: closing descriptors of this (forked, single-threaded) process
    // invalidates no memory; nothing here uses them afterwards.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) == 0 {
            return;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let highest = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20)
        } else {
            1 << 16
        };
        for fd in 0..highest {
            libc::close(c_int::try_from(fd).unwrap_or(c_int::MAX));
        }
    }
}

fn set_default(signal: c_int) {
    // SAFETY: sigaction(2) with a zeroed action (SIG_DFL, empty mask).
    unsafe {
        let mut action: libc::sigaction = MaybeUninit::zeroed().assume_init();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

fn empty_set() -> libc::sigset_t {
    // SAFETY: an all-zero sigset_t is a valid value; sigemptyset makes it
    // the empty set whatever the representation.
    unsafe {
        let mut set: libc::sigset_t = MaybeUninit::zeroed().assume_init();
        libc::sigemptyset(&mut set);
        set
    }
}

fn monotonic() -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) writes only `now`.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
    }
    now
}

/// `at` plus `duration`, saturating.
fn add(at: libc::timespec, duration: Duration) -> libc::timespec {
    let seconds = i64::try_from(duration.as_secs()).unwrap_or(i64::MAX / 2);
    let mut sum = libc::timespec {
        tv_sec: at.tv_sec.saturating_add(seconds),
        tv_nsec: at.tv_nsec + i64::from(duration.subsec_nanos()),
    };
    if sum.tv_nsec >= 1_000_000_000 {
        sum.tv_nsec -= 1_000_000_000;
        sum.tv_sec = sum.tv_sec.saturating_add(1);
    }
    sum
}

/// Nanoseconds from now until `deadline` (negative once it passed),
/// saturating.
fn nanos_until(deadline: libc::timespec) -> i64 {
    let now = monotonic();
    deadline
        .tv_sec
        .saturating_sub(now.tv_sec)
        .saturating_mul(1_000_000_000)
        .saturating_add(deadline.tv_nsec - now.tv_nsec)
}

fn timespec_of(nanos: i64) -> libc::timespec {
    libc::timespec {
        tv_sec: nanos / 1_000_000_000,
        tv_nsec: nanos % 1_000_000_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_saturate_instead_of_wrapping() {
        let now = monotonic();
        let far = add(now, Duration::from_millis(u64::MAX));
        assert!(far.tv_sec > now.tv_sec);
        assert!(nanos_until(far) > 0, "a huge timeout is not already past");
        let soon = add(now, Duration::from_nanos(1_999_999_999));
        assert!(soon.tv_nsec < 1_000_000_000);
        assert!(nanos_until(soon) <= 2_000_000_000);
        let past = add(now, Duration::ZERO);
        assert!(nanos_until(past) <= 0);
        let tick = timespec_of(TICK_NS);
        assert_eq!((tick.tv_sec, tick.tv_nsec), (0, TICK_NS));
    }
}
