//! The transport behind the `http` host import (after the grant check):
//! one async client for the process, so its connections are pooled and
//! kept alive across calls.
//!
//! Plain `http://` URLs (a local model server, a loopback test server) go
//! through a client that carries no certificate store: building the TLS
//! client reads every certificate of the system (several milliseconds of a
//! run's start-up), which a run that never speaks TLS should not pay.

use std::sync::OnceLock;
use std::time::Duration;

use super::bindings::provider::cautilus::plugin::http::{HttpError, Response};

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
