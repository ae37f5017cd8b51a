//! The key of a recorded call: the request normalized (the options that
//! do not change the answer left out: timeouts, endpoints, secret names,
//! streaming, a workspace copy's directory) and hashed, so equal requests
//! find the same recording.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::plugin::bindings::provider_api::Invocation;

/// Provider options that do not change the answer.
const VOLATILE_OPTIONS: &[&str] = &[
    "timeoutMs",
    "baseUrl",
    "apiKeySecret",
    "maxRetries",
    // How the answer travels (whole or streamed), not what it says.
    "stream",
    // A coding agent's workspace copy: a new temporary directory each time.
    "workspaceDir",
    // The `exec` program's path on this machine (the command as the
    // fixture wrote it, option `exec`, is kept).
    "execArgv",
];

/// What tells apart calls whose requests are equal: the sample of a case
/// (repeats), the trial of an experiment (1-based), and whether the case's
/// id counts (see [`call_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPlace {
    pub sample: usize,
    pub trial: u32,
    pub by_case: bool,
}

impl CallPlace {
    /// Sample `sample` of a call in a run without trials, its case id not
    /// counted.
    pub fn sample(sample: usize) -> Self {
        Self {
            sample,
            trial: 1,
            by_case: false,
        }
    }
}

/// The normalized request of a provider call and its key. The case id is
/// left out, so one recording serves every case making the same call,
/// unless `by_case`: the provider hands the id to what it calls (the
/// suite's program reads it on stdin, the suite's service wherever its
/// template says `${caseId}`), whose answer may then depend on it.
pub fn call_key(
    kind: &str,
    adapter: &str,
    request: &Invocation,
    place: CallPlace,
) -> (String, Value) {
    let CallPlace {
        sample,
        trial,
        by_case,
    } = place;
    let parse = |text: &Option<String>| {
        text.as_deref()
            .map(|t| serde_json::from_str::<Value>(t).unwrap_or_else(|_| json!(t)))
    };
    let mut settings = match parse(&request.options) {
        Some(Value::Object(options)) => options,
        _ => Map::new(),
    };
    settings.retain(|k, _| !VOLATILE_OPTIONS.contains(&k.as_str()));
    let mut normalized = json!({
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
    if by_case {
        normalized["caseId"] = json!(request.case_id);
    }
    // An experiment's later trials are calls of their own (the first keeps
    // the key a run without trials has).
    if trial > 1 {
        normalized["trial"] = json!(trial);
    }
    // serde_json keeps insertion order, and every map above is built in a
    // fixed order, so equal requests serialize to equal bytes.
    let key = hex::encode(Sha256::digest(normalized.to_string().as_bytes()));
    (key, normalized)
}
