//! Resuming an experiment: `experiment-run.json` in the run directory
//! records how the experiment was started (the options as given, before
//! any variant's overrides), so `eval test --resume <run-dir>` can run it
//! again with the same cells: a group that completed is taken as it is, a
//! group that was interrupted resumes from its journal (only its unfinished
//! cases run), a group that never started runs, and the record is written
//! anew over every finished cell.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::eval::provider::setup::GrantFlags;
use crate::eval::records::run_state::{self, RunState, RunStatus};
use crate::eval::{
    CaseLines, CellFilters, EvalError, TestOptions, files, provider::cassette::ReplayMode,
};

/// The file's name and schema.
pub const FILE: &str = "experiment-run.json";
pub const SCHEMA: &str = "cautilus.experiment_run.v1";

/// How an experiment was started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExperimentRun {
    schema_version: String,
    fixture: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path_root: Option<PathBuf>,
    workspace: PathBuf,
    #[serde(default)]
    records: Option<PathBuf>,
    /// `--provider` (not a variant's provider: each group resolves its own).
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    default_provider: Option<String>,
    #[serde(default)]
    replay: Option<String>,
    #[serde(default)]
    default_replay: Option<String>,
    #[serde(default)]
    cassette: Option<String>,
    #[serde(default)]
    fixture_results: Option<PathBuf>,
    #[serde(default)]
    grants: GrantFlags,
    timeout_ms: u64,
    memory_bytes: usize,
    #[serde(default)]
    fuel: Option<u64>,
    #[serde(default)]
    jobs: Option<usize>,
    #[serde(default)]
    concurrency: Option<usize>,
    #[serde(default)]
    update_snapshots: bool,
    #[serde(default)]
    keep_workspaces: bool,
    #[serde(default)]
    variants: Vec<String>,
    #[serde(default)]
    cases: Vec<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    trials: Option<u32>,
    #[serde(default)]
    default_trials: Option<u32>,
    #[serde(default)]
    shard: Option<(u32, u32)>,
    #[serde(default)]
    reuse_outputs: Option<PathBuf>,
    #[serde(default)]
    redact: crate::eval::redact::Redaction,
    #[serde(default)]
    default_judge: Option<serde_json::Value>,
    #[serde(default)]
    judge: Option<serde_json::Value>,
    #[serde(default)]
    provider_env: std::collections::BTreeMap<String, String>,
}

/// Records how the experiment in `dir` is started.
pub fn write(dir: &Path, options: &TestOptions) -> Result<(), EvalError> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let run = ExperimentRun {
        schema_version: SCHEMA.into(),
        fixture: absolute(&options.fixture),
        path_root: options.path_root.as_deref().map(absolute),
        workspace: absolute(&options.workspace),
        records: options.records.as_deref().map(absolute),
        provider: options.provider.clone(),
        default_provider: options.default_provider.clone(),
        replay: options.replay.map(|m| m.as_str().to_string()),
        default_replay: options.default_replay.map(|m| m.as_str().to_string()),
        cassette: options.cassette.clone(),
        fixture_results: options.fixture_results.as_deref().map(absolute),
        grants: options.grants.clone(),
        timeout_ms: u64::try_from(options.limits.timeout.as_millis()).unwrap_or(u64::MAX),
        memory_bytes: options.limits.memory_bytes,
        fuel: options.limits.fuel,
        jobs: options.jobs,
        concurrency: options.concurrency,
        update_snapshots: options.update_snapshots,
        keep_workspaces: options.keep_workspaces,
        variants: options.cells.variants.clone(),
        cases: options.cells.cases.clone(),
        tags: options.cells.tags.clone(),
        trials: options.cells.trials,
        default_trials: options.cells.default_trials,
        shard: options.cells.shard,
        redact: options.redact.clone(),
        default_judge: options.default_judge.clone(),
        judge: options.judge.clone(),
        provider_env: options.provider_env.clone(),
        reuse_outputs: options.reuse_outputs.as_deref().map(absolute),
    };
    let value = serde_json::to_value(&run).map_err(|e| EvalError::Write {
        path: dir.join(FILE),
        source: std::io::Error::other(e),
    })?;
    files::write_json(&dir.join(FILE), &value)
}

/// Whether `dir` holds an experiment that can be resumed.
pub fn is_experiment(dir: &Path) -> bool {
    dir.join(FILE).is_file()
}

/// The options to resume the experiment in `dir` with.
pub fn options(dir: &Path, case_lines: CaseLines) -> Result<TestOptions, EvalError> {
    let path = dir.join(FILE);
    let error = |message: String| EvalError::Input {
        path: path.clone(),
        message,
    };
    let text = crate::regular_file::read_to_string(&path, 64 << 20)
        .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|e| error(format!("cannot read how the experiment was started: {e}")))?;
    let run: ExperimentRun = serde_json::from_str(&text)
        .map_err(|e| error(format!("not an experiment run this version reads: {e}")))?;
    if run.schema_version != SCHEMA {
        return Err(error(format!("schemaVersion is not `{SCHEMA}`")));
    }
    if completed(&dir.join(super::outcome::FILE)) {
        return Err(error(
            "this experiment completed; there is nothing to resume".into(),
        ));
    }
    let mode = |m: Option<String>| -> Result<Option<ReplayMode>, EvalError> {
        m.as_deref()
            .map(ReplayMode::parse)
            .transpose()
            .map_err(error)
    };
    Ok(TestOptions {
        redact: run.redact,
        default_judge: run.default_judge,
        judge: run.judge,
        provider_env: run.provider_env,
        fixture: run.fixture,
        path_root: run.path_root,
        workspace: run.workspace,
        output_dir: Some(dir.to_path_buf()),
        records: run.records,
        default_provider: run.default_provider,
        default_replay: mode(run.default_replay)?,
        provider: run.provider,
        fixture_results: run.fixture_results,
        grants: run.grants,
        replay: mode(run.replay)?,
        cassette: run.cassette,
        // A read limit, not how the run was started: `--max-cassette-mib`
        // may be given again with `--resume`.
        max_cassette_mib: None,
        limits: crate::plugin::Limits {
            timeout: std::time::Duration::from_millis(run.timeout_ms),
            memory_bytes: run.memory_bytes,
            fuel: run.fuel,
            ..crate::plugin::Limits::default()
        },
        jobs: run.jobs,
        concurrency: run.concurrency,
        update_snapshots: run.update_snapshots,
        keep_workspaces: run.keep_workspaces,
        resume: true,
        case_lines,
        cells: CellFilters {
            variants: run.variants,
            cases: run.cases,
            tags: run.tags,
            trials: run.trials,
            default_trials: run.default_trials,
            shard: run.shard,
        },
        reuse_outputs: run.reuse_outputs,
        require_canned: false,
        trial: 1,
    })
}

/// Whether the record at `path` says the experiment completed. Its
/// `status` is in the trailer, after every cell: only the file's end is
/// read, never the cells.
fn completed(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 1 << 20;
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let length = file.metadata().map_or(0, |m| m.len());
    if file
        .seek(SeekFrom::Start(length.saturating_sub(TAIL)))
        .is_err()
    {
        return false;
    }
    let mut tail = Vec::new();
    if file.read_to_end(&mut tail).is_err() {
        return false;
    }
    let tail = String::from_utf8_lossy(&tail);
    // The trailer's top-level member (two spaces in); a cell's
    // `"status"` is indented further and never `completed`.
    tail.contains("\n  \"status\": \"completed\"")
}

/// What a group's directory says of it when an experiment resumes.
pub enum GroupState {
    /// Finished earlier: its case count.
    Completed(usize),
    /// Started and stopped: resume it.
    Unfinished,
    /// Never started.
    Fresh,
}

pub fn group_state(dir: &Path) -> GroupState {
    if !dir.join(run_state::FILE).is_file() {
        return GroupState::Fresh;
    }
    match RunState::read(dir) {
        Ok(state) if state.status == RunStatus::Completed => {
            GroupState::Completed(state.total_cases)
        }
        _ => GroupState::Unfinished,
    }
}

/// What a run directory holds, as `cautilus eval state` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirState {
    /// No run (no `experiment-run.json`, no `run.json`): start one there.
    None,
    /// A run that started and did not complete: `--resume` continues it.
    Unfinished,
    /// A run that completed.
    Completed,
}

impl DirState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Unfinished => "unfinished",
            Self::Completed => "completed",
        }
    }
}

/// What `dir` holds: an experiment is completed when its record says so,
/// a plain run when its `run.json` does; anything else started there is
/// unfinished.
pub fn dir_state(dir: &Path) -> DirState {
    if is_experiment(dir) {
        return if completed(&dir.join(super::outcome::FILE)) {
            DirState::Completed
        } else {
            DirState::Unfinished
        };
    }
    // `eval merge` writes its experiment whole, with no run file.
    if completed(&dir.join(super::outcome::FILE)) {
        return DirState::Completed;
    }
    match group_state(dir) {
        GroupState::Fresh => DirState::None,
        GroupState::Completed(_) => DirState::Completed,
        GroupState::Unfinished => DirState::Unfinished,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_directory_holds_no_run_an_unfinished_one_or_a_completed_one() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("shard-1");
        // Not there, or empty (a run killed before it wrote anything).
        assert_eq!(dir_state(&run), DirState::None);
        std::fs::create_dir(&run).unwrap();
        assert_eq!(dir_state(&run), DirState::None);
        // An experiment: unfinished until its record's trailer says completed.
        std::fs::write(run.join(FILE), "{}").unwrap();
        assert_eq!(dir_state(&run), DirState::Unfinished);
        let record = |status: &str| {
            format!(
                "{{\n  \"cells\": [\n    {{\n      \"status\": \"completed\"\n    }}\n  ],\n  \"status\": \"{status}\"\n}}\n"
            )
        };
        std::fs::write(run.join(super::super::outcome::FILE), record("interrupted")).unwrap();
        assert_eq!(dir_state(&run), DirState::Unfinished);
        std::fs::write(run.join(super::super::outcome::FILE), record("completed")).unwrap();
        assert_eq!(dir_state(&run), DirState::Completed);
        // A plain run: its run.json's status.
        let plain = dir.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(plain.join(run_state::FILE), "not json").unwrap();
        assert_eq!(dir_state(&plain), DirState::Unfinished);
        // A merged experiment: its record only, completed.
        let merged = dir.path().join("merged");
        std::fs::create_dir(&merged).unwrap();
        std::fs::write(
            merged.join(super::super::outcome::FILE),
            record("completed"),
        )
        .unwrap();
        assert_eq!(dir_state(&merged), DirState::Completed);
        assert_eq!(
            [DirState::None, DirState::Unfinished, DirState::Completed].map(DirState::as_str),
            ["none", "unfinished", "completed"]
        );
    }
}
