//! `latest`, wherever a command takes a run directory (`report`, `eval
//! compare`, `eval promote`, `--reuse-outputs`): the newest finished run
//! under the project's runs directory (`<records>/runs/`, the config's
//! `dir`, default `.cautilus`).
//!
//! Newest: run directory names start with the time the run started
//! (`20261127T001128270Z-6175`), so the greatest name is the newest.
//! Finished: the directory holds its final record: `project-summary.json`
//! (a project run), `experiment.json` (an experiment, completed or
//! interrupted), or a `run.json` whose status is no longer `running` (a
//! plain run: completed, interrupted or failed). A run still going, or
//! killed before it could say how it ended, is passed over, and so is a
//! directory holding none of these. Runs written elsewhere
//! (`--output-dir`) are not looked at.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::eval::EvalError;

/// The word that stands for the newest finished run.
pub const LATEST: &str = "latest";

/// `run` itself, or for `latest` the newest finished run under
/// `records_root/runs`.
pub fn resolve(run: &Path, records_root: &Path) -> Result<PathBuf, EvalError> {
    if run != Path::new(LATEST) {
        return Ok(run.to_path_buf());
    }
    let runs = records_root.join("runs");
    let error = |message: String| EvalError::Input {
        path: runs.clone(),
        message,
    };
    let entries = std::fs::read_dir(&runs).map_err(|e| {
        error(format!(
            "no runs here for `latest` ({e}); run `cautilus eval test` first, or give a run directory"
        ))
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.into_iter().rev().find(|d| finished(d)).ok_or_else(|| {
        error(
            "no finished run here for `latest` (a run still going or killed is passed over); run `cautilus eval test` first, or give a run directory".into(),
        )
    })
}

/// Whether `dir` holds a finished run's final record (see the module docs).
pub fn finished(dir: &Path) -> bool {
    if dir.join(super::run::FILE).is_file() || dir.join(crate::quality::experiment::FILE).is_file()
    {
        return true;
    }
    let Ok(text) = std::fs::read_to_string(dir.join(crate::eval::records::run_state::FILE)) else {
        return false;
    };
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|state| {
            state
                .get("status")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .is_some_and(|status| status != "running")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_finished_run_is_latest() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let make = |name: &str, file: &str, text: &str| {
            std::fs::create_dir_all(runs.join(name)).unwrap();
            if !file.is_empty() {
                std::fs::write(runs.join(name).join(file), text).unwrap();
            }
        };
        assert!(resolve(Path::new(LATEST), dir.path()).is_err());
        make(
            "20260101T000000000Z-0001",
            "run.json",
            r#"{"status": "completed"}"#,
        );
        make("20260102T000000000Z-0001", "experiment.json", "{}");
        make("20260103T000000000Z-0001", "project-summary.json", "{}");
        let newest = |expected: &str| {
            assert_eq!(
                resolve(Path::new(LATEST), dir.path()).unwrap(),
                runs.join(expected)
            );
        };
        newest("20260103T000000000Z-0001");
        // Still running, killed, or holding nothing: passed over.
        make(
            "20260104T000000000Z-0001",
            "run.json",
            r#"{"status": "running"}"#,
        );
        make("20260105T000000000Z-0001", "", "");
        make("20260106T000000000Z-0001", "run.json", "not json");
        newest("20260103T000000000Z-0001");
        make(
            "20260107T000000000Z-0001",
            "run.json",
            r#"{"status": "interrupted"}"#,
        );
        newest("20260107T000000000Z-0001");
        // Any other path is itself.
        assert_eq!(
            resolve(Path::new("some/run"), dir.path()).unwrap(),
            Path::new("some/run")
        );
    }
}
