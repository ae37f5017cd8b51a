//! The run's own record, `run.json`: what was run (fixture, provider,
//! options), how far it got and how it ended (`running`, `completed`,
//! `interrupted`, `failed`). It is written when the run starts and again
//! when it ends; a run that is still `running` on disk while no process
//! runs it was killed, and its journal ([`crate::eval::records::journal`]) says which
//! cases finished. `eval test --resume <run-dir>` reads the options from
//! here, so a resumed run is the same run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::eval::EvalError;
use crate::eval::files;

/// The file name in a run directory.
pub const FILE: &str = "run.json";
/// The schema id of `run.json`.
pub const SCHEMA: &str = "cautilus.run.v1";

/// How a run ended, or that it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    Running,
    Completed,
    Interrupted,
    Failed,
}

/// The options a run was started with (what `--resume` reuses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOptions {
    /// Absolute path of the fixture.
    pub fixture: PathBuf,
    /// `--path-root`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_root: Option<PathBuf>,
    pub workspace: PathBuf,
    pub provider: String,
    /// What the run granted its provider (flags; a built-in API
    /// provider's own grants are derived again from the environment).
    #[serde(default, skip_serializing_if = "is_default")]
    pub grants: crate::eval::provider::setup::GrantFlags,
    /// `--replay` (absent: `live`) and `--cassette`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture_results: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    pub timeout_ms: u64,
    pub memory_bytes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    #[serde(default)]
    pub update_snapshots: bool,
    #[serde(default, skip_serializing_if = "is_default")]
    pub keep_workspaces: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<PathBuf>,
    /// The paths it redacted.
    #[serde(
        default,
        skip_serializing_if = "crate::eval::redact::Redaction::is_empty"
    )]
    pub redact: crate::eval::redact::Redaction,
    /// The project's `[judge]` it used where the fixture names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_judge: Option<serde_json::Value>,
    /// `--judge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<serde_json::Value>,
    /// The project config's provider settings (base URLs) it ran with.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub provider_env: std::collections::BTreeMap<String, String>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunState {
    pub schema_version: String,
    pub status: RunStatus,
    pub options: RunOptions,
    /// sha256 of the suite and every case as validated: a resumed run
    /// checks the fixture has not changed since.
    pub fingerprint: String,
    pub total_cases: usize,
    /// Cases finished when this record was written (see the journal for a
    /// run that was killed).
    pub finished_cases: usize,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// The signal that interrupted the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    /// Why the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many times the run was resumed.
    #[serde(default)]
    pub resumed: u32,
    /// Generation settings the cases asked for that the provider does not
    /// apply (it answered without them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_not_applied: Vec<String>,
}

impl RunState {
    /// A run starting now.
    pub fn start(options: RunOptions, fingerprint: String, total_cases: usize) -> Self {
        Self {
            schema_version: SCHEMA.into(),
            status: RunStatus::Running,
            options,
            fingerprint,
            total_cases,
            finished_cases: 0,
            started_at: files::now_rfc3339(),
            ended_at: None,
            interrupted_by: None,
            error: None,
            resumed: 0,
            settings_not_applied: Vec::new(),
        }
    }

    /// Reads the record of the run in `dir`.
    pub fn read(dir: &Path) -> Result<Self, EvalError> {
        let path = dir.join(FILE);
        let error = |message: String| EvalError::Input {
            path: path.clone(),
            message,
        };
        let text = crate::regular_file::read_to_string(&path, 64 << 20)
            .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
            .map_err(|e| {
            error(format!(
                "cannot read the run record ({e}); `--resume` takes a run directory written by `eval test` (e.g. .cautilus/runs/<id>)"
            ))
        })?;
        let state: Self = serde_json::from_str(&text)
            .map_err(|e| error(format!("not a run record this version reads: {e}")))?;
        if state.schema_version != SCHEMA {
            return Err(error(format!(
                "schemaVersion `{}` is not `{SCHEMA}`",
                state.schema_version
            )));
        }
        Ok(state)
    }

    /// Writes the record into `dir` (atomically).
    pub fn write(&self, dir: &Path) -> Result<(), EvalError> {
        let value = serde_json::to_value(self).expect("the run record serializes");
        files::write_json(&dir.join(FILE), &value)
    }

    /// Marks the end of the run.
    pub fn end(&mut self, status: RunStatus, finished: usize) {
        self.status = status;
        self.finished_cases = finished;
        self.ended_at = Some(files::now_rfc3339());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let options = RunOptions {
            fixture: "/w/suite.json".into(),
            path_root: None,
            workspace: "/w".into(),
            provider: "fixture".into(),
            grants: crate::eval::provider::setup::GrantFlags {
                http_hosts: vec!["127.0.0.1".into()],
                ..Default::default()
            },
            replay: Some("record-new".into()),
            cassette: None,
            fixture_results: None,
            jobs: Some(2),
            concurrency: Some(64),
            timeout_ms: 600_000,
            memory_bytes: 64 << 20,
            fuel: None,
            update_snapshots: false,
            keep_workspaces: true,
            records: None,
            redact: Default::default(),
            default_judge: None,
            judge: None,
            provider_env: Default::default(),
        };
        let mut state = RunState::start(options, "abc".into(), 10);
        state.write(dir.path()).unwrap();
        assert_eq!(RunState::read(dir.path()).unwrap(), state);
        state.end(RunStatus::Interrupted, 4);
        state.interrupted_by = Some("SIGINT".into());
        state.write(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert!(text.contains("\"status\": \"interrupted\""), "{text}");
        assert!(text.contains("\"finishedCases\": 4"), "{text}");
        let error = RunState::read(&dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("--resume"), "{error}");
    }
}
