//! Opening a file that someone else may have put where a record, a
//! baseline or a cassette is expected: only a regular file (after links)
//! is opened, and opening never waits for a pipe's writer, so a FIFO, a
//! device (`/dev/zero` never ends) or a directory is refused instead of
//! blocking the run or filling its memory.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Opens `path` for reading when it is a regular file; `None` when there
/// is no file.
pub fn open(path: &Path) -> std::io::Result<Option<File>> {
    open_as(path, true)
}

/// [`open`], refusing a symbolic link as the file itself (a file cautilus
/// wrote in its records directory is never one).
pub fn open_unlinked(path: &Path) -> std::io::Result<Option<File>> {
    open_as(path, false)
}

fn open_as(path: &Path, follow: bool) -> std::io::Result<Option<File>> {
    if !follow && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(
            "it is a symbolic link; cautilus writes this file itself, never as a link: remove the link",
        ));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(libc::O_NONBLOCK | no_follow);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    refuse_special(&file)?;
    Ok(Some(file))
}

/// An error unless `file` is a regular file.
pub fn refuse_special(file: &File) -> std::io::Result<()> {
    if file.metadata()?.is_file() {
        Ok(())
    } else {
        Err(std::io::Error::other(
            "it is not a regular file (a device, a pipe or a directory)",
        ))
    }
}

/// The text of the regular file at `path` (`None` when there is none),
/// refused past `max_bytes`.
pub fn read_to_string(path: &Path, max_bytes: u64) -> std::io::Result<Option<String>> {
    let Some(file) = open_unlinked(path)? else {
        return Ok(None);
    };
    let size = file.metadata()?.len();
    if size > max_bytes {
        return Err(std::io::Error::other(format!(
            "it is {size} bytes, more than the {} MiB such a file may be",
            max_bytes >> 20
        )));
    }
    let mut text = String::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max_bytes).read_to_string(&mut text)?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(
            read_to_string(&file, 1 << 20).unwrap().as_deref(),
            Some("{}")
        );
        assert!(
            read_to_string(&dir.path().join("none"), 1 << 20)
                .unwrap()
                .is_none()
        );
        assert!(read_to_string(dir.path(), 1 << 20).is_err(), "a directory");
        assert!(read_to_string(&file, 1).is_err(), "past the cap");
        #[cfg(unix)]
        {
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            let error = read_to_string(&link, 1 << 20).unwrap_err();
            assert!(error.to_string().contains("symbolic link"), "{error}");
            assert!(open(&link).unwrap().is_some(), "open follows links");
        }
        #[cfg(unix)]
        {
            assert!(read_to_string(Path::new("/dev/zero"), 1 << 20).is_err());
            let fifo = dir.path().join("pipe");
            let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: mkfifo(3) reads the NUL-terminated path only.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
            let error = read_to_string(&fifo, 1 << 20).unwrap_err();
            assert!(error.to_string().contains("not a regular file"), "{error}");
        }
    }
}
