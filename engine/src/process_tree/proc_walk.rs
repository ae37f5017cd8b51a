//! Finding and killing a process's descendants through `/proc` (Linux),
//! written to be async-signal-safe: it runs in the supervisor, a forked
//! copy of a multi-threaded process, so it allocates nothing, takes no
//! lock and panics nowhere (buffers live on the stack, arithmetic saturates,
//! indexing is checked). It only makes system calls.
//!
//! A process's children are listed per thread in
//! `/proc/<pid>/task/<tid>/children`; every thread's list is read, since a
//! child forked by a thread other than the leader is listed under that
//! thread only.
//!
//! [`kill_descendants`] kills each process before it reads that process's
//! children: a process with SIGKILL pending can no longer fork (the kernel
//! refuses a fork once a fatal signal is pending), so the list it then
//! reads is complete. A process that dies before its list is read has its
//! children re-parented to the nearest subreaper (the caller, or the
//! supervisor), where the caller's next round finds them; callers repeat
//! rounds until they have no child left.

use std::ffi::c_int;

/// Most processes waiting for their children to be read; deeper ones are
/// killed but not searched, and their children are found in a later round.
const STACK: usize = 1024;

/// A NUL-terminated path built in place.
struct PathBuf {
    bytes: [u8; 64],
    len: usize,
}

impl PathBuf {
    fn new() -> Self {
        Self {
            bytes: [0; 64],
            len: 0,
        }
    }

    fn push(&mut self, text: &[u8]) -> &mut Self {
        for &byte in text {
            // One byte stays for the NUL; a longer path (impossible for
            // these) is cut and simply fails to open.
            if self.len + 1 < self.bytes.len() {
                self.bytes[self.len] = byte;
                self.len += 1;
            }
        }
        self
    }

    fn push_number(&mut self, mut number: u32) -> &mut Self {
        let mut digits = [0u8; 10];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (number % 10) as u8;
            count += 1;
            number /= 10;
            if number == 0 || count == digits.len() {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            let digit = digits[count];
            self.push(&[digit]);
        }
        self
    }

    /// Opens the path read-only; -1 when it cannot.
    fn open(&mut self, flags: c_int) -> c_int {
        if self.len < self.bytes.len() {
            self.bytes[self.len] = 0;
        }
        // SAFETY: the buffer is NUL-terminated (set just above, and `push`
        // always leaves room for it); open(2) only reads it.
        unsafe {
            libc::open(
                self.bytes.as_ptr().cast(),
                flags | libc::O_RDONLY | libc::O_CLOEXEC,
            )
        }
    }
}

/// Parses decimal numbers separated by anything else, across reads.
struct Numbers {
    value: u32,
    in_number: bool,
}

impl Numbers {
    fn feed(&mut self, bytes: &[u8], found: &mut impl FnMut(i32)) {
        for &byte in bytes {
            if byte.is_ascii_digit() {
                // Saturates: a number too large for a pid stays too large.
                self.value = self
                    .value
                    .saturating_mul(10)
                    .saturating_add(u32::from(byte - b'0'));
                self.in_number = true;
            } else {
                self.finish(found);
            }
        }
    }

    fn finish(&mut self, found: &mut impl FnMut(i32)) {
        if self.in_number {
            // A pid is positive and fits an i32; anything else is skipped.
            if let Ok(pid) = i32::try_from(self.value)
                && pid > 0
            {
                found(pid);
            }
        }
        self.value = 0;
        self.in_number = false;
    }
}

/// Calls `found` with each child of each thread of `pid` (a child may be
/// reported twice if the lists change while they are read).
pub(crate) fn for_each_child(pid: i32, mut found: impl FnMut(i32)) {
    let Ok(pid) = u32::try_from(pid) else { return };
    let dir = PathBuf::new()
        .push(b"/proc/")
        .push_number(pid)
        .push(b"/task")
        .open(libc::O_DIRECTORY);
    if dir < 0 {
        return;
    }
    let mut entries = [0u8; 2048];
    loop {
        // SAFETY: getdents64 writes at most `entries.len()` bytes into the
        // buffer, which outlives the call.
        let read = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir,
                entries.as_mut_ptr(),
                entries.len(),
            )
        };
        let Ok(read) = usize::try_from(read) else {
            break;
        };
        if read == 0 {
            break;
        }
        let mut at = 0;
        // A linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8,
        // then the NUL-terminated name.
        while at + 19 < read {
            let Some(length) = entries.get(at + 16..at + 18) else {
                break;
            };
            let length = usize::from(u16::from_ne_bytes([length[0], length[1]]));
            if length == 0 {
                break;
            }
            let name = entries.get(at + 19..(at + length).min(read)).unwrap_or(&[]);
            let name = name.split(|b| *b == 0).next().unwrap_or(&[]);
            if let Some(tid) = parse_number(name) {
                read_children(pid, tid, &mut found);
            }
            at += length;
        }
    }
    // SAFETY: `dir` is a descriptor this function opened.
    unsafe {
        libc::close(dir);
    }
}

fn parse_number(text: &[u8]) -> Option<u32> {
    if text.is_empty() || text.len() > 10 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: u32 = 0;
    for &digit in text {
        value = value
            .checked_mul(10)?
            .checked_add(u32::from(digit - b'0'))?;
    }
    Some(value)
}

fn read_children(pid: u32, tid: u32, found: &mut impl FnMut(i32)) {
    let file = PathBuf::new()
        .push(b"/proc/")
        .push_number(pid)
        .push(b"/task/")
        .push_number(tid)
        .push(b"/children")
        .open(0);
    if file < 0 {
        return;
    }
    let mut numbers = Numbers {
        value: 0,
        in_number: false,
    };
    let mut chunk = [0u8; 4096];
    loop {
        // SAFETY: read(2) writes at most `chunk.len()` bytes into `chunk`.
        let read = unsafe { libc::read(file, chunk.as_mut_ptr().cast(), chunk.len()) };
        let Ok(read) = usize::try_from(read) else {
            break;
        };
        if read == 0 {
            break;
        }
        numbers.feed(chunk.get(..read).unwrap_or(&[]), found);
    }
    numbers.finish(found);
    // SAFETY: `file` is a descriptor this function opened.
    unsafe {
        libc::close(file);
    }
}

/// Sends SIGKILL to every descendant of `root` (not `root` itself) whose
/// pid is not `skip`ped (the skip applies to `root`'s own children only),
/// each before its children are read. Returns how many signals were sent.
pub(crate) fn kill_descendants(root: i32, skip: impl Fn(i32) -> bool) -> usize {
    let mut pending = [0i32; STACK];
    let mut depth = 0;
    let mut sent = 0;
    let mut kill = |pid: i32, pending: &mut [i32; STACK], depth: &mut usize| {
        // SAFETY: kill(2) touches no memory of ours.
        if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
            sent += 1;
        }
        if let Some(slot) = pending.get_mut(*depth) {
            *slot = pid;
            *depth += 1;
        }
    };
    for_each_child(root, |pid| {
        if !skip(pid) {
            kill(pid, &mut pending, &mut depth);
        }
    });
    while depth > 0 {
        depth -= 1;
        let parent = pending[depth];
        for_each_child(parent, |pid| kill(pid, &mut pending, &mut depth));
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_across_chunks() {
        let mut seen = Vec::new();
        let mut numbers = Numbers {
            value: 0,
            in_number: false,
        };
        let mut found = |pid| seen.push(pid);
        numbers.feed(b"12 3", &mut found);
        numbers.feed(b"45 0 99999999999 7", &mut found);
        numbers.finish(&mut found);
        // 0 is not a pid, and a number past i32 is skipped, not wrapped to
        // some other process.
        assert_eq!(seen, [12, 345, 7]);
    }

    #[test]
    fn paths_are_built_without_allocation() {
        let mut path = PathBuf::new();
        path.push(b"/proc/")
            .push_number(0)
            .push(b"/task/")
            .push_number(u32::MAX)
            .push(b"/children");
        assert_eq!(&path.bytes[..path.len], b"/proc/0/task/4294967295/children");
        let mut long = PathBuf::new();
        for _ in 0..100 {
            long.push(b"abc");
        }
        assert_eq!(long.len, 63, "room is kept for the NUL");
    }

    #[test]
    fn parse_number_refuses_what_is_not_a_tid() {
        assert_eq!(parse_number(b"123"), Some(123));
        for bad in [&b""[..], b".", b"..", b"12a", b"99999999999"] {
            assert_eq!(parse_number(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_children_of_this_process_are_listed() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let mut seen = Vec::new();
        // SAFETY: getpid(2) has no preconditions.
        for_each_child(unsafe { libc::getpid() }, |c| seen.push(c));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(seen.contains(&pid), "{pid} in {seen:?}");
    }
}
