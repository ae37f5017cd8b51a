//! Where each assertion of a case was written: the file, the JSON path of
//! the assertion in it (`cases[3].assertions[1]`; `assertions[1]` in a
//! case's own file; `assertions[0]` for a suite-level assertion) and,
//! found when the evidence is read (never while the run runs), its line
//! and column through [`crate::fixture::place::Placer`], which follows the
//! fixture's `extends` chain and reads only beneath the fixture's root.
//!
//! A case's ledger is its own assertions, then the suite's, in order
//! ([`crate::eval::assert::assertions`]); when the fixture, read again now,
//! no longer has as many as the record (it changed since the run), no
//! place is given rather than a wrong one. The fixture is read only when
//! it lies inside the project root.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::fixture::place::Placer;
use crate::fixture::{CaseOrigin, Fixture};

/// Where one assertion was written.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// The file, relative to the project root (`/`-separated).
    pub file: String,
    /// The JSON path of the assertion in that file.
    pub path: String,
    /// For a case in a file of several (`.jsonl`, …): its 1-based entry.
    pub entry: Option<u64>,
    /// 1-based; absent when the value could not be found in the text.
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// An assertion as its fixture wrote it, and where.
#[derive(Debug, Clone)]
pub struct Written {
    pub source: Source,
    /// Its `threshold`, when it sets one.
    pub threshold: Option<f64>,
}

/// The assertions of case `case_id` of `fixture` in ledger order, when the
/// fixture loads, lies inside `project_root` and has the case.
pub fn written(fixture: &Path, project_root: &Path, case_id: &str) -> Option<Vec<Written>> {
    let root = std::fs::canonicalize(project_root).ok()?;
    let real = std::fs::canonicalize(fixture).ok()?;
    if !real.starts_with(&root) {
        return None;
    }
    let Fixture::Suite(suite) = crate::fixture::load_fixture(fixture).ok()? else {
        return None;
    };
    let (index, case, origin) = suite.cases.open().enumerate().find_map(|(i, case)| {
        let case = case.ok()?;
        let id = case
            .case
            .get("caseId")
            .or_else(|| case.case.get("id"))
            .and_then(Value::as_str)?;
        (id == case_id).then_some((i, case.case, case.origin))
    })?;
    let placer = Placer::new(fixture, None);
    let relative = |file: &Path| {
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        file.strip_prefix(&root)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut out = Vec::new();
    let own = case.get("assertions").and_then(Value::as_array);
    for (j, assertion) in own.into_iter().flatten().enumerate() {
        let inner = format!("assertions[{j}]");
        let problem = crate::eval::cases::origins::locate(
            &format!("cases[{index}].{inner}"),
            std::slice::from_ref(&origin),
            &[index],
        );
        let (file, path) = match &origin.file {
            Some(file) => (file.to_path_buf(), inner),
            None => (fixture.to_path_buf(), format!("cases[{index}].{inner}")),
        };
        out.push(place(
            &placer, &problem, file, path, &origin, assertion, &relative,
        ));
    }
    let shared = suite.body.get("assertions").and_then(Value::as_array);
    for (k, assertion) in shared.into_iter().flatten().enumerate() {
        let path = format!("assertions[{k}]");
        out.push(place(
            &placer,
            &path,
            fixture.to_path_buf(),
            path.clone(),
            &CaseOrigin::default(),
            assertion,
            &relative,
        ));
    }
    Some(out)
}

/// One assertion's place: `problem` as the placer reads it (it may find
/// the value in a base fixture, which then is the file named).
fn place(
    placer: &Placer,
    problem: &str,
    file: PathBuf,
    path: String,
    origin: &CaseOrigin,
    assertion: &Value,
    relative: &dyn Fn(&Path) -> String,
) -> Written {
    let (file, line, column) = match placer.place_problem(problem).as_deref().and_then(split_at) {
        Some((found, line, column)) => (PathBuf::from(found), Some(line), Some(column)),
        None => (file, None, None),
    };
    Written {
        source: Source {
            file: relative(&file),
            path,
            entry: origin.entry,
            line,
            column,
        },
        threshold: assertion.get("threshold").and_then(Value::as_f64),
    }
}

/// `file:line:col` split.
fn split_at(placed: &str) -> Option<(&str, usize, usize)> {
    let mut parts = placed.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    Some((parts.next()?, line, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_assertion_is_found_where_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cautilus.toml"), "").unwrap();
        let fixture = dir.path().join("s.fixture.yaml");
        std::fs::write(
            &fixture,
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\n\
             provider: fixture\nmodel: m\nassertions:\n  - { type: contains, value: b }\ncases:\n  \
             - caseId: one\n    input: hi\n  - caseId: two\n    input: hi\n    assertions:\n      \
             - { type: levenshtein, value: x, threshold: 0.7 }\n",
        )
        .unwrap();
        let written = written(&fixture, dir.path(), "two").unwrap();
        assert_eq!(written.len(), 2);
        assert_eq!(written[0].source.file, "s.fixture.yaml");
        assert_eq!(written[0].source.path, "cases[1].assertions[0]");
        assert_eq!(written[0].source.line, Some(14));
        assert_eq!(written[0].threshold, Some(0.7));
        assert_eq!(written[1].source.path, "assertions[0]");
        assert_eq!(written[1].source.line, Some(7));
        assert!(super::written(&fixture, dir.path(), "three").is_none());
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(super::written(&fixture, elsewhere.path(), "two").is_none());
    }

    #[test]
    fn a_place_splits_from_the_right() {
        assert_eq!(split_at("/a:b/f.yaml:3:5"), Some(("/a:b/f.yaml", 3, 5)));
        assert_eq!(split_at("f.yaml"), None);
    }
}
