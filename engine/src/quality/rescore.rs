//! `eval evaluate --input <packet> --fixture <fixture>`: an observed packet
//! scored as `eval test` scores a run of the fixture. A preset scores only
//! what the packet carries (`expected`); the fixture's assertions (case
//! and suite level, scorers, graders, judges) and its expectations live in
//! the fixture. So the packet's answers become the fixture backend's canned
//! answers ([`super::reuse::answers`]) and the fixture runs on them in a
//! scratch directory, calling no provider: on the packet `eval test`
//! wrote, the verdicts are the run's.
//!
//! Every case of the fixture needs an answer in the packet (a case without
//! one fails, saying so); the fixture is run as written (a variant's
//! overrides are not applied).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::eval::{self, CaseLines, EvalError, SuiteOutcome, TestOptions, TestRun};
use crate::plugin::Registry;

/// What re-scoring needs besides the packet and the fixture.
#[derive(Debug, Clone, Default)]
pub struct RescoreOptions {
    /// Also write the summary packet here.
    pub output: Option<PathBuf>,
    pub jobs: Option<usize>,
    /// The project's `[judge]` and provider settings, as `eval test`
    /// applies them.
    pub default_judge: Option<Value>,
    pub provider_env: std::collections::BTreeMap<String, String>,
}

/// A re-scored packet: the outcome, whose summary lives in `_scratch`
/// unless it was also written to `--output`.
pub struct Rescored {
    pub outcome: SuiteOutcome,
    _scratch: tempfile::TempDir,
}

fn input_error(path: &Path, message: String) -> EvalError {
    EvalError::Input {
        path: path.to_path_buf(),
        message,
    }
}

/// Scores the packet at `input` with `fixture` (see the module docs).
pub fn rescore(
    registry: &Registry,
    input: &Path,
    fixture: &Path,
    options: &RescoreOptions,
) -> Result<Rescored, EvalError> {
    let text = std::fs::read_to_string(input)
        .map_err(|e| input_error(input, format!("cannot read: {e}")))?;
    let observed: Value = serde_json::from_str(&text)
        .map_err(|e| input_error(input, format!("not valid JSON: {e}")))?;
    if !observed.get("evaluations").is_some_and(Value::is_array) {
        return Err(input_error(
            input,
            "has no `evaluations` list: not an observed packet".into(),
        ));
    }
    if observed["surface"]
        .as_str()
        .is_some_and(crate::taxonomy::works_in_a_workspace)
    {
        return Err(input_error(
            input,
            "--fixture re-scores app packets; a coding agent's work in its workspace cannot be replayed from its outputs (score the packet without --fixture, or run the suite again)".into(),
        ));
    }
    let scratch = tempfile::tempdir().map_err(|source| EvalError::Write {
        path: std::env::temp_dir(),
        source,
    })?;
    let answers = scratch.path().join("answers.json");
    // The answers are where the fixture's preset says its evaluations
    // hold them (a fixture that cannot be read is refused by the run below,
    // which says why).
    let contract = match crate::fixture::load_fixture_within(fixture, None) {
        Ok(crate::fixture::Fixture::Suite(suite)) => {
            eval::run::check_pass::declared_contract(registry, &suite)
        }
        _ => crate::fixture::SuiteContract::default(),
    };
    eval::files::write_json(
        &answers,
        &Value::Object(super::reuse::answers(&observed, &contract)),
    )?;
    let cwd = std::env::current_dir().map_err(|e| input_error(fixture, e.to_string()))?;
    let test = TestOptions {
        fixture: fixture.to_path_buf(),
        path_root: None,
        redact: eval::redact::Redaction::default(),
        default_judge: options.default_judge.clone(),
        judge: None,
        provider_env: options.provider_env.clone(),
        workspace: cwd,
        output_dir: Some(scratch.path().join("run")),
        records: Some(scratch.path().to_path_buf()),
        default_provider: None,
        default_replay: None,
        provider: Some("fixture".into()),
        fixture_results: Some(answers),
        grants: eval::provider::setup::GrantFlags::default(),
        replay: None,
        cassette: None,
        max_cassette_mib: None,
        // A judge's calls get the time `eval test` gives provider calls.
        limits: crate::plugin::Limits {
            timeout: std::time::Duration::from_secs(600),
            ..crate::plugin::Limits::default()
        },
        jobs: options.jobs,
        concurrency: None,
        update_snapshots: false,
        keep_workspaces: false,
        resume: false,
        case_lines: CaseLines::Keep,
        cells: eval::CellFilters::default(),
        reuse_outputs: None,
        require_canned: true,
        trial: 1,
    };
    let mut outcome = match eval::test(registry, &test)? {
        TestRun::Suite(outcome) => outcome,
        TestRun::Steps(_) => {
            return Err(input_error(
                fixture,
                "a steps fixture's packets are per step; give the fixture of one step's suite"
                    .into(),
            ));
        }
    };
    if let Some(output) = &options.output {
        let summary = std::fs::read(&outcome.summary_path).map_err(|source| EvalError::Write {
            path: outcome.summary_path.clone(),
            source,
        })?;
        eval::files::write_bytes(output, &summary)?;
        outcome.summary_path = output.clone();
    }
    // The scratch run is not a run of the project's: no records are kept.
    outcome.output_dir = None;
    Ok(Rescored {
        outcome,
        _scratch: scratch,
    })
}
