//! The transport behind the `http` host import (after the grant check):
//! one async client for the process, so its connections are pooled and
//! kept alive across calls.

use std::sync::OnceLock;
use std::time::Duration;

use super::bindings::provider::cautilus::plugin::http::{HttpError, Response};

fn client() -> Result<&'static reqwest::Client, HttpError> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| HttpError::Transport(format!("cannot build the HTTP client: {e}")))
}

/// Builds the client on the I/O runtime's blocking pool, so the first
/// calls of a run do not wait for it (it reads the system's certificates).
pub fn warm_up() {
    drop(super::io::handle().spawn_blocking(|| client().is_ok()));
}

/// Sends one request; the response body is capped at `max_body` bytes.
pub(crate) async fn send(
    method: &str,
    url: reqwest::Url,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
    max_body: usize,
) -> Result<Response, HttpError> {
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| HttpError::Transport(format!("invalid HTTP method `{method}`")))?;
    let mut request = client()?.request(method, url).timeout(timeout);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    if let Some(body) = body {
        request = request.body(body.to_vec());
    }
    let mut response = request.send().await.map_err(|e| {
        if e.is_timeout() {
            HttpError::Timeout
        } else {
            HttpError::Transport(e.to_string())
        }
    })?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        if e.is_timeout() {
            HttpError::Timeout
        } else {
            HttpError::Transport(e.to_string())
        }
    })? {
        if body.len() + chunk.len() > max_body {
            return Err(HttpError::TooLarge(max_body as u64));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}
