//! What `run.json` records of a run's options ([`run_options`]) and how
//! `--resume <run-dir>` takes them back ([`resume_options`]); a resumed
//! run's state running again ([`resume_state`]), and the partial files a
//! killed run left behind removed ([`clean_partials`]).

use std::path::Path;

use crate::eval::EvalError;
use crate::eval::files::partial_path;
use crate::eval::options::TestOptions;
use crate::eval::provider::cassette::ReplayMode;
use crate::eval::records::journal::Journal;
use crate::eval::records::run_records::CaseLines;
use crate::eval::records::run_state::{RunOptions, RunState, RunStatus};
use crate::eval::run::packets::{CASES, OBSERVED, SUMMARY};

/// A resumed run's state, running again, and what it says of itself
/// (`answered`: unfinished cases whose answers the run kept).
pub(super) fn resume_state(
    mut state: RunState,
    journal: Journal,
    output_dir: &Path,
    total: usize,
    answered: usize,
) -> (RunState, Option<Journal>) {
    state.status = RunStatus::Running;
    state.resumed += 1;
    state.ended_at = None;
    state.interrupted_by = None;
    state.error = None;
    eprintln!(
        "resuming {}: {} of {total} cases finished earlier; running the other {}",
        crate::term::shown(output_dir.display()),
        journal.finished(),
        total - journal.finished()
    );
    if answered > 0 {
        eprintln!(
            "{answered} of them were answered before the run stopped: scored from the answers kept in {}, without asking the provider again",
            crate::eval::provider::answers::FILE
        );
    }
    (state, Some(journal))
}

/// What `run.json` records of the options (what `--resume` reuses).
pub(super) fn run_options(
    options: &TestOptions,
    reference: &str,
    replay: ReplayMode,
) -> RunOptions {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    RunOptions {
        fixture: absolute(&options.fixture),
        path_root: options.path_root.as_deref().map(absolute),
        workspace: absolute(&options.workspace),
        provider: reference.to_string(),
        grants: options.grants.clone(),
        // What the run used, so `--resume` uses it whatever its source.
        replay: (replay != ReplayMode::Live || options.replay.is_some())
            .then(|| replay.as_str().to_string()),
        cassette: options.cassette.clone(),
        fixture_results: options.fixture_results.as_deref().map(absolute),
        jobs: options.jobs,
        concurrency: options.concurrency,
        timeout_ms: u64::try_from(options.limits.timeout.as_millis()).unwrap_or(u64::MAX),
        memory_bytes: options.limits.memory_bytes,
        fuel: options.limits.fuel,
        update_snapshots: options.update_snapshots,
        keep_workspaces: options.keep_workspaces,
        records: options.records.as_deref().map(absolute),
        redact: options.redact.clone(),
        default_judge: options.default_judge.clone(),
        judge: options.judge.clone(),
        provider_env: options.provider_env.clone(),
    }
}

/// The options of the run in `dir`, to resume it.
pub fn resume_options(dir: &Path, case_lines: CaseLines) -> Result<TestOptions, EvalError> {
    let state = RunState::read(dir)?;
    if state.status == RunStatus::Completed {
        return Err(EvalError::Input {
            path: dir.join(crate::eval::records::run_state::FILE),
            message: format!(
                "this run completed ({} of {} cases); there is nothing to resume",
                state.finished_cases, state.total_cases
            ),
        });
    }
    let o = state.options;
    Ok(TestOptions {
        redact: o.redact,
        default_judge: o.default_judge,
        judge: o.judge,
        provider_env: o.provider_env,
        fixture: o.fixture,
        path_root: o.path_root,
        workspace: o.workspace,
        output_dir: Some(dir.to_path_buf()),
        provider: Some(o.provider),
        grants: o.grants,
        replay: o
            .replay
            .as_deref()
            .map(ReplayMode::parse)
            .transpose()
            .map_err(|message| EvalError::Input {
                path: dir.join(crate::eval::records::run_state::FILE),
                message,
            })?,
        cassette: o.cassette,
        // A read limit, not how the run was started: `--max-cassette-mib`
        // may be given again with `--resume`.
        max_cassette_mib: None,
        fixture_results: o.fixture_results,
        limits: crate::plugin::Limits {
            timeout: std::time::Duration::from_millis(o.timeout_ms),
            memory_bytes: o.memory_bytes,
            fuel: o.fuel,
            ..crate::plugin::Limits::default()
        },
        jobs: o.jobs,
        concurrency: o.concurrency,
        update_snapshots: o.update_snapshots,
        keep_workspaces: o.keep_workspaces,
        records: o.records,
        // The provider the run used is in `provider`; the replay mode it
        // used in `replay`.
        default_provider: None,
        default_replay: None,
        resume: true,
        case_lines,
        cells: Default::default(),
        reuse_outputs: None,
        require_canned: false,
        trial: 1,
    })
}

/// Removes the partial files a killed run left behind.
pub(super) fn clean_partials(dir: &Path) {
    for name in [CASES, OBSERVED, SUMMARY] {
        let _ = std::fs::remove_file(partial_path(&dir.join(name)));
    }
}
