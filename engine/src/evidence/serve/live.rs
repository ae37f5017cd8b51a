//! Runs in progress, read from their run directories as they are written
//! (`cautilus.serve.live.v1`): `run.json` (status, cases to run, start;
//! [`crate::eval::records::run_state`]) and the journal `cells.jsonl`, one
//! line per finished case ([`crate::eval::records::journal`]). An
//! experiment of several groups has one of each per group
//! (`variants/<variant>/trial-<n>/`); a project run one per suite
//! (`suites/<suite>/`, each its own run id).
//!
//! Nothing is locked or written: the server reads what the run flushed.
//! A torn last journal line is passed over. A run killed before its final
//! record stays `running` on disk: `idleMs` says how long its journal has
//! not grown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use super::models::{LIVE, Live, LiveCase, LiveRun};
use crate::eval::files::rfc3339_millis;
use crate::eval::records::{journal, run_state};
use crate::evidence::records::plain_segment;
use crate::evidence::{EvidenceError, Records};
use crate::project::latest::finished;

/// Run directories looked at for runs in progress (the newest).
const NEWEST_DIRS: usize = 50;
/// Finished cases carried per run (the latest).
const CASES_SHOWN: usize = 100;
/// The largest journal read.
const MAX_JOURNAL: u64 = 64 << 20;

/// The run `id` (finished or not), or every run in progress.
pub fn live(records: &Records, id: Option<&str>) -> Result<Live, EvidenceError> {
    let runs = match id {
        Some(id) => {
            let run = records.resolve_any(id)?;
            vec![state(records, &run.id, &run.dir)]
        }
        None => in_progress(records),
    };
    Ok(Live {
        schema_version: LIVE.into(),
        runs,
    })
}

/// The runs among the newest directories that have not finished.
fn in_progress(records: &Records) -> Vec<LiveRun> {
    let runs_dir = records.runs_dir();
    let mut out = Vec::new();
    for name in records.run_dir_names().into_iter().take(NEWEST_DIRS) {
        let dir = runs_dir.join(&name);
        if finished(&dir) {
            continue;
        }
        if started(&dir) {
            out.push(state(records, &name, &dir));
            continue;
        }
        // A project run: each suite that has started and not finished.
        let mut suites: Vec<String> = std::fs::read_dir(dir.join("suites"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| plain_segment(n))
            .collect();
        suites.sort();
        for suite in suites {
            let dir = dir.join("suites").join(&suite);
            if started(&dir) && !finished(&dir) {
                out.push(state(records, &format!("{name}/suites/{suite}"), &dir));
            }
        }
    }
    out
}

/// Whether `dir` holds a run that started.
fn started(dir: &Path) -> bool {
    dir.join(run_state::FILE).is_file() || dir.join(crate::quality::resume::FILE).is_file()
}

/// The groups of a run: itself, or an experiment's `variants/*/trial-*`.
fn groups(dir: &Path) -> Vec<(Option<String>, PathBuf)> {
    if dir.join(run_state::FILE).is_file() {
        return vec![(None, dir.to_path_buf())];
    }
    let mut found = Vec::new();
    let sorted = |d: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        names.sort();
        names
    };
    let variants = dir.join("variants");
    for variant in sorted(&variants) {
        for trial in sorted(&variants.join(&variant)) {
            let group = variants.join(&variant).join(&trial);
            if group.join(run_state::FILE).is_file() {
                found.push((Some(format!("{variant}/{trial}")), group));
            }
        }
    }
    found
}

fn state(records: &Records, id: &str, dir: &Path) -> LiveRun {
    let now = now_ms();
    let mut run = LiveRun {
        id: id.to_string(),
        fixture: None,
        status: "running".into(),
        finished: finished(dir),
        total_cases: 0,
        finished_cases: 0,
        counts: BTreeMap::new(),
        started_at: None,
        ended_at: None,
        elapsed_ms: None,
        idle_ms: None,
        cases: Vec::new(),
    };
    let mut statuses = Vec::new();
    let mut newest_write: Option<SystemTime> = None;
    for (group, dir) in groups(dir) {
        if let Ok(state) = run_state::RunState::read(&dir) {
            run.total_cases += state.total_cases;
            if run.started_at.is_none() {
                run.started_at = Some(state.started_at.clone());
                run.fixture = Some(relative(records.project_root(), &state.options.fixture));
            }
            statuses.push(state.status);
            if state.ended_at.is_some() {
                run.ended_at = state.ended_at.clone();
            }
        }
        let path = dir.join(journal::FILE);
        if let Ok(meta) = std::fs::metadata(&path) {
            newest_write = newest_write.max(meta.modified().ok());
        }
        for line in journal_lines(&path) {
            let text = |k: &str| {
                line.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let status = text("status");
            *run.counts.entry(status.clone()).or_default() += 1;
            run.finished_cases += 1;
            run.cases.push(LiveCase {
                case_id: text("caseId"),
                group: group.clone(),
                status,
                summary: text("summary"),
            });
        }
    }
    use run_state::RunStatus as S;
    run.status = if !run.finished || statuses.contains(&S::Running) {
        "running"
    } else if statuses.contains(&S::Failed) {
        "failed"
    } else if statuses.contains(&S::Interrupted) {
        "interrupted"
    } else {
        "completed"
    }
    .into();
    let start = run.started_at.as_deref().and_then(rfc3339_millis);
    let end = if run.finished {
        run.ended_at.as_deref().and_then(rfc3339_millis)
    } else {
        Some(now)
    };
    run.elapsed_ms = start.zip(end).map(|(s, e)| (e - s).max(0));
    run.idle_ms = newest_write
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|t| (now - t.as_millis() as i64).max(0));
    let skip = run.cases.len().saturating_sub(CASES_SHOWN);
    run.cases.drain(..skip);
    run
}

/// The journal's complete lines, parsed loosely (a torn last line and a
/// line that is not JSON are passed over).
fn journal_lines(path: &Path) -> Vec<Value> {
    let Ok(Some(text)) = crate::regular_file::read_to_string(path, MAX_JOURNAL) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(Value::is_object)
        .collect()
}

fn relative(root: &Path, file: &Path) -> String {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    file.strip_prefix(&root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| {
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_in_progress_shows_its_finished_cases() {
        let dir = tempfile::tempdir().unwrap();
        let records = Records::new(dir.path(), dir.path());
        let run = records.runs_dir().join("20260101T000000000Z-0001");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(
            run.join("run.json"),
            r#"{"schemaVersion": "cautilus.run.v1", "status": "running", "fingerprint": "x",
                "totalCases": 3, "finishedCases": 0, "startedAt": "2026-01-01T00:00:00.000Z",
                "options": {"fixture": "/elsewhere/s.fixture.yaml", "workspace": "/w", "provider": "fixture",
                            "timeoutMs": 1, "memoryBytes": 1}}"#,
        )
        .unwrap();
        std::fs::write(
            run.join("cells.jsonl"),
            "{\"case\": 0, \"caseId\": \"a\", \"status\": \"passed\", \"summary\": \"ok\"}\n\
             {\"case\": 1, \"caseId\": \"<b>\", \"status\": \"failed\", \"summary\": \"no\"}\n{\"case\": 2, \"ca",
        )
        .unwrap();
        let live = live(&records, None).unwrap();
        assert_eq!(live.runs.len(), 1);
        let r = &live.runs[0];
        assert_eq!((r.total_cases, r.finished_cases), (3, 2));
        assert_eq!(r.status, "running");
        assert!(!r.finished);
        assert_eq!(r.cases[1].case_id, "<b>");
        assert_eq!(r.counts["failed"], 1);
        assert_eq!(r.fixture.as_deref(), Some("s.fixture.yaml"));
        assert!(r.elapsed_ms.unwrap() > 0);
        // Named, it is found too; a finished run is no longer in progress.
        assert_eq!(
            super::live(&records, Some("20260101T000000000Z-0001"))
                .unwrap()
                .runs
                .len(),
            1
        );
        std::fs::write(run.join("experiment.json"), "{}").unwrap();
        assert!(super::live(&records, None).unwrap().runs.is_empty());
    }
}
