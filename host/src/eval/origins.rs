//! Where each case of a suite came from, and what that means for it.
//!
//! Inline cases belong to the fixture file. A case loaded from its own file
//! (a `case.yaml` in a case directory, or a `.jsonl`/`.csv`/… list) carries
//! a host-private origin (see [`crate::fixture::discover::ORIGIN_KEY`]),
//! taken off the case here before a preset sees it. The origin decides:
//! - which file an error about the case names;
//! - the directory relative paths inside the case resolve against (its
//!   case directory, else the fixture's);
//! - the case's workspace template: a `workspace/` directory inside its
//!   case directory, copied to a fresh temporary directory for that case.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fixture::discover::ORIGIN_KEY;

/// Where one case came from.
#[derive(Debug, Clone, Default)]
pub struct CaseOrigin {
    /// The case's own file, when it is not the fixture.
    pub file: Option<PathBuf>,
    /// Its 1-based entry in a file of several cases.
    pub entry: Option<u64>,
    /// Its case directory (directory discovery).
    pub dir: Option<PathBuf>,
}

/// Name of the workspace template inside a case directory.
const WORKSPACE_DIR: &str = "workspace";

impl CaseOrigin {
    /// The directory relative paths in the case resolve against.
    pub fn base<'a>(&'a self, fixture: &'a Path) -> &'a Path {
        self.dir
            .as_deref()
            .unwrap_or_else(|| fixture.parent().unwrap_or(Path::new("")))
    }

    /// The case's workspace template, if its case directory has one.
    pub fn workspace_template(&self) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?.join(WORKSPACE_DIR);
        dir.is_dir().then_some(dir)
    }

    /// How messages name the case's file (`cases/a/case.yaml`,
    /// `cases.jsonl entry 3`).
    fn describe(&self) -> Option<String> {
        let file = self.file.as_ref()?.display().to_string();
        Some(match self.entry {
            Some(entry) => format!("{file} entry {entry}"),
            None => file,
        })
    }
}

/// Removes the origin of every case, in order.
pub fn take(cases: &mut [Value]) -> Vec<CaseOrigin> {
    cases
        .iter_mut()
        .map(|case| {
            let Some(origin) = case.as_object_mut().and_then(|c| c.remove(ORIGIN_KEY)) else {
                return CaseOrigin::default();
            };
            let path = |key: &str| origin.get(key).and_then(Value::as_str).map(PathBuf::from);
            CaseOrigin {
                file: path("file"),
                entry: origin.get("entry").and_then(Value::as_u64),
                dir: path("dir"),
            }
        })
        .collect()
}

/// Rewrites a problem path `cases[3].expected` to name the case's own file
/// when it has one: `cases[3] (cases/a/case.yaml): expected`. `origins[k]`
/// is the origin of case `indices[k]` (ascending).
pub fn locate(path: &str, origins: &[CaseOrigin], indices: &[usize]) -> String {
    let Some(rest) = path.strip_prefix("cases[") else {
        return path.to_string();
    };
    let Some(close) = rest.find(']') else {
        return path.to_string();
    };
    let Some(described) = rest[..close]
        .parse::<usize>()
        .ok()
        .and_then(|i| indices.binary_search(&i).ok())
        .and_then(|k| origins.get(k))
        .and_then(CaseOrigin::describe)
    else {
        return path.to_string();
    };
    let inner = rest[close + 1..].trim_start_matches('.');
    let head = format!("cases[{}] ({described})", &rest[..close]);
    if inner.is_empty() {
        head
    } else {
        format!("{head}: {inner}")
    }
}

/// Copies a workspace template into a fresh temporary directory.
pub fn fresh_workspace(template: &Path) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("cautilus-case-")
        .tempdir()?;
    copy_tree(template, dir.path())?;
    Ok(dir)
}

/// Copies files and directories (symbolic links are copied as links, never
/// followed, so a template cannot pull in files from outside it).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn origins_are_taken_off_and_name_the_case_file() {
        let mut cases = vec![
            json!({"caseId": "a"}),
            json!({"caseId": "b", "$origin": {"file": "cases/b/case.yaml", "dir": "cases/b"}}),
            json!({"caseId": "c", "$origin": {"file": "more.jsonl", "entry": 2}}),
        ];
        let origins = take(&mut cases);
        assert!(cases[1].get(ORIGIN_KEY).is_none());
        assert_eq!(
            locate("cases[0].input", &origins, &[0, 1, 2]),
            "cases[0].input"
        );
        assert_eq!(
            locate("cases[1].expected.finalText", &origins, &[0, 1, 2]),
            "cases[1] (cases/b/case.yaml): expected.finalText"
        );
        assert_eq!(
            locate("cases[2]", &origins, &[0, 1, 2]),
            "cases[2] (more.jsonl entry 2)"
        );
        assert_eq!(origins[1].base(Path::new("x/f.yaml")), Path::new("cases/b"));
        assert_eq!(origins[0].base(Path::new("x/f.yaml")), Path::new("x"));
    }

    #[test]
    fn a_workspace_template_is_copied_whole() {
        let template = tempfile::tempdir().unwrap();
        std::fs::create_dir(template.path().join("src")).unwrap();
        std::fs::write(template.path().join("src/a.txt"), "a").unwrap();
        let copy = fresh_workspace(template.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.path().join("src/a.txt")).unwrap(),
            "a"
        );
        assert_ne!(copy.path(), template.path());
    }
}
