//! What every request passes before a route sees it, and what every
//! answer carries:
//!
//! - **Methods**: `GET` and `HEAD` only; anything else is `405` (the server
//!   changes nothing).
//! - **Host**: the `Host` header must name this server: the address it is
//!   bound to, `localhost`, `127.0.0.1` or `[::1]`, with the bound port.
//!   Bound to every interface (`--bind 0.0.0.0`), any IP address is taken
//!   too; a name never is. Anything else (a DNS name rebound to 127.0.0.1
//!   by a web page's attacker, a missing header) is `421 Misdirected Request` with a
//!   one-line reason, before any route runs.
//! - **Headers** on every answer: a Content-Security-Policy that allows
//!   the server's own script and style and nothing remote or inline
//!   ([`CSP`]), `X-Content-Type-Options: nosniff`, `Referrer-Policy:
//!   no-referrer`, `X-Frame-Options: DENY`; `Cache-Control: no-store` on the
//!   API's answers.

use std::net::{IpAddr, SocketAddr};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::api::error_response;

/// The page's Content-Security-Policy.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Whether a request's `Host` header names the server bound at `bound`.
pub fn host_allowed(host: &str, bound: SocketAddr) -> bool {
    let port = bound.port();
    let (name, given_port) = match host.rsplit_once(':') {
        // `[::1]:8080`, `localhost:8080`; a bare IPv6 address has no port.
        Some((name, p))
            if !name.is_empty()
                && !p.contains(']')
                && (!name.contains(':') || name.ends_with(']')) =>
        {
            match p.parse::<u16>() {
                Ok(p) => (name, Some(p)),
                Err(_) => return false,
            }
        }
        _ => (host, None),
    };
    // Without a port, the client meant the scheme's default.
    if given_port.unwrap_or(80) != port {
        return false;
    }
    let name = name.to_ascii_lowercase();
    if matches!(name.as_str(), "localhost" | "127.0.0.1" | "[::1]") {
        return true;
    }
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        // An address (never a name a rebinding attacker controls): the
        // bound one, or any when bound to every interface (`--bind 0.0.0.0`).
        Ok(ip) => bound.ip().is_unspecified() || ip == bound.ip(),
        Err(_) => false,
    }
}

/// The middleware: methods, `Host`, and the headers of every answer.
pub async fn guard(
    State(bound): State<SocketAddr>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let mut response = if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let mut r = error_response(
            StatusCode::METHOD_NOT_ALLOWED,
            format!(
                "method {} is not served: the server is read-only",
                request.method()
            ),
            "use GET (or HEAD)".into(),
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        r
    } else {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default()
            .to_string();
        if host_allowed(&host, bound) {
            next.run(request).await
        } else {
            error_response(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "Host {:?} is not this server (it answers for 127.0.0.1, localhost and [::1] on port {} only)",
                    host.chars().take(200).collect::<String>(),
                    bound.port()
                ),
                format!("open http://127.0.0.1:{}/", bound.port()),
            )
        }
    };
    let no_store = api || response.status().is_client_error();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if no_store {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_servers_names_are_hosts() {
        let bound: SocketAddr = "127.0.0.1:4173".parse().unwrap();
        for ok in [
            "127.0.0.1:4173",
            "localhost:4173",
            "LOCALHOST:4173",
            "[::1]:4173",
        ] {
            assert!(host_allowed(ok, bound), "{ok}");
        }
        for bad in [
            "evil.example:4173",
            "127.0.0.1:4174",
            "127.0.0.1",
            "localhost",
            "",
            "127.0.0.1:4173:1",
            "localhost.evil.example:4173",
            "127.0.0.2:4173",
            "[::1]",
            "0.0.0.0:4173",
        ] {
            assert!(!host_allowed(bad, bound), "{bad}");
        }
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(host_allowed("localhost:8080", any));
        assert!(host_allowed("192.168.1.5:8080", any));
        assert!(!host_allowed("lan-host.example:8080", any));
        let lan: SocketAddr = "192.168.1.5:80".parse().unwrap();
        assert!(host_allowed("192.168.1.5", lan));
        assert!(host_allowed("192.168.1.5:80", lan));
        let v6: SocketAddr = "[fd00::5]:8080".parse().unwrap();
        assert!(host_allowed("[fd00::5]:8080", v6));
        assert!(!host_allowed("fd00::5", v6));
    }
}
