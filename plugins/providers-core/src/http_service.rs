//! The `http` provider (harness `http`): each case sent to the user's own
//! service, as the fixture's `http` field describes the request and where
//! the answer is in the response.
//!
//! The host checks the field before the run (host
//! `fixture/http_field.rs`), grants this provider the host of its URL
//! alone, and passes the field as written in option `http` (part of the
//! call key; header values that are secrets are names, filled in by the
//! host's `http` import) with `timeoutMs`. Here: the field read
//! ([`Config`]) and the request rendered from the case
//! ([`crate::http_template`]); [`crate::http_call`] sends it with retries
//! on 429/5xx (honouring `Retry-After`, [`crate::api::backoff`]), splits
//! the answer into JSON documents ([`crate::http_stream`]) and reads it by
//! JSONPath ([`crate::http_answer`]). A multi-turn case is one request with its
//! messages, or with `session:` one request per user turn, the session id
//! read from the first answer and sent as `${session.id}`. Every mistake
//! (a template reading what the case lacks, a path finding nothing, a
//! status that is not retried) is a provider error naming it, with an
//! excerpt of the response: the case is `errored`.

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::http::{Header, HeaderValue, Request};
use cautilus_sdk::{Message, PluginError};
use serde_json::{Map, Value};

use crate::http_answer::{Path, Paths};
use crate::http_stream::Stream;
use crate::http_template::{self, Context};

pub const NAME: &str = "http";
pub const HARNESS: &str = "http";

/// Characters of a response quoted in an error.
pub(crate) const EXCERPT: usize = 300;

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
    /// The request that opens a session before its first turn, if any.
    pub session_start: Option<Start>,
    pub timeout_ms: u32,
}

/// `session.start`: the request that opens a session, its id read from
/// its answer at `session.idPath`.
#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    /// As written; the service's URL when the fixture gives none.
    pub url: String,
    pub method: String,
    pub body: Option<Value>,
}

pub(crate) fn failed(message: impl std::fmt::Display) -> PluginError {
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
        let session_start = session
            .and_then(|s| s.get("start"))
            .and_then(Value::as_object)
            .map(|start| Start {
                url: start
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or(&url)
                    .to_string(),
                method: start
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("POST")
                    .to_ascii_uppercase(),
                body: start.get("body").filter(|b| !b.is_null()).cloned(),
            });
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
            session_start,
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

pub(crate) fn messages_json(messages: &[Message]) -> Value {
    messages
        .iter()
        .map(|m| serde_json::json!({"role": m.role, "content": m.content}))
        .collect()
}

/// The request `config` describes for `context`.
pub fn request(config: &Config, context: &Context) -> Result<Request, PluginError> {
    let target = Target {
        url: &config.url,
        method: &config.method,
        body: config.body.as_ref(),
        at: "http",
    };
    request_to(config, &target, context)
}

/// The request that opens a session (`session.start`), for `context`.
pub fn start_request(
    config: &Config,
    start: &Start,
    context: &Context,
) -> Result<Request, PluginError> {
    let target = Target {
        url: &start.url,
        method: &start.method,
        body: start.body.as_ref(),
        at: "http.session.start",
    };
    request_to(config, &target, context)
}

/// Where a request goes and what it carries, as written (`at`: where).
struct Target<'a> {
    url: &'a str,
    method: &'a str,
    body: Option<&'a Value>,
    at: &'a str,
}

/// The request to `target` with `config`'s headers, for `context`.
fn request_to(
    config: &Config,
    target: &Target<'_>,
    context: &Context,
) -> Result<Request, PluginError> {
    let at = target.at;
    let url = match http_template::render_text(target.url, context, &http_template::percent_encode)
    {
        Ok(value) => http_template::as_text(&value),
        Err(why) => return Err(failed(format!("`{at}.url`: {why}"))),
    };
    let body = target
        .body
        .map(|template| http_template::render(template, context, &format!("{at}.body")))
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
        method: target.method.to_string(),
        url,
        headers,
        body: body.map(|b| b.to_string().into_bytes()),
        timeout_ms: Some(config.timeout_ms),
    })
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
