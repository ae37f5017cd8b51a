//! Running a program that is not trusted (a fixture's code grader, a CLI a
//! provider plugin runs through the `process` import) so that every process
//! it starts ends with its run, and the host never waits on it past its
//! timeout.
//!
//! [`run`] starts the program with a clean environment, in its own process
//! group, with stdin fed from memory and stdout/stderr captured up to a
//! limit, and returns when the program has ended: by itself, or killed at
//! its timeout (`timed_out`). What is guaranteed:
//!
//! - **Linux**: the program runs under a supervisor (`supervisor`), a
//!   child subreaper: every process the program starts stays in its reach
//!   whatever it does (background jobs, double forks, `setsid`, new process
//!   groups, its own subreapers, clone children). When the program exits,
//!   at the timeout, or when the host dies (even by SIGKILL), the
//!   supervisor kills every descendant and exits. A program that SIGKILLs or
//!   SIGSTOPs its supervisor (the only signals it cannot block) is covered
//!   by the host when it adopts orphans ([`adopt_orphans`], as the
//!   `cautilus` binary does): it then kills every process it adopts once
//!   that supervisor is reaped (at once after a SIGKILL; at the timeout
//!   after a SIGSTOP). Not covered: processes that are not descendants
//!   (a daemon the program asks to start something: `systemd-run`, an
//!   already running tmux server, `at`, a container engine), a program
//!   that kills the host itself (same user), and, in a process that does
//!   not adopt orphans, the descendants of a program that SIGKILLs its
//!   supervisor.
//! - **Other Unix (macOS)**: the program's process group is killed when
//!   the program exits and at the timeout. A descendant that leaves the
//!   group (`setsid`, `setpgid`) escapes, and nothing is killed if the host
//!   itself is killed.
//! - **Everywhere**: once the program (or its supervisor) has ended, its
//!   pipes get a short grace to reach end-of-file; a pipe an escaped
//!   process still holds is then closed, and the run returns what was read.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
mod orphans;
#[cfg(target_os = "linux")]
mod proc_walk;
mod pump;
#[cfg(target_os = "linux")]
mod supervisor;

#[cfg(target_os = "linux")]
pub use orphans::adopt_orphans;

/// Where processes cannot be adopted: nothing to do.
#[cfg(not(target_os = "linux"))]
pub fn adopt_orphans() -> std::io::Result<()> {
    Ok(())
}

/// Makes this process's memory and environment unreadable to the programs
/// it runs: they run as the same user, so without this a grader, a CLI or
/// the `exec` provider's program could read `/proc/<pid>/environ` of
/// cautilus (or of its supervisors, forks of it), every API key of the
/// operator's environment included, granted or not. A process that is not
/// dumpable has its `/proc` files owned by root and refuses `ptrace` by the
/// same user (see prctl(2), `PR_SET_DUMPABLE`); programs it starts are
/// dumpable again once they exec. No core dump is written either.
#[cfg(target_os = "linux")]
pub fn hide_from_programs() -> std::io::Result<()> {
    // SAFETY: prctl(2) with integer arguments touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Where `/proc` is not Linux's: nothing to do.
#[cfg(not(target_os = "linux"))]
pub fn hide_from_programs() -> std::io::Result<()> {
    Ok(())
}

/// How long the host waits past the timeout for a supervisor to end the
/// tree before it kills the supervisor itself (a program can stop it).
#[cfg(target_os = "linux")]
const BACKSTOP: Duration = Duration::from_secs(1);

/// A program to run.
#[derive(Debug, Clone, Copy)]
pub struct Spec<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// The program's whole environment, in order (a later value of a name
    /// wins).
    pub env: &'a [(OsString, OsString)],
    pub cwd: &'a Path,
    /// Written to stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub stdin: Option<&'a [u8]>,
    pub timeout: Duration,
    /// Most bytes kept of stdout, and of stderr.
    pub output_limit: usize,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The exit code; `None` when the program was killed by a signal.
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Some output was past the limit and dropped.
    pub truncated: bool,
}

/// Why a program could not be run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("`{0}` was not found")]
    NotFound(String),
    #[error("cannot start `{program}`: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    #[error("lost track of `{program}`: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
}

/// Runs `spec` to its end (see the module doc for what ends with it).
pub fn run(spec: &Spec<'_>) -> Result<Finished, RunError> {
    let mut command = Command::new(spec.program);
    command
        .args(spec.args)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let started = Instant::now();
    let deadline = started.checked_add(spec.timeout);
    #[cfg(target_os = "linux")]
    let (spawned, kill_at) = {
        supervisor::install(&mut command, spec.timeout);
        (
            orphans::spawn(&mut command),
            deadline.and_then(|d| d.checked_add(BACKSTOP)),
        )
    };
    #[cfg(not(target_os = "linux"))]
    let (spawned, kill_at) = (command.spawn(), deadline);
    let mut child = spawned.map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => RunError::NotFound(spec.program.to_string()),
        _ => RunError::Start {
            program: spec.program.to_string(),
            source,
        },
    })?;
    // A timeout too large for the clock never comes.
    let kill_at = kill_at.unwrap_or_else(|| started + Duration::from_secs(u64::from(u32::MAX)));
    let driven = pump::drive(&mut child, spec.stdin, kill_at, spec.output_limit, |_pid| {
        #[cfg(target_os = "linux")]
        orphans::reaped(_pid);
    })
    .map_err(|source| RunError::Wait {
        program: spec.program.to_string(),
        source,
    })?;
    // A supervisor that reached the deadline kills itself with SIGKILL.
    #[cfg(unix)]
    let killed_at_deadline = {
        use std::os::unix::process::ExitStatusExt;
        driven.status.signal() == Some(9)
            && driven.ended_at.saturating_duration_since(started) >= spec.timeout
    };
    #[cfg(not(unix))]
    let killed_at_deadline = false;
    Ok(Finished {
        status: driven.status.code(),
        timed_out: driven.killed || killed_at_deadline,
        truncated: driven.stdout.truncated || driven.stderr.truncated,
        stdout: driven.stdout.bytes,
        stderr: driven.stderr.bytes,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str, timeout_ms: u64, stdin: Option<&[u8]>) -> Finished {
        let args = vec!["-c".to_string(), script.to_string()];
        let env = [(
            OsString::from("PATH"),
            std::env::var_os("PATH").unwrap_or_default(),
        )];
        run(&Spec {
            program: "sh",
            args: &args,
            env: &env,
            cwd: Path::new("/"),
            stdin,
            timeout: Duration::from_millis(timeout_ms),
            output_limit: 1024,
        })
        .unwrap()
    }

    #[test]
    fn status_output_and_stdin_round_trip() {
        let input = vec![b'x'; 300_000];
        let finished = sh("wc -c; echo oops >&2; exit 7", 20_000, Some(&input));
        assert_eq!(finished.status, Some(7));
        assert_eq!(String::from_utf8_lossy(&finished.stdout).trim(), "300000");
        assert_eq!(finished.stderr, b"oops\n");
        assert!(!finished.timed_out && !finished.truncated);
    }

    #[test]
    fn a_program_that_ignores_its_stdin_does_not_block_the_host() {
        let input = vec![b'x'; 4 * 1024 * 1024];
        let finished = sh("exit 0", 20_000, Some(&input));
        // A host blocked writing the input would reach the 20 s limit.
        assert_eq!(finished.status, Some(0));
        assert!(!finished.timed_out, "{finished:?}");
    }

    #[test]
    fn output_past_the_limit_is_truncated() {
        let finished = sh("head -c 100000 /dev/zero", 20_000, None);
        assert_eq!(finished.stdout.len(), 1024);
        assert!(finished.truncated);
    }

    #[test]
    fn a_signal_is_no_exit_code_and_no_timeout() {
        let finished = sh("kill -9 $$", 20_000, None);
        assert_eq!(finished.status, None);
        assert!(!finished.timed_out);
        let finished = sh("kill -SEGV $$", 20_000, None);
        assert_eq!(finished.status, None);
        assert!(!finished.timed_out);
    }

    #[test]
    fn the_timeout_ends_the_program_and_its_holders() {
        let started = Instant::now();
        let finished = sh("setsid sleep 600 & sleep 600", 300, None);
        assert!(finished.timed_out, "{finished:?}");
        assert_eq!(finished.status, None);
        // Holders left alive would keep the output open for 10 minutes;
        // the bound only tells that from a finish.
        assert!(started.elapsed() < Duration::from_secs(120));
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let error = run(&Spec {
            program: "cautilus-no-such-program",
            args: &[],
            env: &[],
            cwd: Path::new("/"),
            stdin: None,
            timeout: Duration::from_secs(5),
            output_limit: 10,
        })
        .unwrap_err();
        assert!(matches!(error, RunError::NotFound(_)), "{error}");
    }
}
