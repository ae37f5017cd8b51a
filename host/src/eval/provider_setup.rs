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

use super::EvalError;
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
    /// Passed in every invocation's `options` (with the case's canned
    /// result, for the fixture backend).
    pub options: Map<String, Value>,
}

/// The endpoint of a built-in API provider.
struct Endpoint {
    url_variable: &'static str,
    default_url: &'static str,
    key_variable: &'static str,
    key_required: bool,
}

fn endpoint(id: &str) -> Option<Endpoint> {
    match id {
        "openai" => Some(Endpoint {
            url_variable: "OPENAI_BASE_URL",
            default_url: "https://api.openai.com/v1",
            key_variable: "OPENAI_API_KEY",
            // A local OpenAI-compatible server (llama.cpp, vLLM, Ollama) needs none.
            key_required: false,
        }),
        "anthropic" => Some(Endpoint {
            url_variable: "ANTHROPIC_BASE_URL",
            default_url: "https://api.anthropic.com",
            key_variable: "ANTHROPIC_API_KEY",
            key_required: true,
        }),
        _ => None,
    }
}

/// What a built-in API provider is granted and told.
#[derive(Debug, PartialEq)]
struct ApiGrant {
    /// The base URL's host.
    host: String,
    /// The key's secret name (= its environment variable), when set.
    secret: Option<String>,
    options: Map<String, Value>,
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
    Ok(Some(ApiGrant {
        host,
        secret,
        options,
    }))
}

/// A coding-agent CLI run in messaging mode.
struct MessagingCli {
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

fn messaging_cli(id: &str) -> Option<MessagingCli> {
    match id {
        "claude-cli" => Some(MessagingCli {
            program: "claude",
            env: &[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_BASE_URL",
                "CLAUDE_CONFIG_DIR",
                "XDG_CONFIG_HOME",
            ],
            missing: "`claude` is not on PATH; install Claude Code (`npm install -g @anthropic-ai/claude-code`) and log in, or use `--provider anthropic` with ANTHROPIC_API_KEY",
        }),
        "codex-cli" => Some(MessagingCli {
            program: "codex",
            env: &[
                "CODEX_HOME",
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "CODEX_API_KEY",
                "XDG_CONFIG_HOME",
            ],
            missing: "`codex` is not on PATH; install Codex (`npm install -g @openai/codex`) and log in (`codex login`), or use `--provider openai` with OPENAI_API_KEY",
        }),
        _ => None,
    }
}

/// Whether `program` is an executable file in one of `PATH`'s directories.
fn on_path(program: &str, env: &dyn Fn(&str) -> Option<String>) -> bool {
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

/// The provider a run uses when `--provider` does not name one: the fixture
/// backend for canned results (`--fixture-results`); else what the
/// fixture's `provider` asks for and this machine can reach: `anthropic`
/// with `ANTHROPIC_API_KEY` set, else `claude-cli` when `claude` is on
/// PATH; `openai` with `OPENAI_API_KEY` or `OPENAI_BASE_URL` set, else
/// `codex-cli` when `codex` is on PATH; any other
/// id or path as it is. Nothing usable is a definition error listing each
/// way to run the suite.
pub fn choose(
    fixture_provider: Option<&str>,
    canned: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, EvalError> {
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    let asked = match fixture_provider.map(str::trim).filter(|p| !p.is_empty()) {
        _ if canned => return Ok("fixture".into()),
        None => return Ok("fixture".into()),
        Some(asked) => asked,
    };
    let (ways, found) = match asked {
        "anthropic" => (
            "set ANTHROPIC_API_KEY (the `anthropic` API provider), or install and log in to Claude Code so `claude` is on PATH (`claude-cli`)",
            if set("ANTHROPIC_API_KEY") {
                Some("anthropic")
            } else if on_path("claude", env) {
                Some("claude-cli")
            } else {
                None
            },
        ),
        "openai" => (
            "set OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server such as llama.cpp, vLLM or Ollama (the `openai` API provider), or install and log in to Codex so `codex` is on PATH (`codex-cli`)",
            if set("OPENAI_API_KEY") || set("OPENAI_BASE_URL") {
                Some("openai")
            } else if on_path("codex", env) {
                Some("codex-cli")
            } else {
                None
            },
        ),
        other => return Ok(other.to_string()),
    };
    found.map(str::to_string).ok_or_else(|| EvalError::Provider {
        provider: asked.to_string(),
        message: format!(
            "the fixture asks for `{asked}` and nothing here can reach it: {ways}; or run without a model: `--provider fixture`"
        ),
    })
}

/// The provider of a `replay-strict` run without `--provider`: the one of
/// the fixture's provider family (`anthropic`: the API or `claude-cli`;
/// `openai`: the API or `codex-cli`) whose calls the cassette holds.
pub fn choose_recorded(
    fixture_provider: Option<&str>,
    canned: bool,
    recorded: &std::collections::BTreeSet<String>,
) -> Result<String, EvalError> {
    let asked = match fixture_provider.map(str::trim).filter(|p| !p.is_empty()) {
        _ if canned => return Ok("fixture".into()),
        None => return Ok("fixture".into()),
        Some(asked) => asked,
    };
    let family: &[&str] = match asked {
        "anthropic" => &["anthropic", "claude-cli"],
        "openai" => &["openai", "codex-cli"],
        other => return Ok(other.to_string()),
    };
    family
        .iter()
        .find(|id| recorded.contains(**id))
        .map(|id| id.to_string())
        .ok_or_else(|| EvalError::Provider {
            provider: asked.to_string(),
            message: format!(
                "the cassette holds no calls of {}; record them with `--replay record-new`, or name the provider with `--provider`",
                family.join(" or ")
            ),
        })
}

/// A provider granted nothing, for a run that answers every call from its
/// cassette (`replay-strict`): no endpoint, key or program is looked for.
pub fn denied(registry: &Registry, reference: &str) -> Result<ProviderSetup, EvalError> {
    Ok(ProviderSetup {
        plugin: registry.resolve_provider(reference)?,
        grants: Grants::default(),
        scratch: None,
        options: Map::new(),
    })
}

impl ProviderSetup {
    /// The values of the secrets and credential-like variables the run
    /// grants, read from the environment (for redaction).
    pub fn secret_values(&self) -> Vec<String> {
        self.grants
            .secrets
            .values()
            .chain(
                self.grants
                    .program_env
                    .iter()
                    .filter(|name| super::cassette::credential_field(name)),
            )
            .filter_map(|name| std::env::var(name).ok())
            .filter(|value| !value.trim().is_empty())
            .collect()
    }
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
    let builtin = crate::plugin::split_path_reference(reference).is_none();
    if builtin
        && let Some(api) =
            api_endpoint(reference, timeout_ms, env).map_err(|message| EvalError::Provider {
                provider: reference.to_string(),
                message,
            })?
    {
        grants.http_hosts.push(api.host);
        if let Some(secret) = api.secret {
            grants.secrets.insert(secret.clone(), secret);
        }
        options = api.options;
    }
    let mut scratch = None;
    if builtin && let Some(cli) = messaging_cli(reference) {
        let error = |message: String| EvalError::Provider {
            provider: reference.to_string(),
            message,
        };
        if !on_path(cli.program, env) {
            return Err(error(cli.missing.to_string()));
        }
        grants.programs.push(cli.program.to_string());
        grants
            .program_env
            .extend(CLI_BASE_ENV.iter().chain(cli.env).map(|v| v.to_string()));
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
        options.insert(
            "timeoutMs".into(),
            json!(timeout_ms.min(u64::from(u32::MAX))),
        );
    }
    Ok(ProviderSetup {
        plugin,
        grants,
        scratch,
        options,
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
    fn openai_is_granted_its_base_urls_host_and_the_key_only_when_set() {
        let grant = api_endpoint("openai", 5000, &env_of(&[])).unwrap().unwrap();
        assert_eq!(grant.host, "api.openai.com");
        assert_eq!(grant.secret, None);
        assert_eq!(grant.options["baseUrl"], "https://api.openai.com/v1");
        assert!(!grant.options.contains_key("apiKeySecret"));

        let env = env_of(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/"),
            ("OPENAI_API_KEY", "sk-test"),
        ]);
        let grant = api_endpoint("openai", 5000, &env).unwrap().unwrap();
        assert_eq!(grant.host, "127.0.0.1");
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
    }

    #[test]
    fn the_fixture_provider_picks_what_this_machine_can_reach() {
        let bin = tempfile::tempdir().unwrap();
        let claude = bin.path().join("claude");
        std::fs::write(&claude, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = bin.path().display().to_string();
        let with = |pairs: Vec<(&'static str, String)>| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            }
        };
        let pick = |asked: Option<&str>, canned: bool, env: &dyn Fn(&str) -> Option<String>| {
            choose(asked, canned, env).map_err(|e| e.to_string())
        };
        let none = with(vec![]);
        assert_eq!(
            pick(Some("anthropic"), true, &none).unwrap(),
            "fixture",
            "canned results"
        );
        assert_eq!(pick(None, false, &none).unwrap(), "fixture");
        assert_eq!(pick(Some("./p.wasm"), false, &none).unwrap(), "./p.wasm");

        let key = with(vec![
            ("ANTHROPIC_API_KEY", "k".into()),
            ("PATH", path.clone()),
        ]);
        assert_eq!(pick(Some("anthropic"), false, &key).unwrap(), "anthropic");
        let cli = with(vec![("PATH", path.clone())]);
        assert_eq!(pick(Some("anthropic"), false, &cli).unwrap(), "claude-cli");
        let refused = pick(Some("anthropic"), false, &none).unwrap_err();
        assert!(refused.contains("set ANTHROPIC_API_KEY"), "{refused}");
        assert!(refused.contains("--provider fixture"), "{refused}");

        let local = with(vec![("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1".into())]);
        assert_eq!(pick(Some("openai"), false, &local).unwrap(), "openai");
        let refused = pick(Some("openai"), false, &none).unwrap_err();
        assert!(refused.contains("OPENAI_BASE_URL"), "{refused}");
        assert!(refused.contains("`codex-cli`"), "{refused}");
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
