//! Cassettes: provider calls recorded once and replayed, so a suite that
//! ran against a real model runs again offline, byte for byte, in CI.
//!
//! A call's key is the sha256 of its normalized request: the kind
//! (`provider` for a case's call, `model` for a judge's), the adapter id, the mode, the model, the system prompt,
//! the messages, the input and the provider settings, without what does not
//! change the answer (the case id, the expected value, timeouts, endpoint
//! and key names). The case id is kept for a provider that hands it to
//! what it calls (the suite's program or service: `exec`, `http`), and an
//! experiment's trial after the first is part of the key (each trial is a
//! call of its own; the first keeps the key of a run without trials). So one cassette serves every case and variant that makes
//! the same call. The file, `<workspace>/.cautilus/cassettes/<name>.json`
//! (`cautilus.cassette.v1`), holds `recordedAt`, `cautilusVersion`, the
//! models seen and one entry per key (the normalized request and the
//! observation). It is redacted when written, always: every field whose
//! name looks like a credential (`authorization`, `api_key`, `token`,
//! `secret`, `password`, `cookie`, …) at any depth, and every value of a
//! secret the run granted (read from the environment), become
//! `[redacted]`.
//!
//! Modes (`--replay`): `live` ignores cassettes; `record-new` answers from
//! the cassette and records misses; `replay-strict` answers only from it
//! (the provider is granted nothing and never called; a miss is the case's
//! error, naming the key); `refresh` calls live and re-records every call.
//!
//! A cassette is read within a size cap and held as its text, an entry
//! parsed only when a call hits it ([`crate::eval::provider::cassette_file`]). A hit is
//! replayed only when the entry's stored `request` is the call's request
//! (equal, except where redaction wrote `[redacted]`): an entry whose
//! request was edited, or that was moved under another key, errors its
//! case, naming the key, instead of answering a call it was not recorded
//! for. An edited *observation* under its own request is replayed: a
//! cassette records answers, it does not sign them (review cassette diffs
//! as you review code).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::eval::EvalError;
use crate::eval::files;
use crate::eval::provider::cassette_file::{self, Stored};
use crate::eval::provider::observation_json::{observation_from, observation_json};
use crate::plugin::bindings::provider_api::Invocation;
use crate::plugin::bindings::types::Observation;
use crate::secrets::credential_field;

pub use crate::eval::provider::call_key::{CallPlace, call_key};
pub use crate::eval::provider::cassette_file::SCHEMA;

/// Past this age a cassette is reported stale (its model may have changed).
const STALE_DAYS: i64 = 90;

/// How a run uses its cassette.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplayMode {
    #[default]
    Live,
    RecordNew,
    ReplayStrict,
    Refresh,
}

impl ReplayMode {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "live" => Ok(Self::Live),
            "record-new" => Ok(Self::RecordNew),
            "replay-strict" => Ok(Self::ReplayStrict),
            "refresh" => Ok(Self::Refresh),
            other => Err(format!(
                "unknown replay mode `{other}`; use live, record-new, replay-strict or refresh"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::RecordNew => "record-new",
            Self::ReplayStrict => "replay-strict",
            Self::Refresh => "refresh",
        }
    }
}

/// What a live call gave, and how long it took: in all, and to the first
/// byte of its answer (when it made an HTTP request).
pub struct Timed {
    pub outcome: Result<Observation, String>,
    pub duration_ms: u64,
    pub first_byte_ms: Option<u64>,
}

/// A run's cassette.
pub struct Cassette {
    /// Where it is written (and read, unless `read_from` says otherwise).
    path: PathBuf,
    /// Where it was read from: `path`, or the name an earlier version gave it.
    read_from: PathBuf,
    mode: ReplayMode,
    /// Values that must never be written (the run's granted secrets).
    secrets: Mutex<Vec<String>>,
    /// The user's redaction paths (`redact`).
    redaction: crate::eval::redact::Redaction,
    state: Mutex<State>,
}

impl std::fmt::Debug for Cassette {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cassette")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

struct State {
    /// The entries read from the file.
    stored: Stored,
    /// The entries this run recorded (pretty JSON text), over `stored`.
    recorded: BTreeMap<String, String>,
    changed: bool,
}

impl Cassette {
    /// Opens the cassette at `path`, else at `fallback` (the name an
    /// earlier version gave it) when only that exists; missing is empty,
    /// except in `replay-strict`. A file larger than `max_bytes` is
    /// refused before it is read. Entries it records are redacted of
    /// `secrets` and of `redaction`'s paths.
    pub fn open(
        path: PathBuf,
        fallback: Option<PathBuf>,
        mode: ReplayMode,
        secrets: Vec<String>,
        redaction: crate::eval::redact::Redaction,
        max_bytes: u64,
    ) -> Result<Self, EvalError> {
        let read_from = match fallback {
            Some(fallback) if !path.exists() && fallback.exists() => fallback,
            _ => path.clone(),
        };
        let error = |message: String| EvalError::Input {
            path: read_from.clone(),
            message,
        };
        let stored = match cassette_file::read(&read_from, max_bytes).map_err(error)? {
            Some(stored) => {
                if let Some(age) = stored.recorded_at.as_deref().and_then(age_days)
                    && age > STALE_DAYS
                {
                    eprintln!(
                        "warning: cassette {} was recorded {age} days ago; its models may answer differently now (re-record with `--replay refresh`)",
                        crate::term::shown(read_from.display())
                    );
                }
                stored
            }
            None if mode == ReplayMode::ReplayStrict => {
                return Err(error(
                    "`--replay replay-strict` needs a recorded cassette and there is none here; record one with `--replay record-new`".into(),
                ));
            }
            None => Stored::default(),
        };
        Ok(Self {
            path,
            read_from,
            mode,
            secrets: Mutex::new(secrets),
            redaction,
            state: Mutex::new(State {
                stored,
                recorded: BTreeMap::new(),
                changed: false,
            }),
        })
    }

    pub fn mode(&self) -> ReplayMode {
        self.mode
    }

    /// Also redacts these values (secrets granted to the provider or the
    /// judge) when recording.
    pub fn add_secrets(&self, secrets: Vec<String>) {
        let mut known = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        known.extend(secrets);
    }

    /// Answers `request` from the cassette or by awaiting `live` (timed by
    /// the caller), as the mode says.
    pub async fn answer(
        &self,
        kind: &str,
        adapter: &str,
        request: &Invocation,
        sample: usize,
        live: impl std::future::Future<Output = (Result<Observation, String>, u64)>,
    ) -> Result<Observation, String> {
        let live = async {
            let (outcome, duration_ms) = live.await;
            Timed {
                outcome,
                duration_ms,
                first_byte_ms: None,
            }
        };
        self.answer_timed(kind, adapter, request, CallPlace::sample(sample), live)
            .await
            .0
    }

    /// [`Self::answer`] for a call timed to its first byte too: the answer
    /// and its time to first byte (live, or as recorded: a replayed call
    /// keeps the times of the call it replays, as it keeps `durationMs`).
    /// Keyed by its place ([`call_key`]).
    pub async fn answer_timed(
        &self,
        kind: &str,
        adapter: &str,
        request: &Invocation,
        place: CallPlace,
        live: impl std::future::Future<Output = Timed>,
    ) -> (Result<Observation, String>, Option<u64>) {
        let (key, normalized) = call_key(kind, adapter, request, place);
        if self.mode != ReplayMode::Refresh {
            let hit = {
                let state = self.lock();
                state
                    .recorded
                    .get(&key)
                    .map(String::as_str)
                    .or_else(|| state.stored.get(&key))
                    .map(str::to_string)
            };
            if let Some(entry) = hit {
                return match self.replay(&key, &normalized, &entry) {
                    Ok((observation, first_byte_ms)) => (Ok(observation), first_byte_ms),
                    Err(error) => (Err(error), None),
                };
            }
            if self.mode == ReplayMode::ReplayStrict {
                let workspace = if normalized["settings"].get("workspaceHash").is_some() {
                    " A coding agent's calls are keyed by the content of its workspace too: a changed repository is a miss."
                } else {
                    ""
                };
                return (
                    Err(format!(
                        "no recorded answer for this call (cassette key {key}) in {}; record it with `--replay record-new` (replay-strict makes no live call).{workspace}",
                        self.path.display()
                    )),
                    None,
                );
            }
        }
        let Timed {
            outcome,
            duration_ms,
            first_byte_ms,
        } = live.await;
        let mut observation = match outcome {
            Ok(observation) => observation,
            Err(error) => return (Err(error), first_byte_ms),
        };
        observation.duration_ms = observation.duration_ms.or(Some(duration_ms));
        let mut entry = json!({
            "recordedAt": files::now_rfc3339(),
            "request": normalized,
            "observation": observation_json(&observation),
        });
        if let Some(ms) = first_byte_ms {
            entry["firstByteMs"] = json!(ms);
        }
        self.redact(&mut entry);
        let text = cassette_file::entry_text(&entry);
        let mut state = self.lock();
        state.recorded.insert(key, text);
        state.changed = true;
        (Ok(observation), first_byte_ms)
    }

    /// The observation of the entry `text` that `key` hit, when its stored
    /// request is this call's (`normalized`).
    fn replay(
        &self,
        key: &str,
        normalized: &Value,
        text: &str,
    ) -> Result<(Observation, Option<u64>), String> {
        let damaged = |e: &dyn std::fmt::Display| {
            format!(
                "cassette entry {key} in {} is damaged: {e}; record the call again with `--replay refresh`",
                self.read_from.display()
            )
        };
        let entry: Value = serde_json::from_str(text).map_err(|e| damaged(&e))?;
        let stored = entry.get("request").unwrap_or(&Value::Null);
        // This call's request as recording would have stored it.
        let mut live = json!({ "request": normalized });
        self.redact(&mut live);
        if !cassette_file::same_request(stored, &live["request"]) {
            return Err(format!(
                "cassette entry {key} in {} does not hold the request it is the key of: the cassette was edited (or the entry moved), or the request held a secret this run was not given, so its answer is not replayed; record the call again with `--replay refresh`, or restore the file",
                self.read_from.display()
            ));
        }
        let first_byte_ms = entry.get("firstByteMs").and_then(Value::as_u64);
        let observation = observation_from(&entry["observation"]).map_err(|e| damaged(&e))?;
        Ok((observation, first_byte_ms))
    }

    /// Writes the cassette if this run recorded anything (atomically, every
    /// entry: those read, as they were, and those recorded).
    pub fn save(&self) -> Result<(), EvalError> {
        let state = self.lock();
        if !state.changed {
            return Ok(());
        }
        let models: std::collections::BTreeSet<String> = merged(&state.stored, &state.recorded)
            .filter_map(|(_, text)| cassette_file::summary(text).observation?.model)
            .collect();
        let header = [
            ("schemaVersion", json!(SCHEMA)),
            ("recordedAt", json!(files::now_rfc3339())),
            ("cautilusVersion", json!(env!("CARGO_PKG_VERSION"))),
            ("models", json!(models)),
        ];
        cassette_file::write(&self.path, &header, merged(&state.stored, &state.recorded))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The user's paths, credential-like fields and the run's secret
    /// values, at any depth ([`redact_recorded`]).
    fn redact(&self, value: &mut Value) {
        let secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        redact_recorded(value, &self.redaction, &secrets);
    }
}

/// What a recorded answer is redacted of before it is written (a cassette
/// entry, an answer a run keeps for `--resume`): `redaction`'s paths
/// wherever they resolve, every credential-like field at any depth, and
/// every value of `secrets`.
pub fn redact_recorded(
    value: &mut Value,
    redaction: &crate::eval::redact::Redaction,
    secrets: &[String],
) {
    redaction.apply(value);
    redact_credential_fields(value);
    crate::secrets::scrub_value(value, secrets);
}

/// Every entry in key order, one per key: those recorded this run over
/// those read (both keyed by lowercase hex, so their orders agree).
fn merged<'a>(
    stored: &'a Stored,
    recorded: &'a BTreeMap<String, String>,
) -> impl Iterator<Item = (String, &'a str)> + 'a {
    let mut stored = stored.iter().peekable();
    let mut recorded = recorded.iter().peekable();
    std::iter::from_fn(move || {
        let order = match (stored.peek(), recorded.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((old, _)), Some((new, _))) => old.as_str().cmp(new.as_str()),
        };
        if order.is_lt() {
            return stored.next();
        }
        if order.is_eq() {
            stored.next();
        }
        recorded
            .next()
            .map(|(key, text)| (key.clone(), text.as_str()))
    })
}

/// Every credential-like field of `value`, at any depth, made `[redacted]`.
fn redact_credential_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if credential_field(key) {
                    *item = json!("[redacted]");
                } else {
                    redact_credential_fields(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_credential_fields),
        _ => {}
    }
}

/// The adapters a cassette's entries were recorded with.
impl Cassette {
    pub fn adapters(&self) -> std::collections::BTreeSet<String> {
        let state = self.lock();
        state
            .stored
            .iter()
            .map(|(_, text)| text)
            .chain(state.recorded.values().map(String::as_str))
            .filter_map(|text| cassette_file::summary(text).request)
            .filter(|request| request.kind.as_deref() == Some("provider"))
            .filter_map(|request| request.adapter)
            .collect()
    }
}

/// Days since an RFC 3339 UTC timestamp (`2026-11-23T07:00:00Z`).
fn age_days(timestamp: &str) -> Option<i64> {
    let date = timestamp.get(..10)?;
    let mut parts = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs()
            / 86_400,
    )
    .ok()?;
    Some(now - files::days_from_civil(y, m, d))
}

/// `<records root>/cassettes/<name>.json` (the root is
/// `<workspace>/.cautilus` unless the project's config names another), the
/// file name made from `name` by [`crate::file_names::stem`] (bounded and
/// distinct per name).
pub fn default_path(records: &Path, name: &str) -> PathBuf {
    records
        .join("cassettes")
        .join(format!("{}.json", crate::file_names::stem(name)))
}

/// The path earlier versions gave the cassette `name` (anything but
/// letters, digits, `-`, `_` and `.` became `-`), when it differs: read
/// when only it exists. Two names could share it, which is harmless for a
/// cassette: an entry answers only the request it holds.
pub fn legacy_path(records: &Path, name: &str) -> Option<PathBuf> {
    let legacy = records.join("cassettes").join(format!(
        "{}.json",
        crate::file_names::legacy(name, '-', true)
    ));
    (legacy != default_path(records, name)).then_some(legacy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::bindings::types::Message;

    fn invocation(case: &str, timeout: u64) -> Invocation {
        Invocation {
            case_id: case.into(),
            mode: "messaging".into(),
            model: Some("m".into()),
            system: Some("s".into()),
            messages: vec![Message {
                role: "user".into(),
                content: "hi".into(),
            }],
            input: None,
            expected: Some("\"x\"".into()),
            options: Some(
                json!({"timeoutMs": timeout, "baseUrl": "http://a", "temperature": 0}).to_string(),
            ),
        }
    }

    #[test]
    fn keys_ignore_what_does_not_change_the_answer() {
        let (a, _) = call_key(
            "provider",
            "openai",
            &invocation("c1", 1000),
            CallPlace::sample(0),
        );
        let (b, _) = call_key(
            "provider",
            "openai",
            &invocation("c2", 9000),
            CallPlace::sample(0),
        );
        assert_eq!(
            a, b,
            "case id, expected, timeout and endpoint are not part of the call"
        );
        let (c, _) = call_key(
            "provider",
            "anthropic",
            &invocation("c1", 1000),
            CallPlace::sample(0),
        );
        assert_ne!(a, c, "the adapter is");
        let mut other = invocation("c1", 1000);
        other.messages[0].content = "hello".into();
        assert_ne!(
            a,
            call_key("provider", "openai", &other, CallPlace::sample(0)).0
        );
        let (first, _) = call_key(
            "provider",
            "openai",
            &invocation("c1", 1000),
            CallPlace::sample(0),
        );
        let (second, _) = call_key(
            "provider",
            "openai",
            &invocation("c1", 1000),
            CallPlace::sample(1),
        );
        // A provider that hands the case id on is keyed by it.
        let (by_case, _) = call_key(
            "provider",
            "exec",
            &invocation("c1", 1000),
            CallPlace {
                by_case: true,
                ..CallPlace::sample(0)
            },
        );
        let (other_case, _) = call_key(
            "provider",
            "exec",
            &invocation("c2", 1000),
            CallPlace {
                by_case: true,
                ..CallPlace::sample(0)
            },
        );
        assert_ne!(by_case, other_case);
        // A later trial of an experiment is a call of its own; the first
        // keeps the key of a run without trials.
        let trial = |trial| CallPlace {
            trial,
            ..CallPlace::sample(0)
        };
        let (first_trial, _) = call_key("provider", "openai", &invocation("c1", 1000), trial(1));
        let (second_trial, _) = call_key("provider", "openai", &invocation("c1", 1000), trial(2));
        assert_eq!(first_trial, a);
        assert_ne!(second_trial, a);
        assert_ne!(first, second, "each repeated sample is its own call");
    }

    #[test]
    fn a_replayed_call_keeps_its_recorded_time_to_first_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let open = |mode| {
            Cassette::open(
                path.clone(),
                None,
                mode,
                Vec::new(),
                Default::default(),
                1 << 20,
            )
            .unwrap()
        };
        // Two calls that differ in what they ask (the case id is no part
        // of a key).
        let asking = |text: &str| {
            let mut call = invocation(text, 1);
            call.messages[0].content = text.into();
            call
        };
        let recorder = open(ReplayMode::RecordNew);
        for (case, first_byte_ms) in [("timed", Some(17)), ("untimed", None)] {
            let live = async move {
                let mut o = crate::plugin::bindings::types::Observation::empty();
                o.final_text = Some(case.into());
                Timed {
                    outcome: Ok(o),
                    duration_ms: 40,
                    first_byte_ms,
                }
            };
            let (outcome, recorded) = crate::plugin::io::block_on(recorder.answer_timed(
                "provider",
                "openai",
                &asking(case),
                CallPlace::sample(0),
                live,
            ));
            assert!(outcome.is_ok());
            assert_eq!(recorded, first_byte_ms);
        }
        recorder.save().unwrap();
        let strict = open(ReplayMode::ReplayStrict);
        for (case, first_byte_ms) in [("timed", Some(17)), ("untimed", None)] {
            let (outcome, replayed) = crate::plugin::io::block_on(strict.answer_timed(
                "provider",
                "openai",
                &asking(case),
                CallPlace::sample(0),
                async { panic!("replay-strict made a live call") },
            ));
            assert_eq!(outcome.unwrap().duration_ms, Some(40));
            assert_eq!(replayed, first_byte_ms, "{case}");
        }
    }

    #[test]
    fn replay_strict_answers_only_from_the_cassette_and_writes_no_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let recorder = Cassette::open(
            path.clone(),
            None,
            ReplayMode::RecordNew,
            vec!["sk-secret-1234".into()],
            Default::default(),
            1 << 20,
        )
        .unwrap();
        let live = async {
            let mut o = crate::plugin::bindings::types::Observation::empty();
            o.final_text = Some("answer with sk-secret-1234 inside".into());
            o.structured = Some(json!({"authorization": "Bearer x", "n": 1}).to_string());
            (Ok(o), 42)
        };
        let first = crate::plugin::io::block_on(recorder.answer(
            "provider",
            "openai",
            &invocation("c1", 1),
            0,
            live,
        ))
        .unwrap();
        assert_eq!(first.duration_ms, Some(42));
        recorder.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-secret-1234"), "{text}");

        let strict = Cassette::open(
            path.clone(),
            None,
            ReplayMode::ReplayStrict,
            Vec::new(),
            Default::default(),
            1 << 20,
        )
        .unwrap();
        let replayed = crate::plugin::io::block_on(strict.answer(
            "provider",
            "openai",
            &invocation("c2", 5),
            0,
            async { panic!("replay-strict made a live call") },
        ))
        .unwrap();
        assert_eq!(
            replayed.final_text.as_deref(),
            Some("answer with [redacted] inside")
        );
        assert_eq!(replayed.duration_ms, Some(42));
        assert_eq!(
            replayed.structured.as_deref(),
            Some(r#"{"authorization":"[redacted]","n":1}"#),
            "fields inside structured output are redacted too"
        );
        let mut other = invocation("c1", 1);
        other.model = Some("other".into());
        let miss =
            crate::plugin::io::block_on(strict.answer("provider", "openai", &other, 0, async {
                panic!("live call")
            }))
            .unwrap_err();
        assert!(
            miss.contains("no recorded answer") && miss.contains("--replay record-new"),
            "{miss}"
        );
        assert_eq!(
            strict.adapters().into_iter().collect::<Vec<_>>(),
            ["openai"]
        );
    }

    fn answered(
        text: &str,
    ) -> impl std::future::Future<Output = (Result<Observation, String>, u64)> {
        let mut o = Observation::empty();
        o.final_text = Some(text.into());
        async move { (Ok(o), 1) }
    }

    #[test]
    fn a_saved_cassette_keeps_what_it_read_and_replays_only_its_own_requests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let open = |mode, secrets: Vec<String>| {
            Cassette::open(
                path.clone(),
                None,
                mode,
                secrets,
                Default::default(),
                1 << 20,
            )
            .unwrap()
        };
        fn ask(
            cassette: &Cassette,
            call: &Invocation,
            live: impl std::future::Future<Output = (Result<Observation, String>, u64)>,
        ) -> Result<String, String> {
            crate::plugin::io::block_on(cassette.answer("provider", "openai", call, 0, live))
                .map(|o| o.final_text.unwrap_or_default())
        }
        let mut secret = invocation("c2", 1);
        secret.messages[0].content = "my key is sk-secret-1234".into();
        let first = open(ReplayMode::RecordNew, vec!["sk-secret-1234".into()]);
        assert_eq!(
            ask(&first, &invocation("c1", 1), answered("one")).unwrap(),
            "one"
        );
        assert_eq!(ask(&first, &secret, answered("two")).unwrap(), "two");
        first.save().unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        assert!(!before.contains("sk-secret-1234"), "{before}");

        async fn never() -> (Result<Observation, String>, u64) {
            panic!("a recorded call went live")
        }
        // A run without that secret does not take the redacted request for
        // one with the secret (a `[redacted]` stands for nothing else).
        let without = open(ReplayMode::ReplayStrict, Vec::new());
        let error = ask(&without, &secret, never()).unwrap_err();
        assert!(error.contains("secret this run"), "{error}");
        // Another run with it answers both from the file, records a third
        // call, and writes every entry back: the old ones byte for byte.
        let second = open(ReplayMode::RecordNew, vec!["sk-secret-1234".into()]);
        assert_eq!(ask(&second, &invocation("c1", 9), never()).unwrap(), "one");
        assert_eq!(ask(&second, &secret, never()).unwrap(), "two");
        let mut third = invocation("c3", 1);
        third.model = Some("other".into());
        assert_eq!(ask(&second, &third, answered("three")).unwrap(), "three");
        second.save().unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        let old = cassette_file::read(&path, 1 << 20).unwrap().unwrap();
        let before_entries = {
            std::fs::write(dir.path().join("before.json"), &before).unwrap();
            cassette_file::read(&dir.path().join("before.json"), 1 << 20)
                .unwrap()
                .unwrap()
        };
        assert_eq!(old.iter().count(), 3);
        for (key, text) in before_entries.iter() {
            assert_eq!(old.get(&key), Some(text), "{after}");
        }

        // The stored request of c1 edited, its key kept: refused, named.
        let (key, _) = call_key(
            "provider",
            "openai",
            &invocation("c1", 1),
            CallPlace::sample(0),
        );
        let mut file: Value = serde_json::from_str(&after).unwrap();
        file["entries"][&key]["request"]["messages"][0]["content"] = json!("bye");
        std::fs::write(&path, file.to_string()).unwrap();
        let strict = open(ReplayMode::ReplayStrict, Vec::new());
        let error = ask(&strict, &invocation("c1", 1), never()).unwrap_err();
        assert!(
            error.contains(&key) && error.contains("edited") && error.contains("--replay refresh"),
            "{error}"
        );
        // Refresh records it again.
        let refresh = open(ReplayMode::Refresh, Vec::new());
        ask(&refresh, &invocation("c1", 1), answered("one again")).unwrap();
        refresh.save().unwrap();
        let strict = open(ReplayMode::ReplayStrict, Vec::new());
        assert_eq!(
            ask(&strict, &invocation("c1", 1), never()).unwrap(),
            "one again"
        );
    }

    #[test]
    fn cassette_names_are_bounded_and_the_legacy_name_is_a_fallback() {
        let records = Path::new("/r");
        assert_eq!(
            default_path(records, "support"),
            records.join("cassettes/support.json")
        );
        assert_eq!(legacy_path(records, "support"), None);
        let long = "x".repeat(300);
        let name = default_path(records, &long);
        assert!(name.file_name().unwrap().len() < 80, "{}", name.display());
        assert_ne!(default_path(records, "a/b"), default_path(records, "a-b"));
        assert_eq!(
            legacy_path(records, "a/b"),
            Some(records.join("cassettes/a-b.json"))
        );

        let dir = tempfile::tempdir().unwrap();
        let legacy = dir.path().join("Old.json");
        let recorder = Cassette::open(
            legacy.clone(),
            None,
            ReplayMode::RecordNew,
            Vec::new(),
            Default::default(),
            1 << 20,
        )
        .unwrap();
        crate::plugin::io::block_on(recorder.answer(
            "provider",
            "openai",
            &invocation("c", 1),
            0,
            answered("old"),
        ))
        .unwrap();
        recorder.save().unwrap();
        let new = dir.path().join("old-0123.json");
        let reader = Cassette::open(
            new.clone(),
            Some(legacy.clone()),
            ReplayMode::ReplayStrict,
            Vec::new(),
            Default::default(),
            1 << 20,
        )
        .unwrap();
        let replayed = crate::plugin::io::block_on(reader.answer(
            "provider",
            "openai",
            &invocation("c", 1),
            0,
            async { panic!("live") },
        ))
        .unwrap();
        assert_eq!(replayed.final_text.as_deref(), Some("old"));
    }

    #[test]
    fn ages_count_days() {
        assert_eq!(files::days_from_civil(1970, 1, 1), 0);
        assert_eq!(files::days_from_civil(2000, 3, 1), 11_017);
        assert!(age_days("2000-01-01T00:00:00Z").unwrap() > 9000);
    }
}
