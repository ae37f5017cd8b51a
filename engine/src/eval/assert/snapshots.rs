//! Snapshot baselines (C4) on the host side: reading golden files into the
//! cases, and writing them with `--update-snapshots`.
//!
//! An app case's `expected.snapshot` is a path relative to the fixture's
//! directory (or to the case's own directory, for a discovered case) that
//! must stay under it. The host reads the golden file into
//! `expected.snapshotText` before the preset sees the case, so the cases
//! record freezes what the run compared against and the preset (which has
//! no file access) compares it with the final text. Snapshots are explicit:
//! a missing golden is an error unless the run was asked to write it. With
//! `--update-snapshots` each golden is (re)written from the case's final
//! text after the provider answered, and the run says which it wrote.
//!
//! A golden file must also really lie inside the fixture's root (a link in
//! its path counts where it points, see [`crate::fixture::root`]), is read
//! and written beneath the root's directory handle, and must be a regular
//! file. Writing one replaces the file a link points to (the link stays),
//! atomically, keeping the file's permissions.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::eval::EvalError;
use crate::fixture::{CaseOrigin, PathRoot, limits};
use crate::plugin::bindings::preset_api::CaseRun;

/// One case's golden file.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// As the case wrote it.
    pub shown: String,
    /// As messages name it.
    pub path: PathBuf,
    /// Where it really is, inside `root`.
    pub real: PathBuf,
    pub root: PathRoot,
}

impl Snapshot {
    /// The golden text; `Ok(None)` when there is no such file yet.
    fn read(&self) -> Result<Option<String>, String> {
        match std::fs::metadata(&self.real) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "cannot read golden file {}: {e}",
                    self.path.display()
                ));
            }
            // A pipe or a device would be waited on forever, or never end.
            Ok(meta) if !meta.is_file() => {
                return Err(format!(
                    "golden file {} is not a regular file",
                    self.path.display()
                ));
            }
            Ok(_) => {}
        }
        let file = self
            .root
            .open_file(&self.real)
            .map_err(|e| format!("cannot read golden file {}: {e}", self.path.display()))?;
        limits::read_text_from(&self.path, file)
            .map(Some)
            .map_err(|e| format!("golden file {}: {}", self.path.display(), e.message))
    }
}

/// Reads the golden file of every case that names one, into its
/// `expected.snapshotText`. `indices[k]` is case k's index in the suite
/// (for messages). Returns each case's snapshot, in order, or the problems
/// (JSON path, message).
pub fn resolve(
    fixture: &Path,
    cases: &mut [Value],
    indices: &[usize],
    origins: &[CaseOrigin],
    update: bool,
    root: &PathRoot,
) -> Result<Vec<Option<Snapshot>>, Vec<(String, String)>> {
    let mut problems = Vec::new();
    let mut out = Vec::with_capacity(cases.len());
    for (k, case) in cases.iter_mut().enumerate() {
        let i = indices.get(k).copied().unwrap_or(k);
        let Some(expected) = case.get_mut("expected").and_then(Value::as_object_mut) else {
            out.push(None);
            continue;
        };
        // With `finalText` too, the preset reports the conflict.
        let Some(Value::String(shown)) = expected
            .get("snapshot")
            .filter(|_| !expected.contains_key("finalText"))
        else {
            out.push(None);
            continue;
        };
        let shown = shown.clone();
        let at = format!("cases[{i}].expected.snapshot");
        let base = origins.get(k).map_or_else(
            || fixture.parent().unwrap_or(Path::new("")),
            |o| o.base(fixture),
        );
        let checked =
            contained(base, &shown).and_then(|path| Ok((root.contain(&path, &shown)?, path)));
        let (real, path) = match checked {
            Ok(paths) => paths,
            Err(message) => {
                problems.push((at, message));
                out.push(None);
                continue;
            }
        };
        let snapshot = Snapshot {
            shown,
            path,
            real,
            root: root.clone(),
        };
        let text = match snapshot.read() {
            Ok(Some(text)) => text,
            // Written after the run; until then there is nothing to compare.
            Ok(None) if update => String::new(),
            Ok(None) => {
                problems.push((
                    at,
                    format!(
                        "golden file {} does not exist; snapshots are written only on request: run `cautilus eval test --update-snapshots` to create it, then review and commit it",
                        snapshot.path.display()
                    ),
                ));
                out.push(None);
                continue;
            }
            Err(message) => {
                problems.push((at, message));
                out.push(None);
                continue;
            }
        };
        expected.insert("snapshotText".into(), Value::String(text));
        out.push(Some(snapshot));
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// `base/relative`, refusing absolute paths and paths that leave `base`.
fn contained(base: &Path, relative: &str) -> Result<PathBuf, String> {
    let given = Path::new(relative);
    if relative.trim().is_empty() {
        return Err("must be a path to a golden file, relative to the fixture".into());
    }
    if given.is_absolute() {
        return Err(format!(
            "`{relative}` is absolute; give a path relative to the fixture's directory"
        ));
    }
    let mut depth = 0usize;
    for component in given.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => {
                return Err(format!(
                    "`{relative}` leaves the fixture's directory; golden files must stay under it"
                ));
            }
        }
    }
    if depth == 0 {
        return Err(format!("`{relative}` names a directory, not a golden file"));
    }
    Ok(base
        .join(given)
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect())
}

/// What to write into a golden file for a final text: a `.json` golden gets
/// pretty JSON when the text parses (it is compared structurally), anything
/// else the text as it is.
fn golden_text(snapshot: &Snapshot, final_text: &str) -> String {
    if snapshot.shown.ends_with(".json")
        && let Ok(value) = serde_json::from_str::<Value>(final_text)
        && let Ok(pretty) = serde_json::to_string_pretty(&value)
    {
        return pretty + "\n";
    }
    final_text.to_string()
}

/// Whether `final_text` matches the golden text the way the app presets
/// compare them (structurally for `.json` when both parse, else bytes).
fn matches(snapshot: &Snapshot, golden: &str, final_text: &str) -> bool {
    if snapshot.shown.ends_with(".json")
        && let (Ok(a), Ok(b)) = (
            serde_json::from_str::<Value>(golden),
            serde_json::from_str::<Value>(final_text),
        )
    {
        return a == b;
    }
    golden == final_text
}

/// Writes a case's golden file from its run (first answered sample) and
/// puts the new text into its normalized case `body`. Returns what it did,
/// for the terminal, or `None` when nothing changed or there was no answer.
pub fn update(
    snapshot: &Snapshot,
    run: &CaseRun,
    body: &mut String,
) -> Result<Option<String>, EvalError> {
    let Some(final_text) = run
        .samples
        .iter()
        .find_map(|s| s.outcome.as_ref().ok())
        .and_then(|o| o.final_text.as_deref())
    else {
        return Ok(None);
    };
    let before = snapshot.read().ok().flatten();
    // A golden that already matches keeps its bytes (and its formatting).
    let text = match &before {
        Some(old) if matches(snapshot, old, final_text) => old.clone(),
        _ => golden_text(snapshot, final_text),
    };
    if before.as_deref() != Some(text.as_str()) {
        snapshot
            .root
            .write_file(&snapshot.real, text.as_bytes())
            .map_err(|source| EvalError::Write {
                path: snapshot.path.clone(),
                source,
            })?;
    }
    if let Ok(mut case) = serde_json::from_str::<Value>(body)
        && let Some(expected) = case.get_mut("expected").and_then(Value::as_object_mut)
    {
        expected.insert("snapshotText".into(), Value::String(text.clone()));
        *body = case.to_string();
    }
    Ok(match before {
        None => Some(format!(
            "snapshot written: {} (case `{}`)",
            snapshot.path.display(),
            run.case_id
        )),
        Some(old) if old != text => Some(format!(
            "snapshot updated: {} (case `{}`)",
            snapshot.path.display(),
            run.case_id
        )),
        Some(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_paths_stay_under_their_directory() {
        let base = Path::new("fx");
        assert_eq!(
            contained(base, "./g.txt").unwrap(),
            PathBuf::from("fx/g.txt")
        );
        assert_eq!(
            contained(base, "a/../g.txt").unwrap(),
            PathBuf::from("fx/a/../g.txt")
        );
        assert!(contained(base, "../g.txt").unwrap_err().contains("leaves"));
        assert!(
            contained(base, "a/../../g.txt")
                .unwrap_err()
                .contains("leaves")
        );
        assert!(
            contained(base, "/etc/passwd")
                .unwrap_err()
                .contains("absolute")
        );
        assert!(contained(base, ".").unwrap_err().contains("directory"));
    }

    #[test]
    fn json_goldens_are_written_pretty() {
        let snapshot = Snapshot {
            shown: "g.json".into(),
            path: PathBuf::from("g.json"),
            real: PathBuf::from("/g.json"),
            root: PathRoot::open(Path::new("/"), "the test root").unwrap(),
        };
        assert_eq!(golden_text(&snapshot, "{\"a\":1}"), "{\n  \"a\": 1\n}\n");
        assert_eq!(golden_text(&snapshot, "plain"), "plain");
    }
}
