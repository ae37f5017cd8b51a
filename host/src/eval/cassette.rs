//! Cassettes: provider calls recorded once and replayed, so a suite that
//! ran against a real model runs again offline, byte for byte, in CI.
//!
//! A call's key is the sha256 of its normalized request: the kind
//! (`provider` for a case's call, `model` for a judge's), the adapter id, the mode, the model, the system prompt,
//! the messages, the input and the provider settings, without what does not
//! change the answer (the case id, the expected value, timeouts, endpoint
//! and key names). So one cassette serves every case and variant that makes
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::EvalError;
use super::observation_json::{observation_from, observation_json};
use super::records;
use crate::plugin::bindings::provider::exports::cautilus::plugin::provider_api::Invocation;
use crate::plugin::bindings::types::Observation;

pub const SCHEMA: &str = "cautilus.cassette.v1";
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

/// Provider options that do not change the answer.
const VOLATILE_OPTIONS: &[&str] = &[
    "timeoutMs",
    "baseUrl",
    "apiKeySecret",
    "maxRetries",
    // A coding agent's workspace copy: a new temporary directory each time.
    "workspaceDir",
];

/// The normalized request of a provider call and its key.
pub fn call_key(kind: &str, adapter: &str, request: &Invocation, sample: usize) -> (String, Value) {
    let parse = |text: &Option<String>| {
        text.as_deref()
            .map(|t| serde_json::from_str::<Value>(t).unwrap_or_else(|_| json!(t)))
    };
    let mut settings = match parse(&request.options) {
        Some(Value::Object(options)) => options,
        _ => Map::new(),
    };
    settings.retain(|k, _| !VOLATILE_OPTIONS.contains(&k.as_str()));
    let normalized = json!({
        "kind": kind,
        "adapter": adapter,
        "mode": request.mode,
        "model": request.model,
        "system": request.system,
        "messages": request.messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect::<Vec<_>>(),
        "input": parse(&request.input),
        "settings": settings,
        // Repeated samples of a case are distinct calls: each is recorded.
        "sample": sample,
    });
    // serde_json keeps insertion order, and every map above is built in a
    // fixed order, so equal requests serialize to equal bytes.
    let key = hex::encode(Sha256::digest(normalized.to_string().as_bytes()));
    (key, normalized)
}

/// A run's cassette.
pub struct Cassette {
    path: PathBuf,
    mode: ReplayMode,
    /// Values that must never be written (the run's granted secrets).
    secrets: Mutex<Vec<String>>,
    /// The user's redaction paths (`redact`).
    redaction: super::redact::Redaction,
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
    entries: BTreeMap<String, Value>,
    changed: bool,
}

impl Cassette {
    /// The cassette at `path` (missing is empty, except in `replay-strict`).
    /// Opens the cassette at `path`; entries it records are redacted of
    /// `secrets` and of `redaction`'s paths.
    pub fn open(
        path: PathBuf,
        mode: ReplayMode,
        secrets: Vec<String>,
        redaction: super::redact::Redaction,
    ) -> Result<Self, EvalError> {
        let error = |message: String| EvalError::Input {
            path: path.clone(),
            message,
        };
        let entries = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let file: Value = serde_json::from_str(&text)
                    .map_err(|e| error(format!("not a cassette (invalid JSON: {e})")))?;
                if file.get("schemaVersion").and_then(Value::as_str) != Some(SCHEMA) {
                    return Err(error(format!(
                        "not a cassette: `schemaVersion` must be `{SCHEMA}`"
                    )));
                }
                if let Some(age) = file
                    .get("recordedAt")
                    .and_then(Value::as_str)
                    .and_then(age_days)
                    && age > STALE_DAYS
                {
                    eprintln!(
                        "warning: cassette {} was recorded {age} days ago; its models may answer differently now (re-record with `--replay refresh`)",
                        crate::term::shown(path.display())
                    );
                }
                match file.get("entries") {
                    Some(Value::Object(entries)) => entries
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    _ => return Err(error("not a cassette: `entries` must be an object".into())),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if mode == ReplayMode::ReplayStrict {
                    return Err(error(
                        "`--replay replay-strict` needs a recorded cassette and there is none here; record one with `--replay record-new`".into(),
                    ));
                }
                BTreeMap::new()
            }
            Err(e) => return Err(error(format!("cannot read the cassette: {e}"))),
        };
        Ok(Self {
            path,
            mode,
            secrets: Mutex::new(secrets),
            redaction,
            state: Mutex::new(State {
                entries,
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
        let (key, normalized) = call_key(kind, adapter, request, sample);
        if self.mode != ReplayMode::Refresh {
            let recorded = self.lock().entries.get(&key).cloned();
            if let Some(entry) = recorded {
                return observation_from(&entry["observation"])
                    .map_err(|e| format!("cassette entry {key} is damaged: {e}"));
            }
            if self.mode == ReplayMode::ReplayStrict {
                let workspace = if normalized["settings"].get("workspaceHash").is_some() {
                    " A coding agent's calls are keyed by the content of its workspace too: a changed repository is a miss."
                } else {
                    ""
                };
                return Err(format!(
                    "no recorded answer for this call (cassette key {key}) in {}; record it with `--replay record-new` (replay-strict makes no live call).{workspace}",
                    self.path.display()
                ));
            }
        }
        let (outcome, duration_ms) = live.await;
        let mut observation = outcome?;
        observation.duration_ms = observation.duration_ms.or(Some(duration_ms));
        let mut entry = json!({
            "recordedAt": records::now_rfc3339(),
            "request": normalized,
            "observation": observation_json(&observation),
        });
        self.redaction.apply(&mut entry);
        self.redact(&mut entry);
        let mut state = self.lock();
        state.entries.insert(key, entry);
        state.changed = true;
        Ok(observation)
    }

    /// Writes the cassette if this run recorded anything (atomically).
    pub fn save(&self) -> Result<(), EvalError> {
        let state = self.lock();
        if !state.changed {
            return Ok(());
        }
        let models: std::collections::BTreeSet<&str> = state
            .entries
            .values()
            .filter_map(|e| e.pointer("/observation/model").and_then(Value::as_str))
            .collect();
        let file = json!({
            "schemaVersion": SCHEMA,
            "recordedAt": records::now_rfc3339(),
            "cautilusVersion": env!("CARGO_PKG_VERSION"),
            "models": models,
            "entries": state.entries,
        });
        records::write_json(&self.path, &file)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Credential-like fields and the run's secret values, at any depth.
    fn redact(&self, value: &mut Value) {
        redact_credential_fields(value);
        let secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        super::secrets::scrub_value(value, &secrets);
    }
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

/// Field names that hold credentials, whatever their case or separators
/// (token *counts* such as `inputTokens` are not credentials).
pub fn credential_field(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    !name.ends_with("tokens")
        && [
            "authorization",
            "cookie",
            "password",
            "secret",
            "apikey",
            "token",
        ]
        .iter()
        .any(|f| name.contains(f))
}

/// The adapters a cassette's entries were recorded with.
impl Cassette {
    pub fn adapters(&self) -> std::collections::BTreeSet<String> {
        self.lock()
            .entries
            .values()
            .filter(|e| e.pointer("/request/kind").and_then(Value::as_str) == Some("provider"))
            .filter_map(|e| e.pointer("/request/adapter").and_then(Value::as_str))
            .map(str::to_string)
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
    Some(now - days_from_civil(y, m, d))
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `<records root>/cassettes/<name>.json` (the root is
/// `<workspace>/.cautilus` unless the project's config names another);
/// `name` keeps letters, digits, `-`, `_` and `.` (anything else becomes
/// `-`).
pub fn default_path(records: &Path, name: &str) -> PathBuf {
    let safe = crate::file_names::sanitized(name, '-');
    records
        .join("cassettes")
        .join(format!("{}.json", safe.trim_matches('.')))
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
        let (a, _) = call_key("provider", "openai", &invocation("c1", 1000), 0);
        let (b, _) = call_key("provider", "openai", &invocation("c2", 9000), 0);
        assert_eq!(
            a, b,
            "case id, expected, timeout and endpoint are not part of the call"
        );
        let (c, _) = call_key("provider", "anthropic", &invocation("c1", 1000), 0);
        assert_ne!(a, c, "the adapter is");
        let mut other = invocation("c1", 1000);
        other.messages[0].content = "hello".into();
        assert_ne!(a, call_key("provider", "openai", &other, 0).0);
        let (first, _) = call_key("provider", "openai", &invocation("c1", 1000), 0);
        let (second, _) = call_key("provider", "openai", &invocation("c1", 1000), 1);
        assert_ne!(first, second, "each repeated sample is its own call");
    }

    #[test]
    fn credentials_are_named_fields_and_counts_are_not() {
        for name in [
            "authorization",
            "x-api-key",
            "OPENAI_API_KEY",
            "accessToken",
            "client_secret",
            "Set-Cookie",
        ] {
            assert!(credential_field(name), "{name}");
        }
        for name in ["inputTokens", "max_tokens", "model", "content"] {
            assert!(!credential_field(name), "{name}");
        }
    }

    #[test]
    fn replay_strict_answers_only_from_the_cassette_and_writes_no_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let recorder = Cassette::open(
            path.clone(),
            ReplayMode::RecordNew,
            vec!["sk-secret-1234".into()],
            Default::default(),
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
            path,
            ReplayMode::ReplayStrict,
            Vec::new(),
            Default::default(),
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

    #[test]
    fn ages_count_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert!(age_days("2000-01-01T00:00:00Z").unwrap() > 9000);
    }
}
