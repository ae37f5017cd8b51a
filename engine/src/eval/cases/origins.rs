//! What a case's origin means for it once it runs.
//!
//! Inline cases belong to the fixture file. A case loaded from its own file
//! (a `case.yaml` in a case directory, or a `.jsonl`/`.csv`/… list) arrives
//! beside its origin ([`crate::fixture::CaseOrigin`]), which decides:
//! - which file an error about the case names ([`locate`]);
//! - the directory relative paths inside the case resolve against (its
//!   case directory, else the fixture's);
//! - the case's workspace template: a `workspace/` directory inside its
//!   case directory, copied to a fresh temporary directory for that case
//!   ([`fresh_workspace`]). The template must lie inside the fixture's
//!   root (a `workspace` link leading out of it is refused), and its copy
//!   follows no link and opens no pipe ([`crate::eval::cases::workspace_copy`]).

use std::path::{Path, PathBuf};

use crate::fixture::{CaseOrigin, PathRoot};

/// Name of the workspace template inside a case directory.
const WORKSPACE_DIR: &str = "workspace";

/// The case's workspace template (its real path), if its case directory
/// has one; an error when it leads out of `root`.
pub fn workspace_template(origin: &CaseOrigin, root: &PathRoot) -> Result<Option<PathBuf>, String> {
    let Some(dir) = &origin.dir else {
        return Ok(None);
    };
    let template = dir.join(WORKSPACE_DIR);
    if std::fs::symlink_metadata(&template).is_err() {
        return Ok(None);
    }
    let real = root.contain(&template, &template.to_string_lossy())?;
    Ok(real.is_dir().then_some(real))
}

/// A plugin reference a fixture wrote (`./scorer.wasm`, `x.wasm#id`, or an
/// id): a path is resolved against `base` and must lie inside `root`; an id
/// is returned as it is.
pub fn plugin_reference(root: &PathRoot, base: &Path, reference: &str) -> Result<String, String> {
    if let Some((path, _)) = crate::plugin::split_path_reference(reference) {
        root.contain(&base.join(&path), &path.to_string_lossy())?;
    }
    Ok(crate::plugin::reference_in(base, reference))
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

/// Copies a workspace template (its real path) into a fresh temporary
/// directory.
pub fn fresh_workspace(
    template: &Path,
) -> Result<tempfile::TempDir, crate::eval::cases::workspace_copy::CopyError> {
    let dir = crate::private_temp::tempdir("cautilus-case-").map_err(|source| {
        crate::eval::cases::workspace_copy::CopyError::Io {
            path: std::env::temp_dir(),
            source,
        }
    })?;
    crate::eval::cases::workspace_copy::copy_into(
        template,
        dir.path(),
        &[],
        crate::eval::cases::workspace_copy::Copying::Whole,
    )?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn errors_name_the_case_file() {
        let origins = vec![
            CaseOrigin::default(),
            CaseOrigin {
                file: Some(Arc::from(Path::new("cases/b/case.yaml"))),
                entry: None,
                dir: Some(Arc::from(Path::new("cases/b"))),
            },
            CaseOrigin::entry(&Arc::from(Path::new("more.jsonl")), 2),
        ];
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
        std::fs::write(template.path().join(".gitignore"), "*.txt\n").unwrap();
        std::fs::create_dir(template.path().join(".git")).unwrap();
        let copy = fresh_workspace(template.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.path().join("src/a.txt")).unwrap(),
            "a"
        );
        assert!(copy.path().join(".git").is_dir());
        assert_ne!(copy.path(), template.path());
    }

    #[cfg(unix)]
    #[test]
    fn templates_leading_out_and_special_files_are_not_followed() {
        let outer = tempfile::tempdir().unwrap();
        let project = outer.path().join("project");
        let case = project.join("cases/a");
        std::fs::create_dir_all(&case).unwrap();
        std::fs::create_dir_all(outer.path().join("secrets")).unwrap();
        std::fs::write(outer.path().join("secrets/key"), "k").unwrap();
        let root = PathRoot::open(&project, "the test root").unwrap();
        let origin = CaseOrigin {
            file: None,
            entry: None,
            dir: Some(Arc::from(case.as_path())),
        };
        // No template, then a template that is a link out of the root.
        assert_eq!(workspace_template(&origin, &root), Ok(None));
        std::os::unix::fs::symlink(outer.path().join("secrets"), case.join("workspace")).unwrap();
        let error = workspace_template(&origin, &root).unwrap_err();
        assert!(error.contains("outside the test root"), "{error}");
        std::fs::remove_file(case.join("workspace")).unwrap();
        // A real template holding a link out, a link in and a pipe.
        let template = case.join("workspace");
        std::fs::create_dir(&template).unwrap();
        std::fs::write(template.join("in.txt"), "in").unwrap();
        std::os::unix::fs::symlink(outer.path().join("secrets/key"), template.join("abs")).unwrap();
        std::os::unix::fs::symlink("../../../../secrets/key", template.join("rel")).unwrap();
        std::os::unix::fs::symlink("in.txt", template.join("alias")).unwrap();
        let fifo = template.join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) reads the NUL-terminated path and touches no other memory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let real = workspace_template(&origin, &root).unwrap().unwrap();
        let copy = fresh_workspace(&real).unwrap();
        let names: Vec<String> = std::fs::read_dir(copy.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut names = names;
        names.sort();
        assert_eq!(names, ["alias", "in.txt"]);
        assert_eq!(
            std::fs::read_to_string(copy.path().join("alias")).unwrap(),
            "in"
        );
    }
}
