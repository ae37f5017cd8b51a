//! How a run reaches its provider: the component, what the run grants it,
//! and the options the host passes on every invocation.
//!
//! The built-in API providers get exactly what they need and nothing more:
//! `openai` the host of its base URL (`OPENAI_BASE_URL`, default
//! `https://api.openai.com/v1`) and, when `OPENAI_API_KEY` is set, that
//! secret; `anthropic` the host of `ANTHROPIC_BASE_URL` (default
//! `https://api.anthropic.com`) and the secret `ANTHROPIC_API_KEY`, which it
//! requires. The component gets the endpoint and the secret's *name* in its
//! options; the key itself never leaves the host (it is read from the
//! environment when a request is sent). Any other provider (a `.wasm` path)
//! gets what the user grants with `--grant-http`, `--grant-program` and
//! `--grant-secret`; those flags add to a built-in's grants too.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::provider::pricing::{Pricing, parse_prices, prices_variable};
use crate::plugin::{Grants, Plugin, Registry};

/// Capabilities the user grants a run's provider on the command line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantFlags {
    /// Host names the provider may reach through `http`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_hosts: Vec<String>,
    /// Programs the provider may run through `process`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<String>,
    /// Secret name → the environment variable it is read from.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, String>,
}

impl GrantFlags {
    /// Parses one `--grant-secret` value: `NAME=ENV_VAR`, or `NAME` for a
    /// secret read from the variable of the same name.
    pub fn parse_secret(value: &str) -> Result<(String, String), String> {
        let (name, var) = value.split_once('=').unwrap_or((value, value));
        let valid =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid(name) && valid(var) {
            Ok((name.to_string(), var.to_string()))
        } else {
            Err(format!(
                "`{value}`: give NAME=ENV_VAR (letters, digits and `_`), e.g. MY_KEY=ACME_API_KEY"
            ))
        }
    }
}

/// A run's provider, ready to be instantiated.
pub struct ProviderSetup {
    pub plugin: Arc<Plugin>,
    /// What the run grants it (the run's workspace is its `process`
    /// directory unless this names another).
    pub grants: Grants,
    /// The empty directory a messaging CLI runs in (so no project
    /// instructions reach the model); removed when dropped.
    pub scratch: Option<tempfile::TempDir>,
    /// A coding agent (`claude-code`, `codex`): each sample runs in a fresh
    /// copy of the workspace.
    pub agent: bool,
    /// Passed in every invocation's `options` (with the case's canned
    /// result, for the fixture backend).
    pub options: Map<String, Value>,
    /// Whether its calls may reach an `https://` URL: false when the only
    /// host it is granted is a built-in API endpoint at an `http://` URL
    /// (a local server), so the run never loads a certificate store.
    pub tls: bool,
    /// Which costs of its calls the run records.
    pub pricing: Pricing,
}

/// The endpoint of a built-in API provider.
struct Endpoint {
    /// Whose prices the price table holds, and configured prices are
    /// named after (`CAUTILUS_OPENAI_PRICES`).
    family: &'static str,
    url_variable: &'static str,
    default_url: &'static str,
    key_variable: &'static str,
    key_required: bool,
    /// The variable that turns streamed answers on, for an API that can
    /// stream ([`STREAM_VARIABLE`]).
    stream_variable: Option<&'static str>,
}

fn endpoint(id: &str) -> Option<Endpoint> {
    match id {
        "openai" => Some(Endpoint {
            family: "openai",
            url_variable: "OPENAI_BASE_URL",
            default_url: "https://api.openai.com/v1",
            key_variable: "OPENAI_API_KEY",
            // A local OpenAI-compatible server (llama.cpp, vLLM, Ollama) needs none.
            key_required: false,
            stream_variable: Some(STREAM_VARIABLE),
        }),
        "anthropic" => Some(Endpoint {
            family: "anthropic",
            url_variable: "ANTHROPIC_BASE_URL",
            default_url: "https://api.anthropic.com",
            key_variable: "ANTHROPIC_API_KEY",
            key_required: true,
            stream_variable: None,
        }),
        _ => None,
    }
}

/// The variable that asks the `openai` provider for streamed answers
/// (`[providers.openai] stream` in `cautilus.toml` stands for it).
pub const STREAM_VARIABLE: &str = "CAUTILUS_OPENAI_STREAM";

/// What a built-in API provider is granted and told.
#[derive(Debug, PartialEq)]
struct ApiGrant {
    /// The base URL's host.
    host: String,
    /// Whether the base URL is `https://`.
    tls: bool,
    /// The key's secret name (= its environment variable), when set.
    secret: Option<String>,
    options: Map<String, Value>,
    pricing: Pricing,
}

/// The grant of built-in API provider `id` (`None` for any other id), or
/// what to set.
fn api_endpoint(
    id: &str,
    timeout_ms: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ApiGrant>, String> {
    let Some(endpoint) = endpoint(id) else {
        return Ok(None);
    };
    let base = env(endpoint.url_variable)
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| endpoint.default_url.to_string());
    let url = reqwest::Url::parse(base.trim()).map_err(|e| {
        format!(
            "{} is not a URL (`{base}`: {e}); set it to the server's base URL, e.g. {}",
            endpoint.url_variable, endpoint.default_url
        )
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{} must not carry a user or password (it would be written to records); give the key in {}",
            endpoint.url_variable, endpoint.key_variable
        ));
    }
    let host = match (url.scheme(), url.host_str()) {
        ("http" | "https", Some(host)) => host.trim_matches(['[', ']']).to_ascii_lowercase(),
        _ => {
            return Err(format!(
                "{} must be an http(s) URL with a host, got `{base}`",
                endpoint.url_variable
            ));
        }
    };
    let has_key = env(endpoint.key_variable).is_some_and(|k| !k.trim().is_empty());
    if endpoint.key_required && !has_key {
        return Err(format!(
            "set {} (cautilus sends the key itself: the provider component never sees it and no record contains it); or run with `--provider fixture`",
            endpoint.key_variable
        ));
    }
    let mut options = Map::new();
    options.insert("baseUrl".into(), json!(url.as_str().trim_end_matches('/')));
    let secret = has_key.then(|| endpoint.key_variable.to_string());
    if let Some(secret) = &secret {
        options.insert("apiKeySecret".into(), json!(secret));
    }
    options.insert(
        "timeoutMs".into(),
        json!(timeout_ms.min(u64::from(u32::MAX))),
    );
    if let Some(variable) = endpoint.stream_variable
        && stream_asked(variable, env)?
    {
        options.insert("stream".into(), json!(true));
    }
    // The price table holds the public API's prices: a call to another
    // server (a local llama.cpp echoing `gpt-4o-mini`) is not priced by it.
    let official = reqwest::Url::parse(endpoint.default_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| h == host);
    let pricing = Pricing {
        table_applies: official,
        configured: configured_prices(endpoint.family, env)?,
    };
    Ok(Some(ApiGrant {
        host,
        tls: url.scheme() == "https",
        secret,
        options,
        pricing,
    }))
}

/// Whether `variable` asks for streamed answers (`true`/`false`, `1`/`0`,
/// `yes`/`no`, `on`/`off`; unset or empty: no).
fn stream_asked(variable: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    let Some(value) = env(variable) else {
        return Ok(false);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" | "off" => Ok(false),
        "1" | "true" | "yes" | "on" => Ok(true),
        _ => Err(format!(
            "{variable} must be true or false, got `{}`",
            crate::term::inline(&value)
        )),
    }
}

/// The prices configured for provider family `family`
/// (`[providers.<family>.prices]`, or its variable).
fn configured_prices(
    family: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<crate::eval::provider::pricing::PriceTable, String> {
    let variable = prices_variable(family);
    match env(&variable) {
        Some(text) if !text.trim().is_empty() => parse_prices(&text, &variable),
        _ => Ok(Default::default()),
    }
}

/// How the calls of messaging/agent CLI `id` are priced: Codex's derived
/// costs stand only when it talks to OpenAI (no `OPENAI_BASE_URL`, and its
/// config names no other `model_provider`); the CLIs of a family take that
/// family's configured prices.
fn cli_pricing(id: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Pricing, String> {
    let (family, table_applies) = match id {
        "codex-cli" | "codex" => ("openai", codex_talks_to_openai(env)),
        _ => ("anthropic", true),
    };
    Ok(Pricing {
        table_applies,
        configured: configured_prices(family, env)?,
    })
}

fn codex_talks_to_openai(env: &dyn Fn(&str) -> Option<String>) -> bool {
    if env("OPENAI_BASE_URL").is_some_and(|u| !u.trim().is_empty()) {
        return false;
    }
    let home = env("CODEX_HOME")
        .filter(|h| !h.trim().is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| env("HOME").map(|h| std::path::Path::new(&h).join(".codex")));
    let Some(text) = home.and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok()) else {
        return true;
    };
    match toml::from_str::<toml::Table>(&text) {
        Ok(config) => config
            .get("model_provider")
            .and_then(toml::Value::as_str)
            .is_none_or(|p| p == "openai"),
        // A config Codex itself would refuse: no cost is better than a guess.
        Err(_) => false,
    }
}

/// A coding-agent CLI, run in messaging mode (`claude-cli`, `codex-cli`:
/// in an empty directory, no tools) or as an agent in a copy of the
/// workspace (`claude-code`, `codex`).
struct MessagingCli {
    /// Whether it works in the workspace (an agent) rather than answering
    /// messages.
    agent: bool,
    program: &'static str,
    /// The host variables it reads its login and endpoint from (besides
    /// [`CLI_BASE_ENV`]).
    env: &'static [&'static str],
    /// What to do when it is not on PATH.
    missing: &'static str,
}

/// Variables every CLI may need to find its home, temp dir and proxy.
const CLI_BASE_ENV: [&str; 9] = [
    "HOME",
    "USER",
    "LANG",
    "TMPDIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
];

const CLAUDE_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CONFIG_DIR",
    "XDG_CONFIG_HOME",
];
const CODEX_ENV: &[&str] = &[
    "CODEX_HOME",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "XDG_CONFIG_HOME",
];

fn messaging_cli(id: &str) -> Option<MessagingCli> {
    match id {
        "claude-code" => Some(MessagingCli {
            agent: true,
            program: "claude",
            env: CLAUDE_ENV,
            missing: "`claude` is not on PATH; install Claude Code (`npm install -g @anthropic-ai/claude-code`) and log in",
        }),
        "codex" => Some(MessagingCli {
            agent: true,
            program: "codex",
            env: CODEX_ENV,
            missing: "`codex` is not on PATH; install Codex (`npm install -g @openai/codex`) and log in (`codex login`)",
        }),
        "claude-cli" => Some(MessagingCli {
            agent: false,
            program: "claude",
            env: CLAUDE_ENV,
            missing: "`claude` is not on PATH; install Claude Code (`npm install -g @anthropic-ai/claude-code`) and log in, or use `--provider anthropic` with ANTHROPIC_API_KEY",
        }),
        "codex-cli" => Some(MessagingCli {
            agent: false,
            program: "codex",
            env: CODEX_ENV,
            missing: "`codex` is not on PATH; install Codex (`npm install -g @openai/codex`) and log in (`codex login`), or use `--provider openai` with OPENAI_API_KEY",
        }),
        _ => None,
    }
}

/// Whether `program` is an executable file in one of `PATH`'s directories.
pub(in crate::eval) fn on_path(program: &str, env: &dyn Fn(&str) -> Option<String>) -> bool {
    let Some(path) = env("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        let candidate = dir.join(program);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            candidate.is_file()
        }
    })
}

/// The generation settings (`crate::fixture::settings::NAMES`) built-in
/// provider `reference` applies; `None` for any other provider (a `.wasm`
/// or a pack's), which gets them in its options and says nothing.
pub fn settings_applied(reference: &str) -> Option<&'static [&'static str]> {
    if crate::plugin::split_path_reference(reference).is_some() {
        return None;
    }
    match reference {
        "openai" => Some(crate::fixture::settings::NAMES),
        // The Messages API takes no seed.
        "anthropic" => Some(&["temperature", "maxTokens", "topP", "stop"]),
        // Canned answers, and CLIs that take none of them.
        "fixture" | "claude-cli" | "codex-cli" | "claude-code" | "codex" => Some(&[]),
        _ => None,
    }
}

/// A provider granted nothing, for a run that answers every call from its
/// cassette (`replay-strict`): no endpoint, key or program is looked for.
pub fn denied(registry: &Registry, reference: &str) -> Result<ProviderSetup, EvalError> {
    Ok(ProviderSetup {
        plugin: registry.resolve_provider(reference)?,
        grants: Grants::default(),
        scratch: None,
        // A coding agent's calls are keyed by its workspace copy's hash,
        // so a replayed sample is copied (and hashed) as a live one is.
        agent: crate::plugin::split_path_reference(reference).is_none()
            && messaging_cli(reference).is_some_and(|cli| cli.agent),
        options: Map::new(),
        tls: false,
        // Replayed costs are as recorded.
        pricing: Pricing::default(),
    })
}

impl ProviderSetup {
    /// The values of the secrets and credential-like variables the run
    /// grants, read from the environment (for redaction).
    /// They are registered too, so nothing this process writes or prints
    /// holds them ([`crate::secrets::register`]).
    pub fn secret_values(&self) -> Vec<String> {
        let values: Vec<String> = self
            .grants
            .secrets
            .values()
            .chain(
                self.grants
                    .program_env
                    .iter()
                    .filter(|name| crate::secrets::names_a_credential(name)),
            )
            .filter_map(|name| std::env::var(name).ok())
            .filter(|value| !value.trim().is_empty())
            .collect();
        crate::secrets::register(values.iter().map(String::as_str));
        values
    }
}

/// Gives the `codex` agent a temporary `CODEX_HOME` holding only the
/// operator's `auth.json` and `config.toml` (from `CODEX_HOME`, else
/// `~/.codex`), so nothing else of the operator's Codex state (sessions,
/// history, other config) reaches the run (`agent.codexHome: isolated`). A
/// missing file is left out: Codex then says it is not logged in, and the
/// cases are blocked with `runner_auth_missing`.
pub fn isolate_codex_home(
    setup: &mut ProviderSetup,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), EvalError> {
    let error = |message: String| EvalError::Provider {
        provider: "codex".into(),
        message,
    };
    let source = env("CODEX_HOME")
        .filter(|h| !h.trim().is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| env("HOME").map(|h| std::path::Path::new(&h).join(".codex")));
    let home = tempfile::Builder::new()
        .prefix("cautilus-codex-home-")
        .tempdir()
        .map_err(|e| error(format!("cannot create an isolated CODEX_HOME: {e}")))?;
    for name in ["auth.json", "config.toml"] {
        let Some(from) = source
            .as_ref()
            .map(|s| s.join(name))
            .filter(|f| f.is_file())
        else {
            continue;
        };
        std::fs::copy(&from, home.path().join(name)).map_err(|e| {
            error(format!(
                "cannot copy {} into the isolated CODEX_HOME: {e}",
                from.display()
            ))
        })?;
    }
    setup
        .grants
        .program_env_set
        .push(("CODEX_HOME".into(), home.path().as_os_str().to_owned()));
    if !setup.grants.program_env.iter().any(|n| n == "CODEX_HOME") {
        setup.grants.program_env.push("CODEX_HOME".into());
    }
    setup.scratch = Some(home);
    Ok(())
}

/// Resolves `reference` and what it is granted. `env` reads the
/// environment (a parameter, so tests need not change the process's).
pub fn setup(
    registry: &Registry,
    reference: &str,
    flags: &GrantFlags,
    timeout_ms: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderSetup, EvalError> {
    let plugin = registry.resolve_provider(reference)?;
    let mut grants = Grants {
        http_hosts: flags.http_hosts.clone(),
        programs: flags.programs.clone(),
        secrets: flags.secrets.clone(),
        ..Grants::default()
    };
    let mut options = Map::new();
    let mut pricing = Pricing::default();
    // Hosts granted by flag may be reached over either scheme.
    let mut tls = !flags.http_hosts.is_empty();
    let builtin = crate::plugin::split_path_reference(reference).is_none();
    if builtin
        && let Some(api) =
            api_endpoint(reference, timeout_ms, env).map_err(|message| EvalError::Provider {
                provider: reference.to_string(),
                message,
            })?
    {
        grants.http_hosts.push(api.host);
        tls |= api.tls;
        pricing = api.pricing;
        if let Some(secret) = api.secret {
            grants.secrets.insert(secret.clone(), secret);
        }
        options = api.options;
    }
    let mut scratch = None;
    let mut agent = false;
    if builtin && let Some(cli) = messaging_cli(reference) {
        let error = |message: String| EvalError::Provider {
            provider: reference.to_string(),
            message,
        };
        if !on_path(cli.program, env) {
            return Err(error(cli.missing.to_string()));
        }
        pricing = cli_pricing(reference, env).map_err(error)?;
        grants.programs.push(cli.program.to_string());
        grants
            .program_env
            .extend(CLI_BASE_ENV.iter().chain(cli.env).map(|v| v.to_string()));
        options.insert(
            "timeoutMs".into(),
            json!(timeout_ms.min(u64::from(u32::MAX))),
        );
        if cli.agent {
            // Each sample gets its own copy of the workspace (set per call).
            agent = true;
            return Ok(ProviderSetup {
                plugin,
                grants,
                scratch,
                agent,
                options,
                tls,
                pricing,
            });
        }
        let dir = tempfile::Builder::new()
            .prefix("cautilus-cli-")
            .tempdir()
            .map_err(|e| {
                error(format!(
                    "cannot create an empty directory to run it in: {e}"
                ))
            })?;
        grants.workspace = Some(dir.path().to_path_buf());
        scratch = Some(dir);
    }
    Ok(ProviderSetup {
        plugin,
        grants,
        scratch,
        agent,
        options,
        tls,
        pricing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_price_table_prices_only_calls_to_the_public_api() {
        let priced = |pairs: &'static [(&'static str, &'static str)]| {
            api_endpoint("openai", 5000, &env_of(pairs))
                .unwrap()
                .unwrap()
                .pricing
        };
        assert!(priced(&[]).table_applies);
        assert!(priced(&[("OPENAI_BASE_URL", "https://API.openai.com/v1")]).table_applies);
        for local in [
            "http://127.0.0.1:8080/v1",
            "https://api.openai.com.evil.test/v1",
            "https://openai.example/v1",
        ] {
            let pairs: &'static [(&'static str, &'static str)] =
                Box::leak(Box::new([("OPENAI_BASE_URL", local)]));
            assert!(!priced(pairs).table_applies, "{local}");
        }
        let configured = priced(&[(
            "CAUTILUS_OPENAI_PRICES",
            r#"{"smollm2": {"input": 0.1, "output": 0.2}}"#,
        )]);
        assert_eq!(configured.configured["smollm2"].output, 0.2);
        let bad = api_endpoint(
            "openai",
            5000,
            &env_of(&[(
                "CAUTILUS_OPENAI_PRICES",
                r#"{"m": {"input": -1, "output": 0}}"#,
            )]),
        )
        .unwrap_err();
        assert!(bad.contains("CAUTILUS_OPENAI_PRICES: `m.input`"), "{bad}");
    }

    #[test]
    fn codex_prices_from_the_table_only_when_it_talks_to_openai() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().to_str().unwrap().to_string();
        let check = |config: Option<&str>, base: Option<&str>| {
            if let Some(text) = config {
                std::fs::write(home.path().join("config.toml"), text).unwrap();
            }
            let dir = dir.clone();
            let base = base.map(str::to_string);
            codex_talks_to_openai(&move |name| match name {
                "CODEX_HOME" => Some(dir.clone()),
                "OPENAI_BASE_URL" => base.clone(),
                _ => None,
            })
        };
        assert!(check(None, None), "no config: Codex's default, OpenAI");
        assert!(!check(None, Some("http://127.0.0.1:9/v1")));
        assert!(check(Some("model = \"gpt-5\"\n"), None));
        assert!(check(Some("model_provider = \"openai\"\n"), None));
        assert!(!check(
            Some(
                "model_provider = \"loopback\"\n[model_providers.loopback]\nbase_url = \"http://x\"\n"
            ),
            None
        ));
        assert!(
            !check(Some("model_provider = ["), None),
            "unreadable: no guess"
        );
    }

    #[test]
    fn openai_is_granted_its_base_urls_host_and_the_key_only_when_set() {
        let grant = api_endpoint("openai", 5000, &env_of(&[])).unwrap().unwrap();
        assert_eq!(grant.host, "api.openai.com");
        assert!(grant.tls);
        assert_eq!(grant.secret, None);
        assert_eq!(grant.options["baseUrl"], "https://api.openai.com/v1");
        assert!(!grant.options.contains_key("apiKeySecret"));

        let env = env_of(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/"),
            ("OPENAI_API_KEY", "sk-test"),
        ]);
        let grant = api_endpoint("openai", 5000, &env).unwrap().unwrap();
        assert_eq!(grant.host, "127.0.0.1");
        assert!(!grant.tls, "a local server needs no certificate store");
        assert_eq!(grant.secret.as_deref(), Some("OPENAI_API_KEY"));
        assert_eq!(grant.options["baseUrl"], "http://127.0.0.1:8080/v1");
        assert_eq!(grant.options["apiKeySecret"], "OPENAI_API_KEY");
        assert!(
            !serde_json::to_string(&grant.options)
                .unwrap()
                .contains("sk-test"),
            "the key itself never reaches the component"
        );
    }

    #[test]
    fn openai_streams_only_when_asked() {
        let stream = |value: Option<&str>| {
            let env = |name: &str| {
                value
                    .filter(|_| name == "CAUTILUS_OPENAI_STREAM")
                    .map(str::to_string)
            };
            api_endpoint("openai", 5000, &env)
                .map(|grant| grant.unwrap().options.get("stream").cloned())
        };
        assert_eq!(stream(None), Ok(None));
        for yes in ["1", "true", "TRUE", " yes ", "on"] {
            assert_eq!(stream(Some(yes)), Ok(Some(json!(true))), "{yes}");
        }
        for no in ["", "0", "false", "No", "off"] {
            assert_eq!(stream(Some(no)), Ok(None), "{no}");
        }
        let bad = stream(Some("sometimes")).unwrap_err();
        assert_eq!(
            bad,
            "CAUTILUS_OPENAI_STREAM must be true or false, got `sometimes`"
        );
        // Anthropic's provider does not stream: the variable is not its.
        let env = env_of(&[("ANTHROPIC_API_KEY", "k"), ("CAUTILUS_OPENAI_STREAM", "1")]);
        let grant = api_endpoint("anthropic", 5000, &env).unwrap().unwrap();
        assert!(!grant.options.contains_key("stream"));
    }

    #[test]
    fn anthropic_needs_its_key_and_a_usable_url() {
        let missing = api_endpoint("anthropic", 5000, &env_of(&[])).unwrap_err();
        assert!(missing.contains("set ANTHROPIC_API_KEY"), "{missing}");
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "ftp://x"),
        ]);
        let bad = api_endpoint("anthropic", 5000, &env).unwrap_err();
        assert!(
            bad.contains("ANTHROPIC_BASE_URL must be an http(s) URL"),
            "{bad}"
        );
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://[::1]:9/"),
        ]);
        assert_eq!(
            api_endpoint("anthropic", 5000, &env).unwrap().unwrap().host,
            "::1"
        );
        assert_eq!(api_endpoint("fixture", 5000, &env).unwrap(), None);
        let env = env_of(&[("OPENAI_BASE_URL", "http://me:pw@127.0.0.1/v1")]);
        let leaky = api_endpoint("openai", 5000, &env).unwrap_err();
        assert!(
            leaky.contains("must not carry a user or password"),
            "{leaky}"
        );
        assert!(!leaky.contains("pw"), "{leaky}");
    }

    #[test]
    fn secret_grants_name_their_variable() {
        assert_eq!(
            GrantFlags::parse_secret("KEY=ACME_API_KEY"),
            Ok(("KEY".into(), "ACME_API_KEY".into()))
        );
        assert_eq!(
            GrantFlags::parse_secret("ACME_API_KEY"),
            Ok(("ACME_API_KEY".into(), "ACME_API_KEY".into()))
        );
        for bad in ["", "=X", "KEY=", "KEY=$HOME", "a b"] {
            assert!(GrantFlags::parse_secret(bad).is_err(), "{bad}");
        }
    }
}
