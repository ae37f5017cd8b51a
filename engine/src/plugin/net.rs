//! The transport behind the `http` host import (after the grant check):
//! one async client for the process, so its connections are pooled and
//! kept alive across calls.
//!
//! Each answer notes when its first content arrived ([`FirstContent`]):
//! the time to first byte a run records beside a call's whole duration.
//!
//! Plain `http://` URLs (a local model server, a loopback test server) go
//! through a client that carries no certificate store: building the TLS
//! client reads every certificate of the system (several milliseconds of a
//! run's start-up), which a run that never speaks TLS should not pay.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::bindings::http::{HttpError, Response};

type Built = Result<reqwest::Client, String>;

fn builder() -> reqwest::ClientBuilder {
    crate::tls::install_crypto_provider();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none())
}

/// The client for `https://` URLs, with the system's certificates.
fn tls_client() -> &'static Built {
    static CLIENT: OnceLock<Built> = OnceLock::new();
    CLIENT.get_or_init(|| builder().build().map_err(|e| e.to_string()))
}

/// The client for `http://` URLs: no certificate store (it never verifies
/// one), so it is cheap to build.
fn plain_client() -> &'static Built {
    static CLIENT: OnceLock<Built> = OnceLock::new();
    CLIENT.get_or_init(|| {
        builder()
            .tls_certs_only([])
            .build()
            .map_err(|e| e.to_string())
    })
}

fn client(url: &reqwest::Url) -> Result<&'static reqwest::Client, HttpError> {
    let built = match url.scheme() {
        "http" => plain_client(),
        _ => tls_client(),
    };
    built
        .as_ref()
        .map_err(|e| HttpError::Transport(format!("cannot build the HTTP client: {e}")))
}

/// Builds the client a run will use on the I/O runtime's blocking pool, so
/// its first calls do not wait for it; `tls`: whether it may reach an
/// `https://` URL (the TLS client reads the system's certificates).
pub fn warm_up(tls: bool) {
    drop(super::io::handle().spawn_blocking(move || {
        if tls {
            tls_client().is_ok()
        } else {
            plain_client().is_ok()
        }
    }));
}

/// A response and when its first content arrived ([`FirstContent`]).
pub(crate) struct Answered {
    pub response: Response,
    pub first_content: Instant,
}

/// Sends one request; the response body is capped at `max_body` bytes.
pub(crate) async fn send(
    method: &str,
    url: reqwest::Url,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
    max_body: usize,
) -> Result<Answered, HttpError> {
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| HttpError::Transport(format!("invalid HTTP method `{method}`")))?;
    let mut request = client(&url)?.request(method, url).timeout(timeout);
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
    let event_stream = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        });
    let mut first = FirstContent::new(event_stream);
    let mut first_content = None;
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
        if first_content.is_none() && first.seen(&body) {
            first_content = Some(Instant::now());
        }
    }
    Ok(Answered {
        response: Response {
            status,
            headers,
            body,
        },
        // A body without content (empty, or an event stream of comments
        // only): its first byte is the end of the answer.
        first_content: first_content.unwrap_or_else(Instant::now),
    })
}

/// When an answer's content starts, fed its body as it grows: the first
/// byte of an ordinary body; in a server-sent event stream, the first
/// `data:` line (a stream's headers and its `: ping` comments come before
/// the model has said anything: llama.cpp's servers send them while a
/// request waits for a slot).
#[derive(Debug)]
pub(crate) struct FirstContent {
    event_stream: bool,
    /// Where the line being scanned starts (the body before it is read).
    line_start: usize,
}

impl FirstContent {
    pub(crate) fn new(event_stream: bool) -> Self {
        Self {
            event_stream,
            line_start: 0,
        }
    }

    /// Whether `body` (all of it so far) holds content.
    pub(crate) fn seen(&mut self, body: &[u8]) -> bool {
        if !self.event_stream {
            return !body.is_empty();
        }
        // Scan the complete lines not yet scanned, and the partial last one
        // once it is long enough to say.
        loop {
            let rest = &body[self.line_start.min(body.len())..];
            if rest.len() >= 5 && rest.starts_with(b"data:") {
                return true;
            }
            match rest.iter().position(|&b| b == b'\n') {
                Some(end) => self.line_start += end + 1,
                None => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FirstContent;

    /// The index of the chunk at which content is first seen.
    fn first_at(event_stream: bool, chunks: &[&str]) -> Option<usize> {
        let mut first = FirstContent::new(event_stream);
        let mut body = Vec::new();
        chunks.iter().position(|chunk| {
            body.extend_from_slice(chunk.as_bytes());
            first.seen(&body)
        })
    }

    #[test]
    fn an_ordinary_body_starts_with_its_first_byte() {
        assert_eq!(first_at(false, &["", "{", "}"]), Some(1));
        assert_eq!(first_at(false, &["{\"a\":1}"]), Some(0));
        assert_eq!(first_at(false, &["", ""]), None);
    }

    #[test]
    fn an_event_stream_starts_with_its_first_data_line() {
        let table: &[(&[&str], Option<usize>)] = &[
            (&["data: {}\n\n"], Some(0)),
            // Pings and other comments while the request waits.
            (&[": ping\n\n", ": ping\r\n\r\n", "data: {}\n"], Some(2)),
            (&["event: message\n", "data: {}\n"], Some(1)),
            // A data line split across chunks.
            (&[": ping\n", "da", "ta: x"], Some(2)),
            (&["event: x\nda", "ta:"], Some(1)),
            // `data:` anywhere but the start of a line is not a data line.
            (&[": a data: b\n", "retry: 10\n"], None),
            (&["event: data:\n"], None),
            (&[], None),
        ];
        for (chunks, expected) in table {
            assert_eq!(first_at(true, chunks), *expected, "{chunks:?}");
        }
    }
}
