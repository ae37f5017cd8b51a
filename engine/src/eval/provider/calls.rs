//! A run's calls to its provider: every sample of every case goes through
//! here, from the cassette or live, with the granted secrets scrubbed from
//! whatever comes back; each case's answers kept in the run directory as
//! soon as they are all in, and taken from there by a resumed run
//! ([`crate::eval::provider::answers`]).
//!
//! Calls are futures on the I/O runtime ([`crate::plugin::io`]). Each call
//! in flight has a provider session of its own, taken from a pool and put
//! back after, so the pool holds at most as many sessions as calls were
//! ever in flight at once (the run's concurrency).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::eval::cases::workspace_copy::{WorkspaceCopy, fresh_copy};
use crate::eval::provider::answers::Answers;
use crate::eval::provider::cassette::{Cassette, Timed};
use crate::eval::provider::observation_scrub::scrub_observation;
use crate::plugin::bindings::preset_api::Sample;
use crate::plugin::bindings::provider_api::Invocation;
use crate::plugin::provider::ProviderSession;
use crate::plugin::{Grants, Limits, Plugin};
use crate::secrets::scrub;

/// The provider of a run, its sessions and its cassette.
pub struct ProviderCalls {
    plugin: Arc<Plugin>,
    limits: Limits,
    grants: Arc<Grants>,
    /// Where calls are recorded or replayed from (`--replay`), if anywhere.
    cassette: Option<Arc<Cassette>>,
    /// The values of the secrets the provider is granted: redacted from
    /// whatever it answers before anything is recorded.
    secrets: Vec<String>,
    idle: Mutex<Vec<ProviderSession>>,
    /// A coding agent's samples each run in a fresh copy of the workspace.
    agent: Option<AgentWorkspaces>,
    /// Where sample transcripts are saved (the run directory).
    run_dir: Option<PathBuf>,
    /// The user's redaction paths, applied to saved transcripts.
    redaction: crate::eval::redact::Redaction,
    /// Which costs of live calls stand (before they are recorded).
    pricing: crate::eval::provider::pricing::Pricing,
    /// Its calls are recorded per case: it hands the case id to what it
    /// calls ([`crate::eval::provider::cassette::call_key`]).
    keyed_by_case: bool,
    /// The experiment's trial these calls are of (1-based): a later trial's
    /// calls are recorded apart from the first's.
    trial: u32,
    /// Where each case's answers are kept as they finish, and an earlier
    /// part of the run's are taken from (set once the run knows which).
    answers: OnceLock<Answers>,
}

/// Where a coding agent's samples run: each in a fresh copy of its case's
/// workspace template, else of the run's workspace.
#[derive(Debug, Clone)]
pub struct AgentWorkspaces {
    /// The run's workspace (`--workspace`).
    pub source: PathBuf,
    /// Keep every copy for inspection (`--keep-workspaces`) instead of
    /// removing it after its sample.
    pub keep: bool,
    /// Directories never part of a copy: the records root and the run's
    /// output directory (recording must not change the hash a cassette is
    /// keyed by, and an agent must not read other cases' transcripts).
    pub skip: Vec<PathBuf>,
}

/// A case's samples, and the time to first byte of its first answer
/// (host-measured; `None` when no call made an HTTP request).
pub struct CaseSamples {
    pub samples: Vec<Sample>,
    pub first_byte_ms: Option<u64>,
}

/// Directory of the run directory that holds sample transcripts.
pub const TRANSCRIPTS: &str = "transcripts";

impl ProviderCalls {
    pub fn new(
        plugin: Arc<Plugin>,
        limits: Limits,
        grants: Arc<Grants>,
        cassette: Option<Arc<Cassette>>,
        secrets: Vec<String>,
    ) -> Self {
        // The suite's program reads the case id on stdin; the suite's
        // service gets it wherever its template says `${caseId}`.
        let keyed_by_case = crate::eval::provider::exec::is_exec(&plugin)
            || crate::eval::provider::http::is_http(&plugin);
        Self {
            plugin,
            keyed_by_case,
            trial: 1,
            limits,
            grants,
            cassette,
            secrets,
            idle: Mutex::new(Vec::new()),
            agent: None,
            run_dir: None,
            redaction: crate::eval::redact::Redaction::default(),
            pricing: crate::eval::provider::pricing::Pricing::default(),
            answers: OnceLock::new(),
        }
    }

    /// Its calls are of trial `trial` (1-based) of an experiment.
    pub fn with_trial(mut self, trial: u32) -> Self {
        self.trial = trial.max(1);
        self
    }

    /// Prices live calls as `pricing` says.
    pub fn with_pricing(mut self, pricing: crate::eval::provider::pricing::Pricing) -> Self {
        self.pricing = pricing;
        self
    }

    /// Runs every sample in a fresh copy of its workspace (a coding agent).
    pub fn with_agent_workspaces(mut self, agent: AgentWorkspaces) -> Self {
        self.agent = Some(agent);
        self
    }

    /// Saves sample transcripts under `run_dir`.
    pub fn with_run_dir(mut self, run_dir: &Path) -> Self {
        self.run_dir = Some(run_dir.to_path_buf());
        self
    }

    /// Redacts these paths in the transcripts it saves.
    pub fn with_redaction(mut self, redaction: crate::eval::redact::Redaction) -> Self {
        self.redaction = redaction;
        self
    }

    /// Keeps each case's answers in `answers` as they finish, and answers
    /// a case it kept earlier from there (set once; later calls are
    /// ignored). Set after the calls are made ready, as a resumed run
    /// checks its file against the suite first.
    pub fn keep_answers(&self, answers: Answers) {
        let _ = self.answers.set(answers);
    }

    /// Whether the provider may wait on the network or a program (see
    /// [`Plugin::waits_on_io`]).
    pub fn waits_on_io(&self) -> bool {
        self.plugin.waits_on_io()
    }

    /// Runs `calls` (this provider's calls, awaited in turn) to completion
    /// on the calling thread: on the I/O runtime when the provider may wait
    /// on the network or a program (its pooled connections must be driven
    /// whichever thread asks next), else on this thread's own runtime, so
    /// a run of such a provider starts no I/O threads.
    pub fn block_on<F: std::future::Future>(&self, calls: F) -> F::Output {
        if self.waits_on_io() {
            crate::plugin::io::block_on(calls)
        } else {
            crate::plugin::io::block_on_here(calls)
        }
    }

    /// The provider's id (what a cassette entry is keyed by).
    pub fn provider_id(&self) -> &str {
        self.plugin.id()
    }

    /// Takes every sample of case `case` (its index in the suite), in
    /// order, in `workspace` (the case's own copy) when it has one: as an
    /// earlier part of the run kept them, else from the provider, then
    /// keeps them. A provider failure is that sample's outcome (the preset
    /// decides what it means); it never stops the run.
    pub async fn samples(
        &self,
        case: usize,
        requests: Vec<Invocation>,
        workspace: Option<PathBuf>,
    ) -> CaseSamples {
        let answers = self.answers.get();
        let case_id = requests.first().map(|r| r.case_id.clone());
        let kept = answers.zip(case_id.as_deref());
        if let Some((answers, case_id)) = kept
            && let Some(earlier) = answers.earlier(case, case_id, requests.len())
        {
            return earlier;
        }
        let taken = self.take_samples(requests, workspace).await;
        if let Some((answers, case_id)) = kept {
            answers.keep(case, case_id, &taken, &self.redaction, &self.secrets);
        }
        taken
    }

    /// Every sample of one case from the cassette or the provider.
    async fn take_samples(
        &self,
        requests: Vec<Invocation>,
        workspace: Option<PathBuf>,
    ) -> CaseSamples {
        let mut session = match self.take_session() {
            Ok(session) => session,
            Err(error) => {
                let started = Instant::now();
                let samples = requests
                    .iter()
                    .map(|_| Sample {
                        outcome: Err(error.clone()),
                        duration_ms: elapsed_ms(started),
                        transcript: None,
                    })
                    .collect();
                return CaseSamples {
                    samples,
                    first_byte_ms: None,
                };
            }
        };
        let mut samples = Vec::with_capacity(requests.len());
        // The case's time to first byte is its first answer's, as its
        // duration is ([`crate::eval::assert::assertions`] reads the first too).
        let mut first_answer: Option<Option<u64>> = None;
        let mut took = |samples: &mut Vec<Sample>, (sample, first_byte): (Sample, Option<u64>)| {
            if sample.outcome.is_ok() {
                first_answer.get_or_insert(first_byte);
            }
            samples.push(sample);
        };
        for (index, request) in requests.iter().enumerate() {
            let Some(agent) = &self.agent else {
                session.set_case_workspace(workspace.clone());
                took(
                    &mut samples,
                    self.sample(&mut session, request, index).await,
                );
                continue;
            };
            let started = Instant::now();
            // Copying a tree is blocking file I/O: off the I/O workers.
            let source = workspace.clone().unwrap_or_else(|| agent.source.clone());
            let skip = agent.skip.clone();
            let copied = tokio::task::spawn_blocking(move || fresh_copy(&source, &skip))
                .await
                .unwrap_or_else(|e| {
                    Err(crate::eval::cases::workspace_copy::CopyError::Io {
                        path: std::env::temp_dir(),
                        source: std::io::Error::other(e.to_string()),
                    })
                });
            let copy = match copied {
                Ok(copy) => copy,
                Err(error) => {
                    samples.push(Sample {
                        outcome: Err(error.to_string()),
                        duration_ms: elapsed_ms(started),
                        transcript: None,
                    });
                    continue;
                }
            };
            session.set_case_workspace(Some(copy.dir.path().to_path_buf()));
            let request = with_workspace_hash(request, &copy);
            took(
                &mut samples,
                self.sample(&mut session, &request, index).await,
            );
            if agent.keep {
                let kept = copy.dir.keep();
                eprintln!(
                    "kept the workspace of case `{}` sample {}: {}",
                    crate::term::inline(&request.case_id),
                    index + 1,
                    crate::term::shown(kept.display())
                );
            }
        }
        session.set_case_workspace(None);
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(session);
        CaseSamples {
            samples,
            first_byte_ms: first_answer.flatten(),
        }
    }

    async fn sample(
        &self,
        session: &mut ProviderSession,
        request: &Invocation,
        index: usize,
    ) -> (Sample, Option<u64>) {
        let started = Instant::now();
        let live = async {
            let outcome = session
                .invoke(request)
                .await
                .map(|o| self.pricing.apply(o))
                .map_err(|e| e.to_string());
            let duration_ms = elapsed_ms(started);
            let first_byte_ms = session
                .first_content()
                .map(|at| millis(at.saturating_duration_since(started)).min(duration_ms));
            Timed {
                outcome,
                duration_ms,
                first_byte_ms,
            }
        };
        let (outcome, first_byte_ms) = match &self.cassette {
            Some(cassette) => {
                cassette
                    .answer_timed(
                        "provider",
                        self.plugin.id(),
                        request,
                        crate::eval::provider::cassette::CallPlace {
                            sample: index,
                            trial: self.trial,
                            by_case: self.keyed_by_case,
                        },
                        live,
                    )
                    .await
            }
            None => {
                let timed = live.await;
                (timed.outcome, timed.first_byte_ms)
            }
        };
        let mut transcript = None;
        let outcome = match outcome {
            Ok(observation) => {
                let mut observation = scrub_observation(observation, &self.secrets);
                let text = observation.trace.as_mut().and_then(|t| t.transcript.take());
                if let (Some(text), Some(run_dir)) = (text, &self.run_dir) {
                    let text = self.redaction.apply_jsonl(&text);
                    transcript = save_transcript(run_dir, &request.case_id, index, &text);
                }
                Ok(observation)
            }
            Err(error) => Err(scrub(&error, &self.secrets)),
        };
        let sample = Sample {
            outcome,
            duration_ms: elapsed_ms(started),
            transcript,
        };
        (sample, first_byte_ms)
    }

    /// Gets `count` sessions ready on the I/O runtime, in the background
    /// (the run's checking pass leaves a core idle; the first calls then
    /// find their instances made). A session that fails to start is left
    /// out: the call that needs it reports why.
    pub fn prewarm(self: &Arc<Self>, count: usize) {
        let calls = self.clone();
        drop(crate::plugin::io::handle().spawn(async move {
            for _ in 0..count {
                let Ok(mut session) = ProviderSession::new(
                    calls.plugin.clone(),
                    calls.limits.clone(),
                    calls.grants.clone(),
                ) else {
                    return;
                };
                if session.warm().await.is_err() {
                    return;
                }
                calls
                    .idle
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(session);
            }
        }));
    }

    fn take_session(&self) -> Result<ProviderSession, String> {
        let pooled = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(session) => Ok(session),
            None => ProviderSession::new(
                self.plugin.clone(),
                self.limits.clone(),
                self.grants.clone(),
            )
            .map_err(|e| e.to_string()),
        }
    }
}

/// Most root entries named to an agent provider.
const ROOT_ENTRIES: usize = 1000;

/// `request` told about its workspace copy: the copy's hash
/// (`workspaceHash`), so a recorded answer is keyed by the workspace it was
/// given and a changed repository is a cassette miss, not a stale pass; and
/// the names at its root (`workspaceRoot`), so a provider knows which
/// instruction files its harness loads by itself.
fn with_workspace_hash(request: &Invocation, copy: &WorkspaceCopy) -> Invocation {
    let mut options = request
        .options
        .as_deref()
        .and_then(|text| serde_json::from_str::<Map<String, Value>>(text).ok())
        .unwrap_or_default();
    options.insert("workspaceHash".into(), Value::String(copy.hash.clone()));
    options.insert(
        "workspaceDir".into(),
        Value::String(copy.dir.path().to_string_lossy().into_owned()),
    );
    let mut names: Vec<String> = std::fs::read_dir(copy.dir.path())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.truncate(ROOT_ENTRIES);
    options.insert(
        "workspaceRoot".into(),
        Value::Array(names.into_iter().map(Value::String).collect()),
    );
    Invocation {
        options: Some(Value::Object(options).to_string()),
        ..request.clone()
    }
}

/// Saves a sample's (already redacted) transcript as
/// `transcripts/<case>-<sample>.jsonl` in the run directory; returns that
/// relative path, or `None` (saying why) when it cannot be written: a lost
/// transcript never fails the case.
fn save_transcript(run_dir: &Path, case_id: &str, index: usize, text: &str) -> Option<String> {
    // Bounded, and distinct per case id (two that sanitize alike too).
    let name = crate::file_names::stem(case_id);
    let relative = format!("{TRANSCRIPTS}/{name}-{}.jsonl", index + 1);
    match crate::eval::files::write_bytes(&run_dir.join(&relative), text.as_bytes()) {
        Ok(()) => Some(relative),
        Err(error) => {
            eprintln!(
                "warning: the transcript of case `{}` was not saved: {}",
                crate::term::inline(case_id),
                crate::term::shown(&error)
            );
            None
        }
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    millis(started.elapsed())
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
