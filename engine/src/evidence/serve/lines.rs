//! The lines of a fixture or case file around an assertion's place, read
//! only beneath the project root.
//!
//! The file is the one the cell's evidence names (`source.file`, relative
//! to the project root, found by rereading the run's fixture), never one
//! a request names. It is still held to the root as an untrusted path: a
//! relative path of plain components only (no `..`, not absolute), opened
//! as a fixture's files are ([`PathRoot`]: a symbolic link that leads out
//! of the root is refused, a pipe or a device is refused without waiting),
//! no larger than [`MAX_FILE`]. Lines are carried as text (cut at [`MAX_LINE`]
//! characters), for the page to show as text.

use std::io::Read;
use std::path::{Component, Path};

use super::models::SourceLine;
use crate::fixture::root::PathRoot;

/// The largest file read for its lines.
pub const MAX_FILE: u64 = 4 << 20;
/// Characters of a line carried.
pub const MAX_LINE: usize = 400;
/// Lines shown on each side of the marked one, at most.
pub const MAX_CONTEXT: usize = 20;

/// The lines `line - context ..= line + context` of `file` (relative to
/// `root`), `line` marked; or why they cannot be read.
pub fn around(
    root: &Path,
    file: &str,
    line: usize,
    context: usize,
) -> Result<Vec<SourceLine>, String> {
    let relative = Path::new(file);
    let plain = !file.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(format!(
            "`{file}` is not a path beneath the project root; only files inside it are shown"
        ));
    }
    // The project root's handle: links that lead out of it are refused,
    // and a pipe or a device is refused without waiting on it.
    let inside = PathRoot::open(root, "the project root")
        .map_err(|e| format!("the project root cannot be opened: {e}"))?;
    let real = inside.contain(&inside.dir().join(relative), file)?;
    let mut handle = inside
        .open_file(&real)
        .map_err(|e| format!("`{file}` cannot be read inside the project root: {e}"))?;
    let meta = handle.metadata().map_err(|e| format!("`{file}`: {e}"))?;
    if meta.len() > MAX_FILE {
        return Err(format!(
            "`{file}` is larger than {} MiB; open it in an editor",
            MAX_FILE >> 20
        ));
    }
    let mut bytes = Vec::new();
    (&mut handle)
        .take(MAX_FILE)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("`{file}`: {e}"))?;
    let text = String::from_utf8_lossy(&bytes);
    let context = context.min(MAX_CONTEXT);
    let first = line.saturating_sub(context).max(1);
    let last = line.saturating_add(context);
    let lines: Vec<SourceLine> = text
        .lines()
        .enumerate()
        .map(|(i, t)| (i + 1, t))
        .filter(|(n, _)| (first..=last).contains(n))
        .map(|(number, t)| SourceLine {
            number,
            text: t.chars().take(MAX_LINE).collect(),
            marked: number == line,
        })
        .collect();
    if !lines.iter().any(|l| l.marked) {
        return Err(format!(
            "`{file}` has no line {line} now (it changed since the run)"
        ));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_around_a_place_are_read_beneath_the_root_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("evals")).unwrap();
        let text: String = (1..=30).map(|n| format!("line {n} <b>\n")).collect();
        std::fs::write(root.join("evals/f.yaml"), &text).unwrap();
        let lines = around(root, "evals/f.yaml", 10, 2).unwrap();
        let numbers: Vec<usize> = lines.iter().map(|l| l.number).collect();
        assert_eq!(numbers, [8, 9, 10, 11, 12]);
        assert_eq!(lines[2].text, "line 10 <b>");
        assert!(lines[2].marked && !lines[1].marked);
        assert_eq!(around(root, "evals/f.yaml", 1, 3).unwrap().len(), 4);
        assert!(around(root, "evals/f.yaml", 99, 3).is_err());

        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
        let absolute = outside.path().join("secret.txt");
        for bad in [
            "../secret.txt",
            "evals/../../secret.txt",
            absolute.to_str().unwrap(),
            "",
            "./evals/f.yaml",
        ] {
            let error = around(root, bad, 1, 1).unwrap_err();
            assert!(!error.contains("secret\n"), "{bad}: {error}");
        }
        assert!(around(root, "evals", 1, 1).is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("link.txt"))
                .unwrap();
            assert!(around(root, "link.txt", 1, 1).is_err());
            // A FIFO is refused without waiting for a writer.
            let fifo = root.join("evals/pipe.yaml");
            let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
            let error = around(root, "evals/pipe.yaml", 1, 1).unwrap_err();
            assert!(error.contains("not a regular file"), "{error}");
        }
    }
}
