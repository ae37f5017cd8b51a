//! One JSON call to a model API with retries, and errors that say what to
//! do.
//!
//! The host resolves the endpoint and the key before a run (from the
//! environment or flags) and passes them as `options`:
//! `{"baseUrl": "...", "apiKeySecret": "OPENAI_API_KEY" | null,
//!   "timeoutMs": 60000, "maxRetries": 2}`. The component never sees the
//! key: it names the secret in a header and the host fills it in. The
//! host grants the base URL's host and that secret, nothing else.

use std::time::Duration;

use cautilus_sdk::Observation;
use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::http::{self, Header, HeaderValue, HttpError, Request};
use cautilus_sdk::{PluginError, log};
use serde::Deserialize;
use serde_json::Value;

/// The options the host passes an API provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiOptions {
    pub base_url: String,
    /// The secret that holds the key, when one is configured.
    #[serde(default)]
    pub api_key_secret: Option<String>,
    #[serde(default = "default_timeout")]
    pub timeout_ms: u32,
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Nucleus sampling (the fixture's `settings.topP`).
    #[serde(default)]
    pub top_p: Option<f64>,
    /// The sampling seed (`settings.seed`), where the API takes one.
    #[serde(default)]
    pub seed: Option<i64>,
    /// Stop sequences (`settings.stop`).
    #[serde(default)]
    pub stop: Option<Vec<String>>,
    /// Ask for the answer as a server-sent event stream, where the API has
    /// one (`[providers.openai] stream`): the host then times its first
    /// event, the model's first token, rather than the whole answer.
    #[serde(default)]
    pub stream: bool,
}

fn default_timeout() -> u32 {
    120_000
}

fn default_retries() -> u32 {
    2
}

impl ApiOptions {
    /// The options of an invocation; the host always passes them.
    pub fn of(options: Option<&str>, provider: &str) -> Result<Self, PluginError> {
        let text = options.ok_or_else(|| {
            PluginError::failed(format!(
                "{provider}: the host passed no endpoint options (run it through `cautilus eval test`)"
            ))
        })?;
        serde_json::from_str(text)
            .map_err(|e| PluginError::failed(format!("{provider}: bad endpoint options: {e}")))
    }

    /// `base_url` joined with `path` (one `/` between them).
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}

/// Reads a server-sent event stream's text as the answer the server would
/// have sent whole, or says what is wrong with it.
pub type FoldStream = fn(&str) -> Result<Value, String>;

/// One model API a provider component speaks: where it is, how the key is
/// sent, and how a case becomes a request and an answer an observation.
pub struct Api {
    pub name: &'static str,
    /// The environment variables users set for the key and the endpoint
    /// (named in errors).
    pub key_variable: &'static str,
    pub url_variable: &'static str,
    /// Appended to the base URL.
    pub path: &'static str,
    /// Headers besides `content-type` and the key.
    pub headers: &'static [(&'static str, &'static str)],
    /// See [`Call::key_header`].
    pub key_header: (&'static str, bool),
    pub request_body: fn(&Invocation, &ApiOptions) -> Result<Value, PluginError>,
    /// The observation of an answer, given the retries it took.
    pub observation: fn(&Invocation, &Value, u32) -> Result<Observation, PluginError>,
    /// Folds a streamed answer (the server-sent event stream's text) into
    /// the answer the server would have sent whole, for APIs that stream.
    pub fold_stream: Option<FoldStream>,
}

impl Api {
    /// Answers one messaging case with one call (retried as [`Call::send`]
    /// says).
    pub fn invoke(&self, request: &Invocation) -> Result<Observation, PluginError> {
        if request.mode != "messaging" {
            return Err(PluginError::failed(format!(
                "{}: answers messaging cases only; a workspace case needs a coding-agent provider",
                self.name
            )));
        }
        let options = ApiOptions::of(request.options.as_deref(), self.name)?;
        let body = (self.request_body)(request, &options)?;
        let call = Call {
            provider: self.name,
            key_variable: self.key_variable,
            url_variable: self.url_variable,
            options: &options,
            url: options.url(self.path),
            headers: self
                .headers
                .iter()
                .map(|(k, v)| (*k, v.to_string()))
                .collect(),
            key_header: self.key_header,
            fold_stream: self.fold_stream,
        };
        let answer = call.send(&body)?;
        (self.observation)(request, &answer.body, answer.attempts - 1)
    }
}

/// What an API call answered, parsed.
pub struct Answer {
    pub body: Value,
    /// Attempts made (1 without retries).
    pub attempts: u32,
}

/// A JSON POST for one provider.
pub struct Call<'a> {
    /// `openai` or `anthropic`: named in every error.
    pub provider: &'a str,
    /// The environment variable users set for the key, for error advice.
    pub key_variable: &'a str,
    /// The environment variable users set for the endpoint.
    pub url_variable: &'a str,
    pub options: &'a ApiOptions,
    pub url: String,
    /// Headers besides `content-type`; the key goes in `key_header`.
    pub headers: Vec<(&'a str, String)>,
    /// How the key is sent: (`authorization`, true) sends `Bearer <key>`,
    /// (`x-api-key`, false) the key as it is.
    pub key_header: (&'a str, bool),
    /// How an answer sent as a server-sent event stream is read, if the
    /// API streams ([`Api::fold_stream`]).
    pub fold_stream: Option<FoldStream>,
}

/// Statuses worth another attempt: rate limits and transient server errors
/// (529 is Anthropic's "overloaded").
pub fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// Longest wait between attempts, whatever `retry-after` says.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// The wait before attempt `attempt + 1`: `retry-after` (seconds) when
/// the server gave one, else 0.5 s doubled per attempt; at most
/// [`MAX_WAIT`].
pub fn backoff(attempt: u32, retry_after: Option<&str>) -> Duration {
    let asked = retry_after
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        // Capped before it becomes a Duration (1e20 s would not fit).
        .map(|s| Duration::from_secs_f64(s.min(MAX_WAIT.as_secs_f64())));
    asked
        .unwrap_or_else(|| Duration::from_millis(500u64.saturating_mul(1 << attempt.min(6))))
        .min(MAX_WAIT)
}

impl Call<'_> {
    /// Sends `body`, retrying retryable statuses and dropped connections
    /// up to `max_retries` times.
    pub fn send(&self, body: &Value) -> Result<Answer, PluginError> {
        let mut headers = vec![Header {
            name: "content-type".into(),
            value: HeaderValue::Text("application/json".into()),
        }];
        for (name, value) in &self.headers {
            headers.push(Header {
                name: (*name).into(),
                value: HeaderValue::Text(value.clone()),
            });
        }
        if let Some(secret) = &self.options.api_key_secret {
            let (name, bearer) = self.key_header;
            headers.push(Header {
                name: name.into(),
                value: if bearer {
                    HeaderValue::BearerSecret(secret.clone())
                } else {
                    HeaderValue::Secret(secret.clone())
                },
            });
        }
        let request = Request {
            method: "POST".into(),
            url: self.url.clone(),
            headers,
            body: Some(body.to_string().into_bytes()),
            timeout_ms: Some(self.options.timeout_ms),
        };
        let started = std::time::Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let last = attempt > self.options.max_retries;
            match http::send(&request) {
                Ok(response) if (200..300).contains(&response.status) => {
                    return Ok(Answer {
                        body: self.answer_of(&response)?,
                        attempts: attempt,
                    });
                }
                Ok(response) if retryable(response.status) && !last => {
                    let after = response
                        .headers
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
                        .map(|(_, v)| v.as_str());
                    let wait = backoff(attempt - 1, after);
                    if !self.time_left(started, wait) {
                        return Err(self.status_error(response.status, &response.body));
                    }
                    log::warn(&format!(
                        "{}: HTTP {} (attempt {attempt}); retrying in {} ms",
                        self.provider,
                        response.status,
                        wait.as_millis()
                    ));
                    std::thread::sleep(wait);
                }
                Ok(response) => return Err(self.status_error(response.status, &response.body)),
                Err(HttpError::Transport(message))
                    if !last && self.time_left(started, backoff(attempt - 1, None)) =>
                {
                    let wait = backoff(attempt - 1, None);
                    log::warn(&format!(
                        "{}: {message} (attempt {attempt}); retrying in {} ms",
                        self.provider,
                        wait.as_millis()
                    ));
                    std::thread::sleep(wait);
                }
                Err(error) => return Err(self.transport_error(error)),
            }
        }
    }

    /// The answer a successful response holds: its JSON body, or the
    /// answer its event stream adds up to.
    fn answer_of(&self, response: &http::Response) -> Result<Value, PluginError> {
        let streamed = response.headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("content-type")
                && v.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
        });
        if let (true, Some(fold)) = (streamed, self.fold_stream) {
            let text = String::from_utf8_lossy(&response.body);
            return fold(&text).map_err(|e| {
                PluginError::failed(format!(
                    "{}: {} answered HTTP {} with an event stream that {e}",
                    self.provider, self.url, response.status
                ))
            });
        }
        serde_json::from_slice(&response.body).map_err(|e| {
            PluginError::failed(format!(
                "{}: {} answered HTTP {} with a body that is not JSON ({e})",
                self.provider, self.url, response.status
            ))
        })
    }

    /// Whether waiting `wait` still leaves time for another attempt within
    /// the call's time limit (a wait never outlasts the case's budget).
    fn time_left(&self, started: std::time::Instant, wait: Duration) -> bool {
        started.elapsed() + wait < Duration::from_millis(u64::from(self.options.timeout_ms))
    }

    fn status_error(&self, status: u16, body: &[u8]) -> PluginError {
        let said = error_message(body);
        let advice = match status {
            401 | 403 => match &self.options.api_key_secret {
                Some(_) => format!("; check {}", self.key_variable),
                None => format!("; set {} (no key was sent)", self.key_variable),
            },
            404 => format!(
                "; check the model name and {} (now {})",
                self.url_variable, self.options.base_url
            ),
            _ => String::new(),
        };
        PluginError::failed(format!(
            "{}: HTTP {status} from {}{}{advice}",
            self.provider,
            self.url,
            said.map(|s| format!(": {s}")).unwrap_or_default()
        ))
    }

    fn transport_error(&self, error: HttpError) -> PluginError {
        PluginError::failed(match error {
            HttpError::Denied(why) => format!("{}: {why}", self.provider),
            HttpError::Timeout => format!(
                "{}: no answer from {} within {} ms",
                self.provider, self.url, self.options.timeout_ms
            ),
            HttpError::TooLarge(limit) => format!(
                "{}: the answer from {} is larger than {limit} bytes (raise the limit with --output-mib)",
                self.provider, self.url
            ),
            HttpError::Transport(why) => format!(
                "{}: cannot reach {} ({why}); is the server running? set {} to its URL",
                self.provider, self.url, self.url_variable
            ),
        })
    }
}

/// The message of an API error body (`{"error": {"message": ...}}` in both
/// APIs), or its first 300 characters.
fn error_message(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    message.or_else(|| {
        let trimmed = text.trim();
        (!trimmed.is_empty()).then(|| trimmed.chars().take(300).collect())
    })
}

/// The observation of an API answer: `text` after the case's messages,
/// and the model the response names (else the one asked for). The APIs
/// report no cost.
pub fn observed(
    provider: &str,
    harness: &str,
    request: &Invocation,
    answer: &Value,
    text: &str,
    usage: Option<cautilus_sdk::Usage>,
    retries: u32,
) -> Observation {
    Observation {
        final_text: Some(text.to_string()),
        messages: crate::prompt::with_answer(&request.messages, text),
        tool_calls: None,
        usage,
        cost_usd: None,
        cost_source: None,
        retries: Some(retries),
        duration_ms: None,
        provider: Some(provider.into()),
        model: answer
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .or_else(|| request.model.clone()),
        harness: Some(harness.into()),
        mode: Some("messaging".into()),
        structured: None,
        trace: None,
    }
}

/// The model the case pins, or an error naming the case and what to set
/// (`hint`: an example model).
pub fn pinned_model<'a>(
    provider: &str,
    request: &'a Invocation,
    hint: &str,
) -> Result<&'a str, PluginError> {
    request
        .model
        .as_deref()
        .filter(|m| !m.is_empty())
        .ok_or_else(|| {
            PluginError::failed(format!(
                "{provider}: case `{}` pins no model; set `model` in the fixture ({hint})",
                request.case_id
            ))
        })
}

/// A JSON number as u64 (token counts).
pub fn count(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_honours_retry_after_within_a_cap() {
        assert_eq!(backoff(0, Some("2")), Duration::from_secs(2));
        assert_eq!(backoff(3, Some("0.25")), Duration::from_millis(250));
        assert_eq!(backoff(0, Some("3600")), MAX_WAIT);
        // Past what a Duration holds: capped, no panic.
        for huge in ["1e20", "18446744073709551616", "1e308"] {
            assert_eq!(backoff(0, Some(huge)), MAX_WAIT, "{huge}");
        }
        assert_eq!(backoff(0, None), Duration::from_millis(500));
        assert_eq!(backoff(2, None), Duration::from_millis(2000));
        assert_eq!(backoff(2, Some("soon")), Duration::from_millis(2000));
        assert_eq!(backoff(40, None), MAX_WAIT);
    }

    #[test]
    fn error_bodies_give_their_message() {
        assert_eq!(
            error_message(br#"{"error": {"message": "bad key", "type": "auth"}}"#).as_deref(),
            Some("bad key")
        );
        assert_eq!(
            error_message(
                br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            )
            .as_deref(),
            Some("Overloaded")
        );
        assert_eq!(
            error_message(b"  upstream down ").as_deref(),
            Some("upstream down")
        );
        assert_eq!(error_message(b""), None);
    }

    #[test]
    fn urls_join_with_one_slash() {
        let options: ApiOptions =
            serde_json::from_str(r#"{"baseUrl": "http://127.0.0.1:8080/v1/"}"#).unwrap();
        assert_eq!(
            options.url("/chat/completions"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(options.max_retries, 2);
    }
}
