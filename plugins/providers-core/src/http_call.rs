//! One case sent to the user's service: the request rendered
//! ([`crate::http_service::request`]), sent with retries on rate limits and
//! transient errors (honouring `Retry-After`, [`crate::api::backoff`],
//! within the request's `timeoutMs`), its answer read
//! ([`crate::http_stream`], [`crate::http_answer`]); a multi-turn case as
//! one request, or as a session of one request per user turn. Every
//! failure is a provider error naming what failed, with an excerpt of the
//! response.

use std::time::{Duration, Instant};

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::http::{self, HttpError, Request};
use cautilus_sdk::{Message, Observation, PluginError, excerpt, log};
use serde_json::Value;

use crate::http_answer;
use crate::http_service::{
    Config, EXCERPT, HARNESS, NAME, Start, context, failed, messages_json, request, start_request,
};
use crate::http_stream;
use crate::http_template::Context;

/// Retries of a rate-limited or failed request.
const MAX_RETRIES: u32 = 2;

/// Sends `request`, retrying retryable statuses and dropped connections
/// while its time lasts; the body and the retries it took.
fn send(request: &Request, config: &Config) -> Result<(String, u32), PluginError> {
    let started = Instant::now();
    let budget = Duration::from_millis(u64::from(config.timeout_ms));
    let url = &request.url;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let last = attempt > MAX_RETRIES;
        let said = |body: &[u8]| excerpt(String::from_utf8_lossy(body).trim(), EXCERPT);
        match http::send(request) {
            Ok(response) if (200..300).contains(&response.status) => {
                return Ok((
                    String::from_utf8_lossy(&response.body).into_owned(),
                    attempt - 1,
                ));
            }
            Ok(response) if crate::api::retryable(response.status) && !last => {
                let after = response
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
                    .map(|(_, v)| v.as_str());
                let wait = crate::api::backoff(attempt - 1, after);
                if started.elapsed() + wait >= budget {
                    return Err(failed(format!(
                        "HTTP {} from {url} (no time left to retry within {} ms): {}",
                        response.status,
                        config.timeout_ms,
                        said(&response.body)
                    )));
                }
                log::warn(&format!(
                    "{NAME}: HTTP {} from {url} (attempt {attempt}); retrying in {} ms",
                    response.status,
                    wait.as_millis()
                ));
                std::thread::sleep(wait);
            }
            Ok(response) => {
                return Err(failed(format!(
                    "HTTP {} from {url}: {}",
                    response.status,
                    said(&response.body)
                )));
            }
            Err(HttpError::Transport(why))
                if !last && started.elapsed() + crate::api::backoff(attempt - 1, None) < budget =>
            {
                let wait = crate::api::backoff(attempt - 1, None);
                log::warn(&format!(
                    "{NAME}: {why} (attempt {attempt}); retrying in {} ms",
                    wait.as_millis()
                ));
                std::thread::sleep(wait);
            }
            Err(error) => {
                return Err(failed(match error {
                    HttpError::Denied(why) => why,
                    HttpError::Timeout => format!(
                        "no answer from {url} within {} ms (raise `http.timeoutMs` or --timeout-ms)",
                        config.timeout_ms
                    ),
                    HttpError::TooLarge(limit) => format!(
                        "the answer from {url} is larger than {limit} bytes, the most the host keeps of a response (raise it with --output-mib, and --memory-mib with it)"
                    ),
                    HttpError::Transport(why) => {
                        format!("cannot reach {url} ({why}); is the service running?")
                    }
                }));
            }
        }
    }
}

/// One request and what its answer gave.
fn exchange(
    config: &Config,
    context: &Context,
) -> Result<(http_answer::Read, u32, String), PluginError> {
    let request = request(config, context)?;
    let (body, retries) = send(&request, config)?;
    let read = http_stream::documents(&body, config.stream)
        .and_then(|documents| http_answer::read(&documents, &config.paths))
        .map_err(|why| {
            failed(format!(
                "{why} from {}: {}",
                request.url,
                excerpt(body.trim(), EXCERPT)
            ))
        })?;
    Ok((read, retries, excerpt(body.trim(), EXCERPT)))
}

/// Answers one messaging case.
pub fn invoke(request: &Invocation) -> Result<Observation, PluginError> {
    let options = crate::messaging::options(NAME, request)?;
    let config = Config::of_options(&options)?;
    let mut context = context(request, &options);
    let mut observed = Observation {
        harness: Some(HARNESS.into()),
        mode: Some("messaging".into()),
        ..Observation::empty()
    };
    let (read, retries) = if config.session {
        session(request, &config, &mut context, &mut observed)?
    } else {
        let (read, retries, _) = exchange(&config, &context)?;
        observed.messages = crate::prompt::with_answer(&request.messages, &read.text);
        (read, retries)
    };
    observed.final_text = Some(read.text);
    observed.usage = read.usage;
    if let Some(cost) = read.cost_usd {
        observed.cost_usd = Some(cost);
        observed.cost_source = Some("reported".into());
    }
    observed.tool_calls = read.tool_calls;
    observed.retries = Some(retries);
    Ok(observed)
}

/// Opens a session with `start` (`context`: the case before its first
/// turn): the id its answer gives at `session.idPath`, and the retries it
/// took.
fn start_session(
    config: &Config,
    start: &Start,
    context: &Context,
) -> Result<(Value, u32), PluginError> {
    let request = start_request(config, start, context)?;
    let (body, retries) = send(&request, config)?;
    let said = || excerpt(body.trim(), EXCERPT);
    let document: Value = serde_json::from_str(body.trim()).map_err(|e| {
        failed(format!(
            "the answer to the session's start request from {} is not JSON ({e}): {}",
            request.url,
            said()
        ))
    })?;
    let path = config.paths.session_id.as_ref().ok_or_else(|| {
        failed("`http.session.idPath` is missing: where the start request's answer gives the session id")
    })?;
    let id = path.first(&document).cloned().ok_or_else(|| {
        failed(format!(
            "the session id path `{}` found nothing in the answer to the session's start request from {}: {}",
            path.text,
            request.url,
            said()
        ))
    })?;
    Ok((id, retries))
}

/// A session: one request per user turn (earlier assistant turns of the
/// case are the service's to give), the session id read from the first
/// answer that has it; the last answer is the case's, every turn is in
/// the transcript.
fn session(
    request: &Invocation,
    config: &Config,
    context: &mut Context,
    observed: &mut Observation,
) -> Result<(http_answer::Read, u32), PluginError> {
    let mut transcript: Vec<Message> = Vec::new();
    let mut retries = 0;
    let mut last = None;
    if let Some(start) = &config.session_start {
        // It is sent before the first turn: `${message}` is that turn's,
        // `${messages}` the conversation up to it.
        let mut opening = context.clone();
        if let Some(first) = request.messages.iter().position(|m| m.role == "user") {
            let so_far: Vec<Message> = request.messages[..=first]
                .iter()
                .filter(|m| m.role == "system" || m.role == "user")
                .cloned()
                .collect();
            opening.messages = messages_json(&so_far);
            opening.message = Some(request.messages[first].content.clone());
        }
        let (id, tries) = start_session(config, start, &opening)?;
        context.session_id = Some(id);
        retries += tries;
    }
    for (turn, message) in request.messages.iter().enumerate() {
        if message.role != "user" {
            if message.role == "system" {
                transcript.push(message.clone());
            }
            continue;
        }
        transcript.push(message.clone());
        context.messages = messages_json(&transcript);
        context.message = Some(message.content.clone());
        let (read, tries, said) = exchange(config, context).map_err(|e| match e {
            PluginError::Failed(m) => PluginError::Failed(format!("{m} (user turn {})", turn + 1)),
            other => other,
        })?;
        retries += tries;
        if context.session_id.is_none() {
            context.session_id = read.session_id.clone();
            if context.session_id.is_none()
                && let Some(path) = &config.paths.session_id
            {
                return Err(failed(format!(
                    "the session id path `{}` found nothing in the first answer: {said}",
                    path.text
                )));
            }
        }
        transcript.push(Message {
            role: "assistant".into(),
            content: read.text.clone(),
        });
        last = Some(read);
    }
    observed.messages = transcript;
    let read = last.ok_or_else(|| {
        failed(format!(
            "case `{}` has no user message to send",
            request.case_id
        ))
    })?;
    Ok((read, retries))
}
