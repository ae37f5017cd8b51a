//! The `http` provider (harness `http`): each case sent to the user's own
//! service, as the fixture's `http` field describes the request and where
//! the answer is in the response.
//!
//! The host checks the field before the run (host
//! `fixture/http_field.rs`), grants this provider the host of its URL
//! alone, and passes the field as written in option `http` (part of the
//! call key; header values that are secrets are names, filled in by the
//! host's `http` import) with `timeoutMs`. Here: the request rendered from
//! the case ([`crate::http_template`]), sent with retries on 429/5xx
//! (honouring `Retry-After`, [`crate::api::backoff`]), the answer split
//! into JSON documents ([`crate::http_stream`]) and read by JSONPath
//! ([`crate::http_answer`]). A multi-turn case is one request with its
//! messages, or with `session:` one request per user turn, the session id
//! read from the first answer and sent as `${session.id}`. Every mistake
//! (a template reading what the case lacks, a path finding nothing, a
//! status that is not retried) is a provider error naming it, with an
//! excerpt of the response: the case is `errored`.

use std::time::{Duration, Instant};

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::http::{self, Header, HeaderValue, HttpError, Request};
use cautilus_sdk::{Message, Observation, PluginError, excerpt, log};
use serde_json::{Map, Value};

use crate::http_answer::{self, Path, Paths};
use crate::http_stream::{self, Stream};
use crate::http_template::{self, Context};

pub const NAME: &str = "http";
pub const HARNESS: &str = "http";

/// Characters of a response quoted in an error.
const EXCERPT: usize = 300;
/// Retries of a rate-limited or failed request.
const MAX_RETRIES: u32 = 2;

/// A header value: text, or a secret the host fills in.
#[derive(Debug, Clone, PartialEq)]
pub enum HeaderSpec {
    Text(String),
    Secret(String),
    BearerSecret(String),
}

/// The field, as the provider uses it.
#[derive(Debug, Clone)]
pub struct Config {
    pub url: String,
    pub method: String,
    pub headers: Vec<(String, HeaderSpec)>,
    pub body: Option<Value>,
    pub paths: Paths,
    pub stream: Stream,
    /// One request per user turn.
    pub session: bool,
    pub timeout_ms: u32,
}

fn failed(message: impl std::fmt::Display) -> PluginError {
    PluginError::failed(format!("{NAME}: {message}"))
}

impl Config {
    /// Reads option `http` (the field as the fixture wrote it, checked by
    /// the host) and `timeoutMs`.
    pub fn of_options(options: &Map<String, Value>) -> Result<Self, PluginError> {
        let field = options.get("http").and_then(Value::as_object).ok_or_else(|| {
            failed("the suite describes no service; add `http: {url, body, answer}` to the fixture")
        })?;
        let text = |key: &str| field.get(key).and_then(Value::as_str);
        let url = text("url")
            .ok_or_else(|| failed("`http.url` is missing"))?
            .to_string();
        let method = text("method").unwrap_or("POST").to_ascii_uppercase();
        let mut headers = Vec::new();
        if let Some(Value::Object(written)) = field.get("headers") {
            for (name, value) in written {
                let spec = match value {
                    Value::String(text) => HeaderSpec::Text(text.clone()),
                    Value::Object(o) => match (o.get("secret"), o.get("bearerSecret")) {
                        (Some(Value::String(s)), None) => HeaderSpec::Secret(s.clone()),
                        (None, Some(Value::String(s))) => HeaderSpec::BearerSecret(s.clone()),
                        _ => {
                            return Err(failed(format!("`http.headers.{name}` is not understood")));
                        }
                    },
                    _ => return Err(failed(format!("`http.headers.{name}` is not understood"))),
                };
                headers.push((name.clone(), spec));
            }
        }
        let path = |key: &str, at: &str| -> Result<Option<Path>, PluginError> {
            field
                .get(key)
                .and_then(Value::as_str)
                .map(|p| Path::parse(p, at).map_err(failed))
                .transpose()
        };
        let answer = path("answer", "http.answer")?
            .ok_or_else(|| failed("`http.answer` (the JSONPath of the answer) is missing"))?;
        let mut usage = Vec::new();
        if let Some(Value::Object(written)) = field.get("usage") {
            for (key, value) in written {
                if let Some(text) = value.as_str() {
                    usage.push((
                        key.clone(),
                        Path::parse(text, &format!("http.usage.{key}")).map_err(failed)?,
                    ));
                }
            }
        }
        let session = field.get("session").and_then(Value::as_object);
        let session_id = session
            .and_then(|s| s.get("idPath"))
            .and_then(Value::as_str)
            .map(|p| Path::parse(p, "http.session.idPath").map_err(failed))
            .transpose()?;
        Ok(Self {
            url,
            method,
            headers,
            body: field.get("body").cloned(),
            paths: Paths {
                answer,
                usage,
                cost_usd: path("costUsd", "http.costUsd")?,
                tool_calls: path("toolCalls", "http.toolCalls")?,
                session_id,
            },
            stream: Stream::parse(text("stream")).map_err(failed)?,
            session: session.is_some(),
            timeout_ms: options
                .get("timeoutMs")
                .and_then(Value::as_u64)
                .and_then(|t| u32::try_from(t).ok())
                .unwrap_or(60_000),
        })
    }
}

/// What a case's placeholders read, before any turn.
pub fn context(request: &Invocation, options: &Map<String, Value>) -> Context {
    let input = request.input.as_deref().map(|text| {
        serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.into()))
    });
    Context {
        input,
        messages: messages_json(&request.messages),
        message: request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.clone()),
        system: request.system.clone(),
        model: request.model.clone(),
        case_id: request.case_id.clone(),
        settings: options
            .iter()
            .filter(|(k, _)| http_template::SETTINGS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        session_id: None,
    }
}

fn messages_json(messages: &[Message]) -> Value {
    messages
        .iter()
        .map(|m| serde_json::json!({"role": m.role, "content": m.content}))
        .collect()
}

/// The request `config` describes for `context`.
pub fn request(config: &Config, context: &Context) -> Result<Request, PluginError> {
    let url = match http_template::render_text(&config.url, context, &http_template::percent_encode)
    {
        Ok(value) => http_template::as_text(&value),
        Err(why) => return Err(failed(format!("`http.url`: {why}"))),
    };
    let body = config
        .body
        .as_ref()
        .map(|template| http_template::render(template, context, "http.body"))
        .transpose()
        .map_err(|e| failed(format!("`{}`: {}", e.at, e.message)))?;
    let mut headers = Vec::new();
    let has = |name: &str| {
        config
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(name))
    };
    if body.is_some() && !has("content-type") {
        headers.push(Header {
            name: "content-type".into(),
            value: HeaderValue::Text("application/json".into()),
        });
    }
    for (name, spec) in &config.headers {
        headers.push(Header {
            name: name.clone(),
            value: match spec {
                HeaderSpec::Text(t) => HeaderValue::Text(t.clone()),
                HeaderSpec::Secret(s) => HeaderValue::Secret(s.clone()),
                HeaderSpec::BearerSecret(s) => HeaderValue::BearerSecret(s.clone()),
            },
        });
    }
    Ok(Request {
        method: config.method.clone(),
        url,
        headers,
        body: body.map(|b| b.to_string().into_bytes()),
        timeout_ms: Some(config.timeout_ms),
    })
}

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
                        "the answer from {url} is larger than {limit} bytes, the most the host keeps of a response; answer in fewer bytes"
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
    if request.mode != "messaging" {
        return Err(failed(
            "answers messaging (app) cases only; a repo case needs a coding-agent provider (claude-code, codex)",
        ));
    }
    let options = match request
        .options
        .as_deref()
        .map(serde_json::from_str::<Value>)
    {
        Some(Ok(Value::Object(options))) => options,
        _ => Map::new(),
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::invocation;
    use serde_json::json;

    fn options(http: Value) -> Map<String, Value> {
        match json!({"http": http, "timeoutMs": 900, "temperature": 0.3, "canned": 1}) {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_request_is_rendered_from_the_case_with_secret_headers_by_name() {
        let options = options(json!({
            "url": "http://h:1/chat?c=${caseId}", "method": "POST",
            "headers": {"X-Api-Key": {"secret": "KEY"}, "Authorization": {"bearerSecret": "TOKEN"}, "Accept": "text/plain"},
            "body": {"q": "${message}", "t": "${settings.temperature}", "m": "${messages}"},
            "answer": "$.reply", "usage": {"outputTokens": "$.n"}, "stream": "ndjson"
        }));
        let config = Config::of_options(&options).unwrap();
        assert_eq!(
            (config.timeout_ms, config.stream, config.session),
            (900, Stream::Ndjson, false)
        );
        let request = request(
            &config,
            &context(&invocation("c 1", "messaging", "Hi?", None), &options),
        )
        .unwrap();
        assert_eq!(request.url, "http://h:1/chat?c=c%201");
        assert_eq!(request.timeout_ms, Some(900));
        let headers: Vec<String> = request
            .headers
            .iter()
            .map(|h| match &h.value {
                HeaderValue::Text(t) => format!("{}: {t}", h.name),
                HeaderValue::Secret(s) => format!("{}: secret {s}", h.name),
                HeaderValue::BearerSecret(s) => format!("{}: bearer {s}", h.name),
            })
            .collect();
        assert_eq!(
            headers,
            [
                "content-type: application/json",
                "Accept: text/plain",
                "Authorization: bearer TOKEN",
                "X-Api-Key: secret KEY"
            ]
        );
        let body: Value = serde_json::from_slice(request.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"q": "Hi?", "t": 0.3, "m": [{"role": "user", "content": "Hi?"}]})
        );
    }

    #[test]
    fn a_missing_field_or_a_bad_path_is_an_error_naming_it() {
        let rows = [
            (json!(null), "the suite describes no service"),
            (json!({"answer": "$.a"}), "`http.url` is missing"),
            (
                json!({"url": "http://h"}),
                "`http.answer` (the JSONPath of the answer) is missing",
            ),
            (
                json!({"url": "http://h", "answer": "$.a["}),
                "`http.answer`: `$.a[` is not a JSONPath",
            ),
            (
                json!({"url": "http://h", "answer": "$.a", "stream": "ws"}),
                "unknown `stream: ws`",
            ),
        ];
        for (http, expected) in rows {
            let error = Config::of_options(&options(http.clone())).unwrap_err();
            assert!(format!("{error:?}").contains(expected), "{http}: {error:?}");
        }
        let config = Config::of_options(&options(
            json!({"url": "http://h", "answer": "$.a", "body": {"q": "${input.q}"}}),
        ))
        .unwrap();
        let error = request(
            &config,
            &context(&invocation("c", "messaging", "Hi", None), &Map::new()),
        )
        .unwrap_err();
        assert!(
            format!("{error:?}")
                .contains("http: `http.body.q`: `${input.q}`: the case has no `input`"),
            "{error:?}"
        );
    }
}
