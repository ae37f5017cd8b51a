//! Running one suite: the checking pass ([`crate::eval::run::check_pass`], which also
//! writes `eval-cases.json`), then the run pass ([`crate::eval::run::run_pass`]:
//! provider → preset `collect` → assertions), its results written in case
//! order by [`RunRecords`] with a journal line each, and `run.json` saying
//! how the run ended.
//!
//! An interruption (SIGINT, SIGTERM) stops the workers between cases:
//! every case that finished is written and journaled, the summary says the
//! run was interrupted, `run.json` says how far it got, and no partial
//! file is left. `--resume <run-dir>` checks the fixture is unchanged
//! (fingerprint), takes the finished cases from the journal (each line
//! checked against the suite's case at its index) and runs the rest only.
//!
//! The run directory is claimed ([`crate::eval::records::run_dir`]) before anything is
//! read from or written to it, and the claim rides in the outcome.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::files::{self, PacketWriter, partial_path};
use crate::eval::interrupt;
use crate::eval::options::{DEFAULT_CONCURRENCY, SuiteOptions, TestOptions, default_jobs};
use crate::eval::provider::calls::{AgentWorkspaces, ProviderCalls};
use crate::eval::provider::cassette::{Cassette, ReplayMode};
use crate::eval::records::journal::{self, Journal};
use crate::eval::records::run_dir::{Inputs, RunDir};
use crate::eval::records::run_records::{CaseLines, RunRecords};
use crate::eval::records::run_state::{RunOptions, RunState, RunStatus};
use crate::eval::run::canned::read_fixture_results;
use crate::eval::run::case_run::RunContext;
use crate::eval::run::check_pass::validate_suite;
use crate::eval::run::packets::{fixture_ref, header, header_keys, preset_info};
use crate::eval::run::provider_choice::RunProvider;
use crate::eval::run::run_pass::{self, RunPass};
use crate::eval::run::suite_outcome::SuiteOutcome;
use crate::eval::verdict::tally::Tally;
use crate::fixture::Suite;
use crate::plugin::Registry;
use crate::plugin::provider::ProviderSession;

/// The packets a run writes, by file name.
const CASES: &str = "eval-cases.json";
const OBSERVED: &str = "eval-observed.json";
const SUMMARY: &str = "eval-summary.json";
/// Most bytes of a coding agent's output read (its event stream, which
/// carries the tool output it saw).
const AGENT_OUTPUT_BYTES: usize = 8 * 1024 * 1024;

/// Puts the run's judge into a suite's fields: `--judge` over the
/// fixture's, the project's `[judge]` where the fixture names none.
/// Idempotent, so the experiment applies it before taking fingerprints
/// and every group's run again.
pub fn apply_judge(options: &TestOptions, body: &mut Map<String, Value>) {
    if let Some(judge) = &options.judge {
        body.insert("judge".into(), judge.clone());
    } else if let Some(judge) = &options.default_judge {
        body.entry("judge").or_insert_with(|| judge.clone());
    }
}

/// Runs one suite and writes its records. With `keep_outputs`, the outcome
/// also holds each case's output node (what later steps read).
pub fn run_suite(
    registry: &Registry,
    options: &TestOptions,
    mut suite: Suite,
    keep_outputs: bool,
) -> Result<SuiteOutcome, EvalError> {
    apply_judge(options, &mut suite.body);
    let jobs = options.jobs.unwrap_or(match suite.pair.mode {
        crate::taxonomy::Mode::Workspace => 1,
        crate::taxonomy::Mode::Messaging => default_jobs(),
    });
    // Checked before anything is written (the checking pass checks again).
    let preset = crate::eval::run::check_pass::preset_applied(registry, &mut suite)?;
    let contract = &crate::eval::run::packets::preset_description(&preset).contract;
    let redaction = options.redact.clone();
    let info = preset_info(&preset);
    let mut canned = read_fixture_results(options.fixture_results.as_deref())?;
    if let Some(canned) = &mut canned {
        crate::eval::run::canned::canned_for_trial(canned, options.trial);
    }
    let run_provider = RunProvider::for_suite(registry, options, &suite)?;
    let provider = run_provider.setup.plugin.clone();
    if provider.waits_on_io() {
        crate::plugin::net::warm_up(run_provider.setup.tls); // while the checking pass runs
    }
    let grants = run_provider.grants(&options.workspace);
    let cassette = run_provider.cassette.clone();
    let reference = run_provider.reference.clone();
    let secrets = run_provider.setup.secret_values();
    // Checks the provider's world before anything is written.
    let harness = ProviderSession::new(provider.clone(), options.limits.clone(), grants.clone())?
        .harness()
        .to_string();

    let fixture_ref = fixture_ref(&suite.file, &options.workspace);
    let mut fields: Map<String, Value> = header_keys(contract)
        .filter_map(|key| Some((key.to_string(), suite.body.get(key)?.clone())))
        .collect();
    fields.insert("suiteDisplayName".into(), json!(suite.suite_display_name));
    fields.insert("fixtureRef".into(), json!(fixture_ref));
    let output_dir = options
        .output_dir
        .clone()
        .unwrap_or_else(|| files::new_run_dir(&options.records_root()));
    // Before anything in it is read or written: a second run into it, or
    // a directory that holds what this run reads, is refused here.
    let claim = RunDir::claim(&output_dir, || {
        Inputs::of_suite(&suite).with(options.fixture_results.as_deref())
    })?;
    let resumed = if options.resume {
        let state = RunState::read(&output_dir)?;
        clean_partials(&output_dir);
        Some(state)
    } else {
        None
    };

    let mut limits = options.limits.clone();
    if run_provider.setup.agent {
        // An agent's event stream carries its tool output: allow more of it.
        limits.output_bytes = limits.output_bytes.max(AGENT_OUTPUT_BYTES);
    }
    let mut calls = ProviderCalls::new(
        provider.clone(),
        limits,
        grants.clone(),
        cassette.clone(),
        secrets,
    )
    .with_run_dir(&output_dir)
    .with_redaction(redaction.clone())
    .with_pricing(run_provider.setup.pricing.clone());
    if run_provider.setup.agent {
        calls = calls.with_agent_workspaces(AgentWorkspaces {
            source: options.workspace.clone(),
            keep: options.keep_workspaces,
            skip: vec![options.records_root(), output_dir.clone()],
        });
    }
    let calls = Arc::new(calls);
    // A provider that waits on the network or a program overlaps its calls
    // on the messaging surface (see `concurrency` below): its sessions are
    // made ready while the checking pass runs.
    let messaging = suite.pair.mode == crate::taxonomy::Mode::Messaging;
    if provider.waits_on_io() && messaging && run_provider.replay != ReplayMode::ReplayStrict {
        calls.prewarm(options.concurrency.unwrap_or(DEFAULT_CONCURRENCY));
    }

    // The checking pass writes eval-cases.json; an invalid suite leaves nothing.
    let mut cases_out = PacketWriter::create(
        &output_dir.join(CASES),
        &header(&info.cases_schema, &fields, contract),
        "cases",
    )?
    .with_redaction(redaction.clone());
    let validated = validate_suite(
        registry,
        suite,
        options.jobs.unwrap_or_else(default_jobs),
        &SuiteOptions {
            update_snapshots: options.update_snapshots,
            judge_limits: Some(options.limits.clone()),
            cassette: cassette.clone(),
            provider_env: options.provider_env.clone(),
            run_root: Some(claim.root().to_path_buf()),
        },
        Some(&mut cases_out),
        !options.resume,
    );
    let mut validated = match validated {
        Ok(validated) => validated,
        Err(error) => {
            drop(cases_out);
            claim.abandon(); // a new directory is removed again
            return Err(error);
        }
    };
    let total = validated.case_count;
    crate::eval::records::progress::add_cases(total as u64);
    if let Some(state) = &resumed
        && state.fingerprint != validated.fingerprint
    {
        drop(cases_out); // the run's own records stay as they were
        return Err(EvalError::Input {
            path: output_dir.join(crate::eval::records::run_state::FILE),
            message: format!(
                "the fixture changed since this run started (its cases or suite fields differ), so its finished cases no longer apply; start a new run with `cautilus eval test --fixture {}`",
                state.options.fixture.display()
            ),
        });
    }
    let journal_path = output_dir.join(journal::FILE);
    // The journal of a resumed run is checked line by line against the
    // suite before anything is written.
    let case_ids = validated.case_ids.take();
    let resumed = match resumed {
        Some(state) => {
            let index_of = case_ids
                .as_ref()
                .map(|ids| move |id: &str| ids.index_of(id));
            let check = index_of.as_ref().map(|f| f as &journal::IndexOf<'_>);
            match Journal::load_checked(&journal_path, total, check) {
                Ok(journal) => Some((state, journal)),
                Err(error) => {
                    drop(cases_out); // the run's own records stay as they were
                    return Err(error);
                }
            }
        }
        None => None,
    };
    drop(case_ids);
    cases_out.finish(&Map::new())?;

    let (mut state, journal) = match resumed {
        Some((mut state, journal)) => {
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
            (state, Some(journal))
        }
        None => {
            std::fs::File::create(&journal_path).map_err(|source| EvalError::Write {
                path: journal_path.clone(),
                source,
            })?;
            let state = RunState::start(
                run_options(options, &reference, run_provider.replay),
                validated.fingerprint.clone(),
                total,
            );
            (state, None)
        }
    };
    state.write(&output_dir)?;
    let finished: Vec<bool> = (0..total)
        .map(|i| journal.as_ref().is_some_and(|j| j.contains(i)))
        .collect();

    let tally = if options.case_lines == CaseLines::Keep {
        Tally::new(&info.counts)
    } else {
        Tally::without_lines(&info.counts)
    };
    let mut records = RunRecords::new(
        PacketWriter::create(
            &output_dir.join(OBSERVED),
            &header(&info.observed_schema, &fields, contract),
            "evaluations",
        )?,
        PacketWriter::create(
            &output_dir.join(SUMMARY),
            &header(&info.summary_schema, &fields, contract),
            "evaluations",
        )?,
        &journal_path,
        journal,
        tally,
        options.case_lines,
    )?
    .with_redaction(redaction.clone());
    // A coding agent is told how the fixture sets it up (`agent`).
    let mut provider_options = run_provider.setup.options.clone();
    if let Some(agent) = validated.suite.body.get("agent") {
        provider_options.insert("agent".into(), agent.clone());
    }
    if options.require_canned {
        provider_options.insert("requireCanned".into(), json!(true));
    }
    let settings_not_applied = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let suite_settings = match validated.suite.body.get("settings") {
        Some(Value::Object(settings)) => settings.clone(),
        _ => Map::new(),
    };
    let context = RunContext {
        provider: provider.id(),
        harness: &harness,
        mode: validated.suite.pair.mode.as_str(),
        fixture_ref: &fixture_ref,
        canned: canned.as_ref(),
        provider_options: &provider_options,
        root: &validated.suite.root,
        settings: &suite_settings,
        // Answers given beforehand (`--fixture-results`, or a run's
        // outputs being scored again) were generated elsewhere: no setting
        // could reach them, and none is said to be missing.
        settings_applied: match canned {
            Some(_) => None,
            None => crate::eval::provider::setup::settings_applied(&run_provider.setup.plugin),
        },
        settings_not_applied: &settings_not_applied,
    };
    // A provider that waits on the network or a program overlaps its calls
    // on the messaging surface. On the repo surface a provider that works in
    // the workspace itself would overlap the previous case's graders, so its
    // cases run one at a time, inline; a coding agent works in copies of its
    // own, so its cases overlap when asked (`--concurrency`; an agent run is
    // heavy and costs money, so one at a time by default).
    let concurrency = if provider.waits_on_io() && messaging {
        Some(options.concurrency.unwrap_or(DEFAULT_CONCURRENCY))
    } else if run_provider.setup.agent {
        options.concurrency.filter(|&slots| slots > 1)
    } else {
        None
    };
    let kept = validated.kept.take();
    let pass = RunPass {
        registry,
        validated: &validated,
        options,
        context: &context,
        finished: &finished,
        jobs,
        concurrency,
        keep_outputs,
        calls,
    };
    let worked = interrupt::announcing(|| run_pass::run(&pass, kept, &mut records));
    let interrupted = interrupt::signal_name();
    // A resumed run keeps what its earlier part recorded.
    let mut not_applied: std::collections::BTreeSet<String> =
        state.settings_not_applied.drain(..).collect();
    not_applied.extend(
        settings_not_applied
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned(),
    );
    state.settings_not_applied = not_applied.into_iter().collect();
    // What was recorded is kept whatever happened to the run.
    let saved = cassette.as_deref().map_or(Ok(()), Cassette::save);
    if let Err(error) = worked {
        let written = records.written();
        drop(records);
        state.end(RunStatus::Failed, written);
        state.error = Some(error.to_string());
        state.write(&output_dir)?;
        return Err(error);
    }
    saved?;
    let (tally, outputs) = records.finish(total, interrupted, files::now_rfc3339())?;
    let done = usize::try_from(tally.total()).unwrap_or(usize::MAX);
    match interrupted {
        Some(signal) => {
            state.end(RunStatus::Interrupted, done);
            state.interrupted_by = Some(signal.to_string());
        }
        None => state.end(RunStatus::Completed, done),
    }
    state.write(&output_dir)?;
    Ok(SuiteOutcome {
        tally,
        summary_path: output_dir.join(SUMMARY),
        output_dir: Some(output_dir),
        outputs,
        interrupted,
        finished: done,
        total,
        _scratch: None,
        _claim: Some(claim),
    })
}

/// What `run.json` records of the options (what `--resume` reuses).
fn run_options(options: &TestOptions, reference: &str, replay: ReplayMode) -> RunOptions {
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
fn clean_partials(dir: &Path) {
    for name in [CASES, OBSERVED, SUMMARY] {
        let _ = std::fs::remove_file(partial_path(&dir.join(name)));
    }
}
