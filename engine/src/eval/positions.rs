//! Errors about a fixture's values, placed for the report: each one that
//! names a value of a YAML or JSON fixture (or of a file it names: a base
//! fixture, a case file) says `file:line:col` before its JSON path
//! ([`crate::fixture::place`]). Done once, where a check or run of one
//! fixture returns its error, so a valid run never reads a file again.

use std::path::Path;

use crate::eval::EvalError;
use crate::fixture::place::Placer;

/// `error` with its places, for the fixture `fixture` loaded beneath
/// `path_root` (or its default root).
pub fn placed(error: EvalError, fixture: &Path, path_root: Option<&Path>) -> EvalError {
    place(error, &Placer::new(fixture, path_root), fixture)
}

fn place(error: EvalError, placer: &Placer, fixture: &Path) -> EvalError {
    match error {
        EvalError::Fixture(mut error) => {
            placer.place_error(&mut error);
            EvalError::Fixture(error)
        }
        // The paths of a suite's problems are the fixture's (or name a
        // case's own file); a step's are its own suite's, not the file's.
        EvalError::Cases { file, problems } if file == fixture => EvalError::Cases {
            problems: problems
                .into_iter()
                .map(|(path, message)| match placer.place_problem(&path) {
                    Some(at) => (format!("{at}: {path}"), message),
                    None => (path, message),
                })
                .collect(),
            file,
        },
        EvalError::Step { index, error } => EvalError::Step {
            index,
            error: Box::new(match *error {
                fixture_error @ EvalError::Fixture(_) => place(fixture_error, placer, fixture),
                other => other,
            }),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_problem_says_where_it_is_and_one_alone_names_its_file_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let fixture = dir.path().join("f.yaml");
        std::fs::write(&fixture, "cases:\n  - caseId: a\n    input: 1\n").unwrap();
        let cases = |problems: &[(&str, &str)]| EvalError::Cases {
            file: fixture.clone(),
            problems: problems
                .iter()
                .map(|(p, m)| (p.to_string(), m.to_string()))
                .collect(),
        };
        let shown = fixture.display();
        let one = placed(cases(&[("cases[0].input", "bad")]), &fixture, None);
        assert_eq!(one.to_string(), format!("{shown}:3:5: cases[0].input: bad"));
        let two = placed(
            cases(&[("cases[0].input", "bad"), ("cases[0].expected", "missing")]),
            &fixture,
            None,
        );
        assert_eq!(
            two.to_string(),
            format!(
                "{shown}: 2 problems:\n  {shown}:3:5: cases[0].input: bad\n  {shown}:2:5: cases[0].expected: missing"
            )
        );
        // A step's problems are its own suite's paths: left as they are.
        let step = EvalError::Step {
            index: 1,
            error: Box::new(cases(&[("cases[0].input", "bad")])),
        };
        assert_eq!(
            placed(step, &fixture, None).to_string(),
            format!("step 1: {shown}: cases[0].input: bad")
        );
    }
}
