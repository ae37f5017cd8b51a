//! Host imports offered to plugins, each gated by a capability grant.
//!
//! A call through `model`, `http` or `process` succeeds only when the plugin
//! requested the capability in its `describe` AND the user's run granted it
//! ([`Grants`]). Otherwise the guest gets a `denied` error naming what is
//! missing; it never gets a trap, so a plugin can degrade gracefully.
//! `log` is always available and bounded by the store's output limit.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::bindings::types::{self, Capability, LogLevel};
use super::bindings::{http, process};
use super::bindings::{log, model};
use super::limits::StoreState;

/// A model the host calls on behalf of judge plugins.
pub trait ModelBackend: Send + Sync {
    fn generate(
        &self,
        request: &model::GenerateRequest,
    ) -> Result<model::GenerateResponse, model::ModelError>;

    /// Embedding vectors of texts; a backend without an embeddings
    /// endpoint says so.
    fn embed(
        &self,
        request: &model::EmbedRequest,
    ) -> Result<model::EmbedResponse, model::ModelError> {
        let _ = request;
        Err(model::ModelError::Unavailable(
            "this run's model has no embeddings endpoint".into(),
        ))
    }
}

/// What the user's run allows plugins to do. The default grants nothing.
#[derive(Default, Clone)]
pub struct Grants {
    /// The model behind the `model` import, if the run configured a judge.
    pub model: Option<Arc<dyn ModelBackend>>,
    /// Host names plugins may reach through `http`.
    pub http_hosts: Vec<String>,
    /// Programs plugins may run through `process`.
    pub programs: Vec<String>,
    /// Secret name → environment variable the host reads it from.
    pub secrets: BTreeMap<String, String>,
    /// Working directory for `process` calls.
    pub workspace: Option<std::path::PathBuf>,
    /// Variables of the host's environment that granted programs get (a
    /// CLI's login and endpoint); the plugin never sees their values.
    pub program_env: Vec<String>,
    /// Values the host sets for some of `program_env` instead of its own
    /// (an isolated `CODEX_HOME`).
    pub program_env_set: Vec<(String, std::ffi::OsString)>,
}

impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("model", &self.model.is_some())
            .field("http_hosts", &self.http_hosts)
            .field("programs", &self.programs)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("program_env", &self.program_env)
            .finish()
    }
}

/// Log lines a plugin sent, bounded in total bytes per store.
pub struct LogSink {
    plugin: Arc<str>,
    remaining: usize,
    truncated: bool,
    pub(crate) lines: Vec<(LogLevel, String)>,
    echo_level: Option<LogLevel>,
}

impl LogSink {
    pub fn new(plugin: Arc<str>, budget: usize) -> Self {
        Self {
            plugin,
            remaining: budget,
            truncated: false,
            lines: Vec::new(),
            echo_level: echo_level_from_env(),
        }
    }

    fn push(&mut self, level: LogLevel, message: String) {
        // Every line costs at least a small fixed amount, so empty lines cannot grow memory forever.
        const LINE_COST: usize = 64;
        if self.remaining < LINE_COST {
            self.remaining = 0;
        } else {
            self.remaining -= LINE_COST;
        }
        if self.remaining == 0 {
            if !self.truncated {
                self.truncated = true;
                self.lines.push((
                    LogLevel::Warn,
                    "log output limit reached; further lines dropped".into(),
                ));
            }
            return;
        }
        let mut message = message;
        if message.len() > self.remaining {
            let mut cut = self.remaining;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        self.remaining -= message.len();
        if let Some(min) = self.echo_level
            && level_rank(level) >= level_rank(min)
        {
            // A plugin's text: escaped (and scrubbed of secrets) for the terminal.
            eprintln!(
                "[{} {}] {}",
                crate::term::inline(&self.plugin),
                level_name(level),
                crate::term::inline(&message)
            );
        }
        self.lines.push((level, message));
    }
}

fn level_rank(level: LogLevel) -> u8 {
    match level {
        LogLevel::Trace => 0,
        LogLevel::Debug => 1,
        LogLevel::Info => 2,
        LogLevel::Warn => 3,
        LogLevel::Error => 4,
    }
}

fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Trace => "trace",
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
    }
}

/// `CAUTILUS_PLUGIN_LOG=debug` echoes plugin log lines at or above that
/// level to stderr. Read once per process: stores are created on hot paths.
fn echo_level_from_env() -> Option<LogLevel> {
    static LEVEL: std::sync::OnceLock<Option<LogLevel>> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(
        || match std::env::var("CAUTILUS_PLUGIN_LOG").ok()?.as_str() {
            "trace" => Some(LogLevel::Trace),
            "debug" => Some(LogLevel::Debug),
            "info" => Some(LogLevel::Info),
            "warn" => Some(LogLevel::Warn),
            "error" => Some(LogLevel::Error),
            _ => None,
        },
    )
}

/// Capabilities a plugin requested in `describe`, recorded per store; for
/// a pack's plugin, only those its pack was granted at install, and the
/// pack's `name@version` (second field) to say so when a call is denied.
#[derive(Debug, Default, Clone)]
pub struct Requested(pub Vec<Capability>, pub Option<String>);

impl Requested {
    /// Why a call needing `capability` is denied before the run's grants
    /// are looked at.
    fn refusal(&self, plugin: &str, capability: &str) -> String {
        match &self.1 {
            None => format!("plugin `{plugin}` did not request `{capability}` in its describe"),
            Some(pack) => format!(
                "plugin `{plugin}` may not use `{capability}`: it did not request it, or its pack {pack} was not granted it at install (`cautilus pack install <source> --grant {capability}`)"
            ),
        }
    }

    pub(crate) fn model(&self) -> bool {
        self.0.iter().any(|c| matches!(c, Capability::Model))
    }

    /// `*` asks for whichever hosts the run grants (an API provider whose
    /// endpoint the user chooses); the grant still decides.
    fn http_host(&self, host: &str) -> bool {
        self.0.iter().any(|c| match c {
            Capability::Http(hosts) => hosts.iter().any(|h| h == host || h == "*"),
            _ => false,
        })
    }

    fn program(&self, program: &str) -> bool {
        self.0.iter().any(|c| match c {
            Capability::Process(programs) => programs.iter().any(|p| p == program),
            _ => false,
        })
    }
}

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
    fn empty_log_lines_still_cost_budget() {
        let mut sink = LogSink::new("p".into(), 1000);
        sink.echo_level = None;
        for _ in 0..10_000 {
            sink.push(LogLevel::Info, String::new());
        }
        assert!(
            sink.lines.len() <= 1000 / 64 + 1,
            "{} lines kept",
            sink.lines.len()
        );
    }

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

    #[test]
    fn log_sink_enforces_its_budget() {
        // Two lines' fixed cost (64 bytes each) plus 10 bytes of text.
        let mut sink = LogSink::new("p".into(), 138);
        sink.echo_level = None;
        sink.push(LogLevel::Info, "12345".into());
        sink.push(LogLevel::Info, "67890abc".into());
        sink.push(LogLevel::Info, "more".into());
        sink.push(LogLevel::Info, "more".into());
        let texts: Vec<&str> = sink.lines.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            texts,
            [
                "12345",
                "67890",
                "log output limit reached; further lines dropped"
            ]
        );
    }
}
