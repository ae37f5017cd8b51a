//! Host imports offered to plugins, each gated by a capability grant.
//!
//! A call through `model`, `http` or `process` succeeds only when the plugin
//! requested the capability in its `describe` AND the user's run granted it
//! ([`super::grants::Grants`]). Otherwise the guest gets a `denied` error naming what is
//! missing; it never gets a trap, so a plugin can degrade gracefully.
//! `log` is always available and bounded by the store's output limit
//! ([`super::log_sink`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::bindings::types::{self, LogLevel};
use super::bindings::{http, process};
use super::bindings::{log, model};
use super::grants::ModelBackend;
use super::limits::StoreState;

impl types::Host for StoreState {}

impl log::Host for StoreState {
    fn log(&mut self, level: LogLevel, message: String) {
        self.log.push(level, message);
    }
}

impl StoreState {
    /// The run's model, if the plugin requested it and the run grants one.
    fn model_backend(&self) -> Result<Arc<dyn ModelBackend>, model::ModelError> {
        if !self.requested.model() {
            return Err(model::ModelError::Denied(
                self.requested.refusal(&self.plugin, "model"),
            ));
        }
        self.grants.model.clone().ok_or_else(|| {
            model::ModelError::Denied(
                "this run grants no model: configure a judge to let scorers call one (a suite's `judge: {provider, model}`, `[judge]` in cautilus.toml, or `--judge PROVIDER/MODEL`)"
                    .into(),
            )
        })
    }
}

impl model::Host for StoreState {
    fn generate(
        &mut self,
        request: model::GenerateRequest,
    ) -> Result<model::GenerateResponse, model::ModelError> {
        self.model_backend()?.generate(&request)
    }

    fn embed(
        &mut self,
        request: model::EmbedRequest,
    ) -> Result<model::EmbedResponse, model::ModelError> {
        self.model_backend()?.embed(&request)
    }
}

impl http::Host for StoreState {
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
            .map(|h| {
                h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_ascii_lowercase()
            })
            .ok_or_else(|| http::HttpError::Transport(format!("URL `{url}` has no host")))?;
        if !self.requested.http_host(&host) {
            return Err(http::HttpError::Denied(
                self.requested
                    .refusal(&self.plugin, &format!("http:{host}")),
            ));
        }
        if !self.grants.http_hosts.iter().any(|h| h == &host) {
            return Err(http::HttpError::Denied(format!(
                "this run does not grant http access to `{host}`"
            )));
        }
        let mut headers = Vec::with_capacity(request.headers.len());
        for header in request.headers {
            let value = match header.value {
                http::HeaderValue::Text(text) => text,
                http::HeaderValue::Secret(name) => self.secret(&name)?,
                http::HeaderValue::BearerSecret(name) => format!("Bearer {}", self.secret(&name)?),
            };
            headers.push((header.name, value));
        }
        let asked = Duration::from_millis(u64::from(request.timeout_ms.unwrap_or(60_000)));
        let answered = super::net::send(
            &request.method,
            url,
            &headers,
            request.body.as_deref(),
            self.bounded(asked),
            self.output_limit,
        )
        .await?;
        // The call's time to first byte: that of its first answer that
        // succeeded (a rate-limited attempt's says nothing of the model).
        if (200..300).contains(&answered.response.status) && self.first_content.is_none() {
            self.first_content = Some(answered.first_content);
        }
        Ok(answered.response)
    }
}

impl StoreState {
    fn secret(&self, name: &str) -> Result<String, http::HttpError> {
        let var = self.grants.secrets.get(name).ok_or_else(|| {
            http::HttpError::Denied(format!("this run grants no secret named `{name}`"))
        })?;
        let value = std::env::var(var).map_err(|_| {
            http::HttpError::Denied(format!(
                "secret `{name}` comes from environment variable `{var}`, which is not set"
            ))
        })?;
        // What leaves the host is never written or printed by it.
        crate::secrets::register([value.as_str()]);
        Ok(value)
    }

    /// A host call may not outlive the guest call that made it: epoch
    /// interruption cannot stop host code, so its timeout is capped by the
    /// time left before the call's deadline.
    fn bounded(&self, asked: Duration) -> Duration {
        asked.min(self.deadline.saturating_duration_since(Instant::now()))
    }
}

impl process::Host for StoreState {
    async fn run(
        &mut self,
        command: process::Command,
    ) -> Result<process::Output, process::ProcessError> {
        if !self.requested.program(&command.program) {
            return Err(process::ProcessError::Denied(
                self.requested
                    .refusal(&self.plugin, &format!("process:{}", command.program)),
            ));
        }
        if !self.grants.programs.iter().any(|p| p == &command.program) {
            return Err(process::ProcessError::Denied(format!(
                "this run does not grant running `{}`",
                command.program
            )));
        }
        if let Some((key, _)) = command.env.iter().find(|(key, _)| is_loader_variable(key)) {
            return Err(process::ProcessError::Denied(format!(
                "plugins may not set `{key}`: it changes which program runs or what it loads"
            )));
        }
        // The variables the host passes the program (its login, endpoint,
        // proxy, certificates) are the host's: a plugin setting one could
        // send the inherited key elsewhere.
        if let Some((key, _)) = command.env.iter().find(|(key, _)| {
            self.grants
                .program_env
                .iter()
                .any(|inherited| inherited.eq_ignore_ascii_case(key))
                || is_trust_variable(key)
        }) {
            return Err(process::ProcessError::Denied(format!(
                "plugins may not set `{key}`: the host sets where the program connects and what it trusts"
            )));
        }
        let workspace = self
            .case_workspace
            .clone()
            .or_else(|| self.grants.workspace.clone())
            .unwrap_or_else(std::env::temp_dir);
        let cwd = match &command.cwd {
            None => workspace,
            Some(rel) => {
                let rel = std::path::Path::new(rel);
                if rel.is_absolute()
                    || rel
                        .components()
                        .any(|c| matches!(c, std::path::Component::ParentDir))
                {
                    return Err(process::ProcessError::Denied(format!(
                        "cwd `{}` must be relative to the workspace and stay inside it",
                        rel.display()
                    )));
                }
                workspace.join(rel)
            }
        };
        let timeout = self.bounded(Duration::from_millis(u64::from(
            command.timeout_ms.unwrap_or(60_000),
        )));
        let inherited: Vec<(String, std::ffi::OsString)> = self
            .grants
            .program_env
            .iter()
            .filter_map(|name| {
                let set = self.grants.program_env_set.iter().find(|(n, _)| n == name);
                let value = match set {
                    Some((_, value)) => value.clone(),
                    None => std::env::var_os(name)?,
                };
                if crate::secrets::names_a_credential(name) {
                    crate::secrets::register(value.to_str());
                }
                Some((name.clone(), value))
            })
            .collect();
        // The waiting is done on tokio's blocking pool, so the I/O workers
        // keep serving the other calls in flight.
        let limit = self.output_limit;
        tokio::task::spawn_blocking(move || run_bounded(&command, &inherited, &cwd, timeout, limit))
            .await
            .unwrap_or_else(|e| {
                Err(process::ProcessError::Failed(format!(
                    "the runner stopped: {e}"
                )))
            })
    }
}

/// Environment variables that would let a plugin swap the granted program
/// or inject code into it.
fn is_loader_variable(key: &str) -> bool {
    let key = key.to_ascii_uppercase();
    key == "PATH"
        || key.starts_with("LD_")
        || key.starts_with("DYLD_")
        || [
            "BASH_ENV",
            "ENV",
            "IFS",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
        ]
        .contains(&key.as_str())
        || key.starts_with("GIT_CONFIG")
}

/// Variables that change where a program connects or what it trusts.
fn is_trust_variable(key: &str) -> bool {
    let key = key.to_ascii_uppercase();
    key.ends_with("_PROXY")
        || key.ends_with("_BASE_URL")
        || [
            "NODE_TLS_REJECT_UNAUTHORIZED",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
        ]
        .contains(&key.as_str())
}

/// Runs a command with a clean environment (the host's `PATH`, then
/// `inherited` (from the host's environment, as granted), then the
/// command's own variables), a timeout and capped output, through
/// [`crate::process_tree`]: every process the program starts ends with it.
pub(crate) fn run_bounded(
    command: &process::Command,
    inherited: &[(String, std::ffi::OsString)],
    cwd: &std::path::Path,
    timeout: Duration,
    output_limit: usize,
) -> Result<process::Output, process::ProcessError> {
    use crate::process_tree::{RunError, Spec, run};
    use std::ffi::OsString;
    let mut env = vec![(
        OsString::from("PATH"),
        std::env::var_os("PATH").unwrap_or_default(),
    )];
    env.extend(
        inherited
            .iter()
            .map(|(k, v)| (OsString::from(k), v.clone())),
    );
    env.extend(
        command
            .env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    let finished = run(&Spec {
        program: &command.program,
        args: &command.args,
        env: &env,
        cwd,
        stdin: command.stdin.as_deref(),
        timeout,
        output_limit,
    })
    .map_err(|error| match error {
        RunError::NotFound(program) => process::ProcessError::NotFound(program),
        other => process::ProcessError::Failed(other.to_string()),
    })?;
    Ok(process::Output {
        status: finished.status,
        stdout: finished.stdout,
        stderr: finished.stderr,
        timed_out: finished.timed_out,
        truncated: finished.truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_variables_are_the_hosts() {
        for key in [
            "HTTPS_PROXY",
            "all_proxy",
            "ANTHROPIC_BASE_URL",
            "NODE_TLS_REJECT_UNAUTHORIZED",
        ] {
            assert!(is_trust_variable(key), "{key}");
        }
        assert!(!is_trust_variable("NO_COLOR"));
    }

    #[test]
    fn loader_variables_are_refused() {
        for key in [
            "PATH",
            "ld_preload",
            "DYLD_INSERT_LIBRARIES",
            "BASH_ENV",
            "GIT_CONFIG_GLOBAL",
        ] {
            assert!(is_loader_variable(key), "{key}");
        }
        assert!(!is_loader_variable("LANG"));
    }
}
