//! Claiming a run directory: one run writes into a directory at a time,
//! never over the files its fixture reads, and never over files it did not
//! write.
//!
//! Every entry point that writes a run directory (`eval test` of a suite,
//! an experiment and its groups, a steps fixture and its steps, a project
//! run and its suites, `--resume`, `eval merge`) claims it with
//! [`RunDir::claim`] before writing anything there, and holds the claim
//! until its records, and the reports `--html`/`--junit`/`--markdown` make
//! of them, are written (the claim rides in the run's outcome).
//!
//! - **Lock.** An advisory exclusive lock on [`LOCK_FILE`] in the directory
//!   (std's `File::try_lock`: `flock` on Unix, `LockFileEx` on Windows). The
//!   file records its holder (pid, host, start time, command), so a second
//!   run is refused (exit 2) naming it. The lock dies with its process
//!   however it ends, SIGKILL included; the file stays (it marks the
//!   directory as a run directory), so the text a killed run left never
//!   blocks anyone. A directory inside a run directory that another process
//!   holds is refused too. Nested directories of one run (an experiment's
//!   groups, steps, a project's suites, a single-group experiment that runs
//!   in its root) are claimed again by the same process: such a claim is
//!   shared (counted) with the one this process holds, never a second
//!   lock, so a run never waits on itself. Within one process, claims are
//!   not exclusive: the process's runs pick distinct directories.
//! - **Inputs.** A directory that holds, anywhere beneath it, a file or
//!   directory the run reads ([`Inputs`]: the fixture and what it reads,
//!   `--fixture-results`, `--reuse-outputs`, a merge's shards), or that lies
//!   inside a case's own directory, is refused before anything is written.
//!   Golden files are resolved by the checking pass, which refuses one
//!   under the run's outermost directory ([`RunDir::root`]) and abandons
//!   the claim. A nested claim inside a directory this process holds
//!   checks its own inputs against that outermost directory (a project
//!   run's claim knows only the suites' fixtures; each suite's claim
//!   knows what loading it read), and a symbolic link on the way down
//!   from it is refused (a prepared run directory must not
//!   lead a group's records elsewhere).
//! - **Other files.** A directory holding an entry named like a record a
//!   run writes ([`RECORD_NAMES`]) is refused unless it is a cautilus run
//!   directory: it has [`LOCK_FILE`], or one of the records in
//!   [`MARKERS`] with this host's `schemaVersion`. A record entry that is a
//!   symbolic link is refused in any directory: a run never writes through
//!   a link.
//!
//! Platforms: the lock holds between processes on local file systems of
//! Unix and Windows; on a network file system it is as good as the
//! server's locking. On Windows another process cannot read a locked
//! file, so a refusal there cannot name the holder. Where the file system
//! has no locks at all, the run warns and goes on unlocked.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Value, json};

mod checks;

pub use checks::{Inputs, MARKERS, RECORD_NAMES, is_run_dir};
use checks::{check_entries, check_inputs};

use crate::eval::EvalError;

/// The lock file, in every run directory.
pub const LOCK_FILE: &str = "run.lock";

/// The schema of the lock file's text.
const LOCK_SCHEMA: &str = "cautilus.run_lock.v1";

/// One process's claims, by canonical directory.
struct Held {
    /// The locked file (`None`: the file system has no locks).
    _file: Option<File>,
    claims: usize,
    /// The outermost directory this process holds around it.
    root: PathBuf,
}

static HELD: Mutex<BTreeMap<PathBuf, Held>> = Mutex::new(BTreeMap::new());

fn held() -> MutexGuard<'static, BTreeMap<PathBuf, Held>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// A claim on a run directory; dropping it releases it (the lock when it
/// was this process's last claim on the directory).
#[derive(Debug)]
pub struct RunDir {
    key: PathBuf,
    dir: PathBuf,
    root: PathBuf,
    /// This claim made the directory / the lock file (and nested: neither).
    created_dir: bool,
    created_lock: bool,
}

impl RunDir {
    /// Claims `dir` for a run that reads `inputs` (not computed when this
    /// process holds `dir` already); see the module docs. Refusals are input errors (exit 2) naming the directory, the
    /// file or holder, and what to do; nothing is written before them.
    pub fn claim(dir: &Path, inputs: impl FnOnce() -> Inputs) -> Result<Self, EvalError> {
        let area = resolved(dir);
        let mut held = held();
        if let Some(entry) = held.get_mut(&area) {
            entry.claims += 1;
            return Ok(Self {
                key: area,
                dir: dir.to_path_buf(),
                root: entry.root.clone(),
                created_dir: false,
                created_lock: false,
            });
        }
        if let Some((link, run)) = link_inside_held(dir, &held) {
            return Err(refuse(
                dir,
                format!(
                    "{} is a symbolic link inside run directory {}, whose directories the run makes itself; remove the link",
                    link.display(),
                    run.display()
                ),
            ));
        }
        let outer = area
            .ancestors()
            .skip(1)
            .find_map(|a| held.get(a).map(|entry| entry.root.clone()));
        // A nested claim's inputs (a project's suite, a step) are checked
        // against the whole run's directory, which the outer claim could
        // not know them for.
        check_inputs(dir, outer.as_deref().unwrap_or(&area), &inputs())?;
        check_entries(dir)?;
        check_ancestors(dir, &area, &held)?;
        let created_dir = std::fs::symlink_metadata(dir).is_err();
        std::fs::create_dir_all(dir).map_err(|e| write_error(dir, e))?;
        let key = std::fs::canonicalize(dir).unwrap_or(area);
        let lock = dir.join(LOCK_FILE);
        let created_lock = std::fs::symlink_metadata(&lock).is_err();
        let file = lock_file(dir, &lock)?;
        let root = outer.unwrap_or_else(|| key.clone());
        held.insert(
            key.clone(),
            Held {
                _file: file,
                claims: 1,
                root: root.clone(),
            },
        );
        Ok(Self {
            key,
            dir: dir.to_path_buf(),
            root,
            created_dir,
            created_lock,
        })
    }

    /// The directory as the caller named it.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Whether this claim made the directory.
    pub fn created(&self) -> bool {
        self.created_dir
    }

    /// The outermost directory of the run this directory belongs to (it
    /// when it is not nested): files the run reads may not lie under it.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Releases a claim whose run wrote nothing, removing what the claim
    /// made: the lock file and the directory (when empty). A shared claim
    /// removes nothing.
    pub fn abandon(self) {
        let held = held();
        let sole = held.get(&self.key).is_some_and(|e| e.claims == 1);
        if sole && self.created_lock {
            // Removed while still locked, so no other run can lock a file
            // that is about to disappear.
            let _ = std::fs::remove_file(self.dir.join(LOCK_FILE));
            if self.created_dir {
                let _ = std::fs::remove_dir(&self.dir);
            }
        }
        drop(held);
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let mut held = held();
        if let Some(entry) = held.get_mut(&self.key) {
            entry.claims -= 1;
            if entry.claims == 0 {
                held.remove(&self.key); // closes the file: the lock is released
            }
        }
    }
}

fn write_error(path: &Path, source: std::io::Error) -> EvalError {
    EvalError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn refuse(dir: &Path, message: String) -> EvalError {
    EvalError::Input {
        path: dir.to_path_buf(),
        message,
    }
}

/// Opens and locks `lock` and writes this process as its holder.
fn lock_file(dir: &Path, lock: &Path) -> Result<Option<File>, EvalError> {
    let mut open = OpenOptions::new();
    open.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(libc::O_NOFOLLOW);
    }
    let file = open.open(lock).map_err(|e| write_error(lock, e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(refuse(
                dir,
                format!(
                    "this run directory is in use by {}; wait for that run to finish, or choose another --output-dir",
                    holder(lock)
                ),
            ));
        }
        Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
            eprintln!(
                "warning: cannot lock {} ({e}): the file system has no locks, so nothing stops a second run from writing into this directory at the same time",
                lock.display()
            );
            return Ok(None);
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(write_error(lock, e)),
    }
    let text = json!({
        "schemaVersion": LOCK_SCHEMA,
        "pid": std::process::id(),
        "host": host_name(),
        "startedAt": crate::eval::files::now_rfc3339(),
        "command": std::env::args().collect::<Vec<_>>().join(" "),
    });
    let write = |mut out: &File| -> std::io::Result<()> {
        out.set_len(0)?;
        out.write_all(format!("{text}\n").as_bytes())?;
        out.flush()
    };
    write(&file).map_err(|e| write_error(lock, e))?;
    Ok(Some(file))
}

/// Who holds the lock `lock`, from its text.
fn holder(lock: &Path) -> String {
    let mut text = Vec::new();
    let read = File::open(lock).and_then(|f| f.take(4096).read_to_end(&mut text));
    let value: Option<Value> = read.ok().and_then(|_| serde_json::from_slice(&text).ok());
    let Some(value) = value.filter(|v| v["schemaVersion"] == LOCK_SCHEMA) else {
        return format!(
            "another process (its lock file {} does not say which)",
            lock.display()
        );
    };
    let field = |key: &str| {
        let text = match &value[key] {
            Value::String(s) => s.clone(),
            Value::Null => "?".into(),
            other => other.to_string(),
        };
        // The text is another process's: shown short and on one line.
        let clean: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(200)
            .collect();
        clean
    };
    format!(
        "cautilus pid {} on {} (started {}: `{}`)",
        field("pid"),
        field("host"),
        field("startedAt"),
        field("command")
    )
}

fn host_name() -> String {
    #[cfg(unix)]
    {
        let mut buffer = [0u8; 256];
        // SAFETY: gethostname writes at most `len` bytes into the buffer.
        let status = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
        if status == 0 {
            let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
            return String::from_utf8_lossy(&buffer[..end]).into_owned();
        }
    }
    std::env::var("COMPUTERNAME").unwrap_or_else(|_| "this host".into())
}

/// `path` made absolute with symbolic links resolved as far as it exists
/// (the rest appended, `..` applied), so paths compare by where they lead.
pub fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let parts: Vec<Component<'_>> = absolute.components().collect();
    for known in (1..=parts.len()).rev() {
        let prefix: PathBuf = parts[..known].iter().collect();
        let Ok(mut out) = std::fs::canonicalize(&prefix) else {
            continue;
        };
        for part in &parts[known..] {
            match part {
                Component::ParentDir => {
                    out.pop();
                }
                Component::Normal(name) => out.push(name),
                _ => {}
            }
        }
        return out;
    }
    absolute
}

/// A symbolic link on the way from a directory this process holds down to
/// `dir` (a nested directory of a run leading elsewhere), with that
/// directory.
fn link_inside_held(dir: &Path, held: &BTreeMap<PathBuf, Held>) -> Option<(PathBuf, PathBuf)> {
    let lexical = std::path::absolute(dir).ok()?;
    let mut link = None;
    for ancestor in lexical.ancestors() {
        let key = resolved(ancestor);
        if held.contains_key(&key) {
            return link.map(|link| (link, key));
        }
        if std::fs::symlink_metadata(ancestor).is_ok_and(|m| m.file_type().is_symlink()) {
            link = Some(ancestor.to_path_buf());
        }
    }
    None
}

/// Refuses a directory inside a run directory another process holds.
fn check_ancestors(
    dir: &Path,
    area: &Path,
    held: &BTreeMap<PathBuf, Held>,
) -> Result<(), EvalError> {
    for ancestor in area.ancestors().skip(1) {
        if held.contains_key(ancestor) {
            return Ok(()); // ours, and checked when claimed
        }
        let lock = ancestor.join(LOCK_FILE);
        if !std::fs::symlink_metadata(&lock).is_ok_and(|m| m.file_type().is_file()) {
            continue;
        }
        let Ok(file) = File::open(&lock) else {
            continue;
        };
        if let Err(std::fs::TryLockError::WouldBlock) = file.try_lock_shared() {
            return Err(refuse(
                dir,
                format!(
                    "this directory is inside run directory {}, which is in use by {}; wait for that run to finish, or choose another --output-dir",
                    ancestor.display(),
                    holder(&lock)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(error: EvalError) -> String {
        assert!(error.is_definition_error(), "{error}");
        error.to_string()
    }

    #[test]
    fn a_claim_is_shared_within_the_process_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let outer = RunDir::claim(&run, Inputs::default).unwrap();
        assert!(outer.created());
        let text = std::fs::read_to_string(run.join(LOCK_FILE)).unwrap();
        assert!(
            text.contains(&format!("\"pid\":{}", std::process::id())),
            "{text}"
        );
        // The same directory and one inside it: shared, never a deadlock.
        let again = RunDir::claim(&run, || panic!("inputs are the outer claim's")).unwrap();
        // A nested claim checks its own inputs against the outer directory.
        let group = RunDir::claim(&run.join("variants/a/trial-1"), Inputs::default).unwrap();
        let inputs = || Inputs::of_files([&run.join("cases.jsonl")]);
        let error = message(RunDir::claim(&run.join("suites/s"), inputs).unwrap_err());
        assert!(error.contains("which this run reads"), "{error}");
        // A nested directory that a link leads elsewhere is refused.
        #[cfg(unix)]
        {
            std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
            std::os::unix::fs::symlink(dir.path().join("elsewhere"), run.join("steps")).unwrap();
            let error =
                message(RunDir::claim(&run.join("steps/step-0"), Inputs::default).unwrap_err());
            assert!(
                error.contains("symbolic link inside run directory"),
                "{error}"
            );
            assert_eq!(
                std::fs::read_dir(dir.path().join("elsewhere"))
                    .unwrap()
                    .count(),
                0
            );
            std::fs::remove_file(run.join("steps")).unwrap();
        }
        assert_eq!(group.root(), outer.root());
        drop(again);
        drop(group);
        // Another open file description of the lock sees it held.
        let other = File::open(run.join(LOCK_FILE)).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(outer);
        other.try_lock().unwrap();
        other.unlock().unwrap();
        assert!(run.join(LOCK_FILE).is_file(), "the lock file stays");
    }

    #[test]
    fn an_abandoned_claim_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("fresh");
        RunDir::claim(&run, Inputs::default).unwrap().abandon();
        assert!(!run.exists());
        let existing = dir.path().join("existing");
        std::fs::create_dir(&existing).unwrap();
        std::fs::write(existing.join("notes.txt"), "mine").unwrap();
        RunDir::claim(&existing, Inputs::default).unwrap().abandon();
        assert_eq!(std::fs::read_dir(&existing).unwrap().count(), 1);
    }

    #[test]
    fn inputs_beneath_and_case_directories_around_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("cases/c1")).unwrap();
        std::fs::write(d.join("cases/c1/case.yaml"), "input: q").unwrap();
        let inputs = || Inputs {
            paths: vec![d.join("suite.json"), d.join("cases/c1/case.yaml")],
            case_dirs: vec![d.join("cases/c1")],
        };
        for out in [
            d.to_path_buf(),
            d.join("cases"),
            d.join("cases/c1"),
            d.join("cases/c1/out"),
            d.join("x/../cases"),
        ] {
            let error = message(RunDir::claim(&out, inputs).unwrap_err());
            assert!(error.contains("which this run reads"), "{error}");
        }
        assert!(!d.join("cases/c1/out").exists(), "nothing written");
        let error = message(RunDir::claim(&d.join("suite.json"), inputs).unwrap_err());
        assert!(error.contains("suite.json"), "{error}");
        drop(RunDir::claim(&d.join("runs/a"), inputs).unwrap());
    }

    #[test]
    fn foreign_files_and_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("eval-summary.json"), "{\"mine\": true}").unwrap();
        let error = message(RunDir::claim(d, Inputs::default).unwrap_err());
        assert!(
            error.contains("eval-summary.json") && error.contains("not a cautilus run directory"),
            "{error}"
        );
        assert!(!d.join(LOCK_FILE).exists());
        // An earlier run's record marks it as a run directory.
        std::fs::write(
            d.join("run.json"),
            "{\n  \"schemaVersion\": \"cautilus.run.v1\"\n}",
        )
        .unwrap();
        assert!(is_run_dir(d));
        drop(RunDir::claim(d, Inputs::default).unwrap());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("victim"), d.join("cells.jsonl")).unwrap();
            let error = message(RunDir::claim(d, Inputs::default).unwrap_err());
            assert!(error.contains("symbolic link"), "{error}");
        }
    }

    #[test]
    fn paths_resolve_through_links_and_dots() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(d.join("real")).unwrap();
        assert_eq!(resolved(&d.join("real/new/../x")), d.join("real/x"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
            assert_eq!(resolved(&d.join("link/y")), d.join("real/y"));
        }
    }

    #[test]
    fn record_names_cover_every_record() {
        for name in [
            crate::eval::records::journal::FILE,
            crate::eval::provider::answers::FILE,
            crate::eval::records::run_state::FILE,
            crate::eval::provider::calls::TRANSCRIPTS,
            crate::quality::experiment::FILE,
            crate::quality::resume::FILE,
            crate::quality::reuse::FILE,
            crate::project::run::FILE,
        ] {
            assert!(RECORD_NAMES.contains(&name), "{name}");
        }
    }
}
