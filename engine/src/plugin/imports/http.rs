//! The `http` import: GET and POST to the hosts its policy
//! ([`HttpPolicy`]) allows, secrets filled in by the host, through the
//! pooled transport ([`crate::plugin::net`]); the answer comes back
//! scrubbed of every granted secret.

use std::collections::BTreeMap;
use std::time::Duration;

use wasmtime::component::{HasData, Linker};

use super::CallCtx;
use crate::plugin::bindings::http;
use crate::plugin::capability::http::HttpPolicy;
use crate::plugin::grants::Grants;

/// What the `http` import sees of a store.
pub struct HttpCtx {
    policy: HttpPolicy,
    /// Secret name → environment variable the host reads it from.
    secrets: BTreeMap<String, String>,
    /// Most bytes of a response body.
    output_limit: usize,
}

impl HttpCtx {
    pub fn new(policy: HttpPolicy, grants: &Grants, output_limit: usize) -> Self {
        Self {
            policy,
            secrets: grants.secrets.clone(),
            output_limit,
        }
    }

    fn secret(&self, name: &str) -> Result<String, http::HttpError> {
        let var = self.secrets.get(name).ok_or_else(|| {
            http::HttpError::Denied(format!("this run grants no secret named `{name}`"))
        })?;
        let value = std::env::var(var).map_err(|_| {
            http::HttpError::Denied(format!(
                "secret `{name}` comes from environment variable `{var}`, which is not set"
            ))
        })?;
        // What leaves the host is never written or printed by it.
        crate::secrets::register([value.as_str()]);
        if let Some(c) = value.chars().find(|c| c.is_control() && *c != '\t') {
            return Err(http::HttpError::Denied(format!(
                "secret `{name}` (from environment variable `{var}`) holds a control character (U+{:04X}{}), which a header cannot carry: set the variable without it",
                u32::from(c),
                if c == '\n' {
                    ", a line break: a trailing newline from a file?"
                } else {
                    ""
                }
            )));
        }
        if value.is_empty() {
            return Err(http::HttpError::Denied(format!(
                "secret `{name}` comes from environment variable `{var}`, which is empty"
            )));
        }
        Ok(value)
    }
}

/// The `http` context and the current call's clock (its deadline caps the
/// request's timeout; its first answer's time is kept).
pub struct HttpCtxView<'a> {
    pub ctx: &'a HttpCtx,
    pub call: &'a mut CallCtx,
}

/// The `http` interface's data.
pub struct Http;

impl HasData for Http {
    type Data<'a> = HttpCtxView<'a>;
}

/// A store state that serves `http`.
pub trait HttpView: Send {
    fn http(&mut self) -> HttpCtxView<'_>;
}

impl http::Host for HttpCtxView<'_> {
    async fn send(&mut self, request: http::Request) -> Result<http::Response, http::HttpError> {
        // Model APIs need no more; TRACE and friends could echo a secret
        // header back to the plugin.
        if !matches!(request.method.to_ascii_uppercase().as_str(), "GET" | "POST") {
            return Err(http::HttpError::Denied(format!(
                "only GET and POST are allowed, got `{}`",
                request.method
            )));
        }
        // Parse once, check the host the transport will really connect to, send that URL.
        let url = reqwest::Url::parse(&request.url).map_err(|e| {
            http::HttpError::Transport(format!("invalid URL `{}`: {e}", request.url))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(http::HttpError::Denied(format!(
                "only http and https URLs are allowed, got `{}`",
                url.scheme()
            )));
        }
        let host = url
            .host_str()
            .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_string())
            .ok_or_else(|| http::HttpError::Transport(format!("URL `{url}` has no host")))?;
        self.ctx
            .policy
            .allows(&host)
            .map_err(http::HttpError::Denied)?;
        let mut headers = Vec::with_capacity(request.headers.len());
        for header in request.headers {
            let value = match header.value {
                http::HeaderValue::Text(text) => text,
                http::HeaderValue::Secret(name) => self.ctx.secret(&name)?,
                http::HeaderValue::BearerSecret(name) => {
                    format!("Bearer {}", self.ctx.secret(&name)?)
                }
            };
            headers.push((header.name, value));
        }
        let asked = Duration::from_millis(u64::from(request.timeout_ms.unwrap_or(60_000)));
        let answered = crate::plugin::net::send(
            &request.method,
            url,
            &headers,
            request.body.as_deref(),
            self.call.bounded(asked),
            self.ctx.output_limit,
        )
        .await?;
        // The call's time to first byte: that of its first answer that
        // succeeded (a rate-limited attempt's says nothing of the model).
        if (200..300).contains(&answered.response.status) && self.call.first_content.is_none() {
            self.call.first_content = Some(answered.first_content);
        }
        // A server may echo the key it was sent (an error quoting the
        // header): the plugin gets its answer without it.
        let mut response = answered.response;
        response.body = crate::secrets::scrub_granted_output(response.body, false);
        for (_, value) in &mut response.headers {
            if let std::borrow::Cow::Owned(clean) = crate::secrets::scrub_granted(value) {
                *value = clean;
            }
        }
        Ok(response)
    }
}

pub(super) fn add_to_linker<T: HttpView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    http::add_to_linker::<T, Http>(linker, T::http)
}
