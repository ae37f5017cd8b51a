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
//! checked against the suite's case at its index) and runs the rest only,
//! scoring those whose answers the run kept (`answers.jsonl`, checked the
//! same way) without calling the provider again.
//!
//! The run directory is claimed ([`crate::eval::records::run_dir`]) before anything is
//! read from or written to it, and the claim rides in the outcome.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::files::{self, PacketWriter};
use crate::eval::interrupt;
use crate::eval::options::{DEFAULT_CONCURRENCY, SuiteOptions, TestOptions, default_jobs};
use crate::eval::provider::answers::{self, Answers};
use crate::eval::provider::calls::{AgentWorkspaces, ProviderCalls};
use crate::eval::provider::cassette::{Cassette, ReplayMode};
use crate::eval::records::journal::{self, Journal};
use crate::eval::records::run_dir::{Inputs, RunDir};
use crate::eval::records::run_records::{CaseLines, RunRecords};
use crate::eval::records::run_state::{RunState, RunStatus};
use crate::eval::run::canned::read_fixture_results;
use crate::eval::run::case_run::RunContext;
use crate::eval::run::check_pass::validate_suite;
use crate::eval::run::packets::{
    CASES, OBSERVED, SUMMARY, fixture_ref, header, header_keys, preset_info,
};
use crate::eval::run::provider_choice::RunProvider;
use crate::eval::run::resume::{clean_partials, resume_state, run_options};
use crate::eval::run::run_pass::{self, RunPass};
use crate::eval::run::suite_outcome::SuiteOutcome;
use crate::eval::verdict::tally::Tally;
use crate::fixture::Suite;
use crate::plugin::Registry;
use crate::plugin::provider::ProviderSession;

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
    let canned = read_fixture_results(options.fixture_results.as_deref(), options.trial)?;
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

    let messaging = suite.pair.mode == crate::taxonomy::Mode::Messaging;
    let calls = provider_calls(
        options,
        &run_provider,
        &grants,
        secrets,
        &output_dir,
        messaging,
    );

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
        // A resumed run reads its cases again (it skips those done).
        (!options.resume).then_some(output_dir.as_path()),
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
    // The provider's answers are kept as its calls finish when they cost
    // something to ask again: a provider that computes them (no network,
    // no program) answers again at no cost.
    let answers_path = provider
        .waits_on_io()
        .then(|| output_dir.join(answers::FILE));
    // The journal and the kept answers of a resumed run are checked line
    // by line against the suite before anything is written.
    let case_ids = validated.case_ids.take();
    let resumed = match resumed {
        Some(state) => {
            let index_of = case_ids
                .as_ref()
                .map(|ids| move |id: &str| ids.index_of(id));
            let check = index_of.as_ref().map(|f| f as &journal::IndexOf<'_>);
            let loaded = Journal::load_checked(&journal_path, total, check).and_then(|journal| {
                let answers = answers_path
                    .as_deref()
                    .map(|path| Answers::resume(path, total, check, &|i| journal.contains(i)))
                    .transpose()?;
                Ok((journal, answers))
            });
            match loaded {
                Ok((journal, answers)) => Some((state, journal, answers)),
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

    let (state, journal) = match resumed {
        Some((state, journal, answers)) => {
            let answered = answers.as_ref().map_or(0, Answers::kept);
            if let Some(answers) = answers {
                calls.keep_answers(answers);
            }
            resume_state(state, journal, &output_dir, total, answered)
        }
        None => {
            std::fs::File::create(&journal_path).map_err(|source| EvalError::Write {
                path: journal_path.clone(),
                source,
            })?;
            // A new run in an earlier run's directory: none of its answers.
            match &answers_path {
                Some(path) => calls.keep_answers(Answers::start(path)?),
                None => remove_answers(&output_dir),
            }
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
    let concurrency = concurrency(options, &run_provider, messaging);
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
    drop(pass); // its calls hold the kept answers open
    let settings_not_applied = settings_not_applied
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    finish(
        Ended {
            worked,
            records,
            state,
            settings_not_applied,
            cassette: cassette.as_deref(),
            total,
        },
        output_dir,
        claim,
    )
}

/// A run's provider calls: a session pool with its limits (a coding
/// agent's event stream carries its tool output, so more of it is read),
/// grants, cassette, secrets, records directory, redaction and pricing; a
/// coding agent's samples each in a fresh workspace copy. A provider that
/// waits on the network or a program overlaps its calls on the messaging
/// surface (see [`concurrency`]): its sessions are made ready while the
/// checking pass runs.
fn provider_calls(
    options: &TestOptions,
    run_provider: &RunProvider,
    grants: &Arc<crate::plugin::Grants>,
    secrets: Vec<String>,
    output_dir: &Path,
    messaging: bool,
) -> Arc<ProviderCalls> {
    let provider = &run_provider.setup.plugin;
    let mut limits = options.limits.clone();
    if run_provider.setup.agent {
        limits.output_bytes = limits.output_bytes.max(AGENT_OUTPUT_BYTES);
    }
    let mut calls = ProviderCalls::new(
        provider.clone(),
        limits,
        grants.clone(),
        run_provider.cassette.clone(),
        secrets,
    )
    .with_run_dir(output_dir)
    .with_redaction(options.redact.clone())
    .with_pricing(run_provider.setup.pricing.clone())
    .with_trial(options.trial);
    if run_provider.setup.agent {
        calls = calls.with_agent_workspaces(AgentWorkspaces {
            source: options.workspace.clone(),
            keep: options.keep_workspaces,
            skip: vec![options.records_root(), output_dir.to_path_buf()],
        });
    }
    let calls = Arc::new(calls);
    if provider.waits_on_io() && messaging && run_provider.replay != ReplayMode::ReplayStrict {
        calls.prewarm(options.concurrency.unwrap_or(DEFAULT_CONCURRENCY));
    }
    calls
}

/// Provider calls in flight at once. A provider that waits on the network
/// or a program overlaps its calls on the messaging surface. On the repo
/// surface a provider that works in the workspace itself would overlap the
/// previous case's graders, so its cases run one at a time, inline; a
/// coding agent works in copies of its own, so its cases overlap when asked
/// (`--concurrency`; an agent run is heavy and costs money, so one at a
/// time by default).
fn concurrency(
    options: &TestOptions,
    run_provider: &RunProvider,
    messaging: bool,
) -> Option<usize> {
    if run_provider.setup.plugin.waits_on_io() && messaging {
        Some(options.concurrency.unwrap_or(DEFAULT_CONCURRENCY))
    } else if run_provider.setup.agent {
        options.concurrency.filter(|&slots| slots > 1)
    } else {
        None
    }
}

/// Removes the provider answers kept in `dir` (a resume aid only: see
/// [`crate::eval::provider::answers`]), if any.
fn remove_answers(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(answers::FILE));
}

/// How the run pass ended, and what the run still holds.
struct Ended<'a> {
    worked: Result<(), EvalError>,
    records: RunRecords,
    state: RunState,
    settings_not_applied: std::collections::BTreeSet<String>,
    cassette: Option<&'a Cassette>,
    total: usize,
}

/// Ends a run: the settings its provider did not apply added to those of
/// an earlier part, what was recorded kept whatever happened, the records
/// finished (or, when the run pass failed, `run.json` saying so), and
/// `run.json` saying how it ended.
fn finish(
    ended: Ended<'_>,
    output_dir: std::path::PathBuf,
    claim: RunDir,
) -> Result<SuiteOutcome, EvalError> {
    let Ended {
        worked,
        records,
        mut state,
        settings_not_applied,
        cassette,
        total,
    } = ended;
    let interrupted = interrupt::signal_name();
    // A resumed run keeps what its earlier part recorded.
    let mut not_applied: std::collections::BTreeSet<String> =
        state.settings_not_applied.drain(..).collect();
    not_applied.extend(settings_not_applied);
    state.settings_not_applied = not_applied.into_iter().collect();
    // What was recorded is kept whatever happened to the run.
    let saved = cassette.map_or(Ok(()), Cassette::save);
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
    if interrupted.is_none() {
        // Every case is in the journal: nothing is left to resume.
        remove_answers(&output_dir);
    }
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
