//! Feeding a started child its input and collecting its output until it
//! ends, on one thread, never waiting unboundedly for a pipe.
//!
//! On Unix one `poll(2)` loop writes stdin, reads stdout and stderr (keeping
//! at most a limit of each, reading on past it so the child never blocks),
//! and watches the child: through a pidfd on Linux (it wakes the loop the
//! moment the child exits), otherwise by looking every few milliseconds.
//! Once the child has exited (or was killed at `kill_at`), the pipes get a
//! short grace to deliver what is left and reach end-of-file; a pipe that
//! some escaped process still holds open is then closed and what was read
//! is returned. Elsewhere, threads read the pipes, with the same grace.

use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// How long the pipes may stay open once the child has ended.
pub(super) const GRACE: Duration = Duration::from_millis(250);

/// What one stream delivered.
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

impl Captured {
    fn keep(&mut self, chunk: &[u8], limit: usize) {
        let room = limit.saturating_sub(self.bytes.len());
        if chunk.len() > room {
            self.truncated = true;
        }
        self.bytes
            .extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
}

/// How a child ended.
#[derive(Debug)]
pub(super) struct Driven {
    pub status: ExitStatus,
    /// The host killed the child at `kill_at`.
    pub killed: bool,
    /// When the child's end was seen.
    pub ended_at: Instant,
    pub stdout: Captured,
    pub stderr: Captured,
}

#[cfg(unix)]
pub(super) use unix::drive;

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io::{self, Read, Write};
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::process::Child;
    use std::time::{Duration, Instant};

    use super::{Captured, Driven, GRACE};

    /// How often the child is looked at when no pidfd wakes the loop.
    const TICK: Duration = Duration::from_millis(5);
    /// Most bytes written to stdin at once.
    const WRITE_CHUNK: usize = 64 * 1024;

    /// Drives `child` (spawned with piped stdout and stderr, and piped
    /// stdin when `input` is given) until it ends and its pipes are done,
    /// killing it and its process group at `kill_at`. `ended` runs once
    /// the child is reaped.
    pub(in super::super) fn drive(
        child: &mut Child,
        input: Option<&[u8]>,
        kill_at: Instant,
        limit: usize,
        ended: impl FnOnce(u32),
    ) -> io::Result<Driven> {
        let pid = child.id();
        let raw_pid = libc::pid_t::try_from(pid).unwrap_or(libc::pid_t::MAX);
        let mut stdin = child.stdin.take().map(|s| File::from(OwnedFd::from(s)));
        let mut outputs = [
            child.stdout.take().map(|s| File::from(OwnedFd::from(s))),
            child.stderr.take().map(|s| File::from(OwnedFd::from(s))),
        ];
        for file in stdin.iter().chain(outputs.iter().flatten()) {
            set_nonblocking(file)?;
        }
        let input = input.unwrap_or_default();
        let mut written = 0;
        let mut captured = [Captured::default(), Captured::default()];
        let mut watch = pidfd(raw_pid);
        let mut end: Option<(std::process::ExitStatus, bool, Instant)> = None;
        let mut ended = Some(ended);
        loop {
            let now = Instant::now();
            if end.is_none() {
                let exited = has_exited(raw_pid);
                let kill = !exited && now >= kill_at;
                if exited || kill {
                    // The group first, while the child is unreaped and its
                    // pid (the group's id) cannot be reused.
                    // SAFETY: kill(2) touches no memory of ours.
                    unsafe {
                        if kill {
                            libc::kill(raw_pid, libc::SIGKILL);
                        }
                        libc::kill(-raw_pid, libc::SIGKILL);
                    }
                    let status = child.wait()?;
                    if let Some(ended) = ended.take() {
                        ended(pid);
                    }
                    end = Some((status, kill, Instant::now()));
                    stdin = None;
                    watch = None;
                    continue;
                }
            }
            if let Some((status, killed, ended_at)) = end
                && (outputs.iter().all(Option::is_none) || now >= ended_at + GRACE)
            {
                let [stdout, stderr] = captured;
                return Ok(Driven {
                    status,
                    killed,
                    ended_at,
                    stdout,
                    stderr,
                });
            }
            let wait = match end {
                Some((_, _, ended_at)) => (ended_at + GRACE).saturating_duration_since(now),
                None if watch.is_some() => kill_at.saturating_duration_since(now),
                None => kill_at.saturating_duration_since(now).min(TICK),
            };
            if written >= input.len() {
                stdin = None;
            }
            let mut fds = Vec::with_capacity(4);
            let mut roles = Vec::with_capacity(4);
            if let Some(file) = &stdin {
                fds.push(poll_fd(file.as_raw_fd(), libc::POLLOUT));
                roles.push(Role::Stdin);
            }
            for (index, file) in outputs.iter().enumerate() {
                if let Some(file) = file {
                    fds.push(poll_fd(file.as_raw_fd(), libc::POLLIN));
                    roles.push(Role::Output(index));
                }
            }
            if let Some(fd) = &watch {
                fds.push(poll_fd(fd.as_raw_fd(), libc::POLLIN));
                roles.push(Role::Child);
            }
            poll(&mut fds, wait)?;
            for (fd, role) in fds.iter().zip(&roles) {
                if fd.revents == 0 {
                    continue;
                }
                match role {
                    Role::Stdin => {
                        if let Some(file) = &mut stdin {
                            let chunk = &input[written..input.len().min(written + WRITE_CHUNK)];
                            match file.write(chunk) {
                                Ok(n) => written += n,
                                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                                // The child closed its stdin: the rest is
                                // not wanted.
                                Err(_) => written = input.len(),
                            }
                        }
                    }
                    Role::Output(index) => {
                        if drain(&mut outputs[*index], &mut captured[*index], limit) {
                            outputs[*index] = None;
                        }
                    }
                    Role::Child => {}
                }
            }
        }
    }

    enum Role {
        Stdin,
        Output(usize),
        Child,
    }

    /// Reads what is available; true at end-of-file (or a read error).
    fn drain(file: &mut Option<File>, into: &mut Captured, limit: usize) -> bool {
        let Some(file) = file else { return true };
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match file.read(&mut chunk) {
                Ok(0) => return true,
                Ok(n) => into.keep(&chunk[..n], limit),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }

    fn poll_fd(fd: i32, events: libc::c_short) -> libc::pollfd {
        libc::pollfd {
            fd,
            events,
            revents: 0,
        }
    }

    fn poll(fds: &mut [libc::pollfd], wait: Duration) -> io::Result<()> {
        // Rounded up, so a wait of a few microseconds is not a busy loop.
        let millis = wait.as_micros().div_ceil(1000);
        let millis = libc::c_int::try_from(millis).unwrap_or(libc::c_int::MAX);
        let count = libc::nfds_t::try_from(fds.len()).unwrap_or(0);
        // SAFETY: poll(2) reads and writes `count` pollfd entries of `fds`.
        let result = unsafe { libc::poll(fds.as_mut_ptr(), count, millis) };
        if result < 0 {
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
        Ok(())
    }

    fn set_nonblocking(file: &File) -> io::Result<()> {
        let fd = file.as_raw_fd();
        // SAFETY: fcntl(2) on a descriptor we own.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Whether the child has exited, without reaping it (so its pid stays
    /// its own while its group is killed).
    fn has_exited(pid: libc::pid_t) -> bool {
        // SAFETY: a zeroed siginfo_t is valid; waitid(2) writes only it.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let id = libc::id_t::try_from(pid).unwrap_or(0);
            let result = libc::waitid(
                libc::P_PID,
                id,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            // An error (none is expected) counts as an end, so the loop
            // reaps the child rather than waiting forever.
            result != 0 || info.si_pid() != 0
        }
    }

    /// A descriptor that becomes readable when the child exits (Linux 5.3).
    #[cfg(target_os = "linux")]
    fn pidfd(pid: libc::pid_t) -> Option<OwnedFd> {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open(2) returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
        // SAFETY: the descriptor is new and ours alone.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    #[cfg(not(target_os = "linux"))]
    fn pidfd(_pid: libc::pid_t) -> Option<OwnedFd> {
        None
    }
}

/// Elsewhere: a thread per pipe, the child looked at every few milliseconds.
#[cfg(not(unix))]
pub(super) fn drive(
    child: &mut std::process::Child,
    input: Option<&[u8]>,
    kill_at: Instant,
    limit: usize,
    ended: impl FnOnce(u32),
) -> std::io::Result<Driven> {
    use std::io::{Read, Write};
    use std::sync::mpsc;
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        let input = input.to_vec();
        std::thread::spawn(move || stdin.write_all(&input));
    }
    let read = |source: Option<Box<dyn Read + Send>>| {
        let (sender, receiver) = mpsc::channel();
        if let Some(mut source) = source {
            std::thread::spawn(move || {
                let mut captured = Captured::default();
                let mut chunk = [0u8; 16 * 1024];
                while let Ok(n) = source.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    captured.keep(&chunk[..n], limit);
                }
                let _ = sender.send(captured);
            });
        }
        receiver
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= kill_at {
            killed = true;
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    ended(child.id());
    let ended_at = Instant::now();
    let collect = |receiver: mpsc::Receiver<Captured>| {
        let left = (ended_at + GRACE).saturating_duration_since(Instant::now());
        receiver.recv_timeout(left).unwrap_or_default()
    };
    Ok(Driven {
        status,
        killed,
        ended_at,
        stdout: collect(stdout),
        stderr: collect(stderr),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_limit_is_counted_not_kept() {
        let mut captured = Captured::default();
        captured.keep(b"hello", 8);
        assert!(!captured.truncated);
        captured.keep(b"world", 8);
        assert_eq!(captured.bytes, b"hellowor");
        assert!(captured.truncated);
        captured.keep(b"", 8);
        assert_eq!(captured.bytes.len(), 8);
    }
}
