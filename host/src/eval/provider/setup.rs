//! How a run reaches its provider: the component, what the run grants it,
//! and the options the host passes on every invocation.
//!
//! A built-in provider declares what it needs (`provider-needs` in the
//! contract: its API's base-URL and key variables, or its program with the
//! host variables it reads; its price family; the generation settings it
//! applies), and gets exactly that and nothing more; the host holds no
//! provider's data, only the policy: an API provider gets the host of its
//! base URL (its variable, else its default URL) and, when set, its key
//! (required or not as declared). The component gets the endpoint and the
//! secret's *name* in its options; the key itself never leaves the host (it
//! is read from the environment when a request is sent). A CLI gets its
//! program (refused with its install hint when it is not on PATH) and the
//! variables it reads, in an empty directory, or as a coding agent in
//! copies of the workspace. Any other provider (a `.wasm` path or a pack's)
//! gets what the user grants with `--grant-http`, `--grant-program` and
//! `--grant-secret`, whatever it declares; those flags add to a built-in's
//! grants too.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::provider::pricing::{Pricing, parse_prices, prices_variable};
use crate::plugin::bindings::provider_needs::{Endpoint, Needs, PriceFamily, Program};
use crate::plugin::{Description, Grants, Plugin, PluginSource, Registry};

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

/// The needs a run grants `plugin` from its declaration: a built-in
/// provider's (compiled into this binary, so trusted with the variables it
/// names); nothing for a component from a file or a pack, which gets what
/// its user grants.
fn granted_needs(plugin: &Plugin) -> Option<&Needs> {
    match (&plugin.source, &plugin.description) {
        (PluginSource::Builtin(_), Description::Provider(provider)) => Some(&provider.needs),
        _ => None,
    }
}

/// What an API provider is granted and told.
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

/// The grant of a provider calling `endpoint`, priced as `family`, or what
/// to set.
fn api_endpoint(
    endpoint: &Endpoint,
    family: Option<&PriceFamily>,
    timeout_ms: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ApiGrant, String> {
    let base = env(&endpoint.url_variable)
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| endpoint.default_url.clone());
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
    let has_key = env(&endpoint.key_variable).is_some_and(|k| !k.trim().is_empty());
    if endpoint.key_required && !has_key {
        return Err(format!(
            "set {} (cautilus sends the key itself: the provider component never sees it and no record contains it); or run with `--provider fixture`",
            endpoint.key_variable
        ));
    }
    let mut options = Map::new();
    options.insert("baseUrl".into(), json!(url.as_str().trim_end_matches('/')));
    let secret = has_key.then(|| endpoint.key_variable.clone());
    if let Some(secret) = &secret {
        options.insert("apiKeySecret".into(), json!(secret));
    }
    options.insert(
        "timeoutMs".into(),
        json!(timeout_ms.min(u64::from(u32::MAX))),
    );
    if let Some(variable) = &endpoint.stream_variable
        && stream_asked(variable, env)?
    {
        options.insert("stream".into(), json!(true));
    }
    // The price table holds the public API's prices: a call to another
    // server (a local llama.cpp echoing `gpt-4o-mini`) is not priced by it.
    let official = reqwest::Url::parse(&endpoint.default_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| h == host);
    let pricing = match family {
        Some(family) => Pricing {
            table_applies: official,
            configured: configured_prices(&family.name, env)?,
        },
        None => Pricing::default(),
    };
    Ok(ApiGrant {
        host,
        tls: url.scheme() == "https",
        secret,
        options,
        pricing,
    })
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

/// How the calls of a CLI running `program` are priced: by its family's
/// table only while it talks to the family's API (its redirect variable
/// unset, and its home's setting naming no other API), with the family's
/// configured prices.
fn cli_pricing(
    program: &Program,
    family: Option<&PriceFamily>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Pricing, String> {
    let Some(family) = family else {
        return Ok(Pricing::default());
    };
    Ok(Pricing {
        table_applies: talks_to_family(program, family, env),
        configured: configured_prices(&family.name, env)?,
    })
}

fn talks_to_family(
    program: &Program,
    family: &PriceFamily,
    env: &dyn Fn(&str) -> Option<String>,
) -> bool {
    if let Some(variable) = &family.redirect_variable
        && env(variable).is_some_and(|u| !u.trim().is_empty())
    {
        return false;
    }
    let (Some(setting), Some(home)) = (&family.home_setting, program_home(program, env)) else {
        return true;
    };
    let Ok(text) = std::fs::read_to_string(home.join(&setting.file)) else {
        return true;
    };
    match toml::from_str::<toml::Table>(&text) {
        Ok(config) => config
            .get(&setting.key)
            .and_then(toml::Value::as_str)
            .is_none_or(|p| p == family.name),
        // A config the program itself would refuse: no cost is better than a guess.
        Err(_) => false,
    }
}

/// The operator's home of `program` (its variable, else its directory
/// under `HOME`), when it declares one.
fn program_home(
    program: &Program,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<std::path::PathBuf> {
    let home = program.home.as_ref()?;
    env(&home.variable)
        .filter(|h| !h.trim().is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| env("HOME").map(|h| std::path::Path::new(&h).join(&home.default_dir)))
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

/// The generation settings (`crate::fixture::settings::NAMES`) `plugin`
/// says it applies; `None` for a provider that says nothing (it gets them
/// in its options).
pub fn settings_applied(plugin: &Plugin) -> Option<&[String]> {
    match &plugin.description {
        Description::Provider(provider) => provider.needs.settings_applied.as_deref(),
        _ => None,
    }
}

/// A provider granted nothing, for a run that answers every call from its
/// cassette (`replay-strict`): no endpoint, key or program is looked for.
pub fn denied(registry: &Registry, reference: &str) -> Result<ProviderSetup, EvalError> {
    let plugin = registry.resolve_provider(reference)?;
    // A coding agent's calls are keyed by its workspace copy's hash, so a
    // replayed sample is copied (and hashed) as a live one is.
    let agent = granted_needs(&plugin)
        .and_then(|needs| needs.program.as_ref())
        .is_some_and(|program| program.agent);
    Ok(ProviderSetup {
        plugin,
        grants: Grants::default(),
        scratch: None,
        agent,
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

/// Gives a coding agent that declares a home (`codex`: `CODEX_HOME`) a
/// temporary one holding only the operator's files it declares
/// (`auth.json`, `config.toml`, from its variable, else its directory under
/// `HOME`), so nothing else of the operator's state (sessions, history,
/// other config) reaches the run (`agent.codexHome: isolated`). A missing
/// file is left out: the agent then says it is not logged in, and the cases
/// are blocked with `runner_auth_missing`. A provider without a home is
/// left as it is.
pub fn isolate_home(
    setup: &mut ProviderSetup,
    reference: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), EvalError> {
    let Some(program) = granted_needs(&setup.plugin)
        .and_then(|needs| needs.program.clone())
        .filter(|program| program.agent)
    else {
        return Ok(());
    };
    let Some(home) = &program.home else {
        return Ok(());
    };
    let error = |message: String| EvalError::Provider {
        provider: reference.to_string(),
        message,
    };
    let source = program_home(&program, env);
    let isolated = tempfile::Builder::new()
        .prefix(&format!("cautilus-{}-home-", program.name))
        .tempdir()
        .map_err(|e| error(format!("cannot create an isolated {}: {e}", home.variable)))?;
    for name in &home.files {
        let Some(from) = source
            .as_ref()
            .map(|s| s.join(name))
            .filter(|f| f.is_file())
        else {
            continue;
        };
        std::fs::copy(&from, isolated.path().join(name)).map_err(|e| {
            error(format!(
                "cannot copy {} into the isolated {}: {e}",
                from.display(),
                home.variable
            ))
        })?;
    }
    setup.grants.program_env_set.push((
        home.variable.clone(),
        isolated.path().as_os_str().to_owned(),
    ));
    if !setup.grants.program_env.contains(&home.variable) {
        setup.grants.program_env.push(home.variable.clone());
    }
    setup.scratch = Some(isolated);
    Ok(())
}

/// Resolves `reference` and what it is granted: what the user grants by
/// flag, and for a built-in provider what it declares it needs (its API's
/// host and key, or its program with the variables it reads, in an empty
/// directory or, for a coding agent, in copies of the workspace). `env`
/// reads the environment (a parameter, so tests need not change the
/// process's).
pub fn setup(
    registry: &Registry,
    reference: &str,
    flags: &GrantFlags,
    timeout_ms: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderSetup, EvalError> {
    let plugin = registry.resolve_provider(reference)?;
    let error = |message: String| EvalError::Provider {
        provider: reference.to_string(),
        message,
    };
    let mut setup = ProviderSetup {
        grants: Grants {
            http_hosts: flags.http_hosts.clone(),
            programs: flags.programs.clone(),
            secrets: flags.secrets.clone(),
            ..Grants::default()
        },
        scratch: None,
        agent: false,
        options: Map::new(),
        // Hosts granted by flag may be reached over either scheme.
        tls: !flags.http_hosts.is_empty(),
        pricing: Pricing::default(),
        plugin,
    };
    let Some(needs) = granted_needs(&setup.plugin).cloned() else {
        return Ok(setup);
    };
    grant_needs(&mut setup, &needs, timeout_ms, env).map_err(error)?;
    Ok(setup)
}

/// Adds to `setup` what `needs` asks for, or says what to set or install.
fn grant_needs(
    setup: &mut ProviderSetup,
    needs: &Needs,
    timeout_ms: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    if let Some(endpoint) = &needs.endpoint {
        let api = api_endpoint(endpoint, needs.prices.as_ref(), timeout_ms, env)?;
        setup.grants.http_hosts.push(api.host);
        setup.tls |= api.tls;
        setup.pricing = api.pricing;
        if let Some(secret) = api.secret {
            setup.grants.secrets.insert(secret.clone(), secret);
        }
        setup.options = api.options;
    }
    let Some(program) = &needs.program else {
        return Ok(());
    };
    if !on_path(&program.name, env) {
        return Err(format!(
            "`{}` is not on PATH; {}",
            program.name, program.install_hint
        ));
    }
    setup.pricing = cli_pricing(program, needs.prices.as_ref(), env)?;
    setup.grants.programs.push(program.name.clone());
    setup
        .grants
        .program_env
        .extend(program.environment.iter().cloned());
    setup.options.insert(
        "timeoutMs".into(),
        json!(timeout_ms.min(u64::from(u32::MAX))),
    );
    if program.agent {
        // Each sample gets its own copy of the workspace (set per call).
        setup.agent = true;
        return Ok(());
    }
    let dir = tempfile::Builder::new()
        .prefix("cautilus-cli-")
        .tempdir()
        .map_err(|e| format!("cannot create an empty directory to run it in: {e}"))?;
    setup.grants.workspace = Some(dir.path().to_path_buf());
    setup.scratch = Some(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::bindings::provider_needs::{HomeSetting, ProgramHome};

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    /// The declarations of the built-in API providers
    /// (`plugins/providers-core/src/needs.rs`), as the host receives them.
    fn openai() -> (Endpoint, PriceFamily) {
        (
            Endpoint {
                url_variable: "OPENAI_BASE_URL".into(),
                default_url: "https://api.openai.com/v1".into(),
                key_variable: "OPENAI_API_KEY".into(),
                key_required: false,
                stream_variable: Some("CAUTILUS_OPENAI_STREAM".into()),
            },
            family("openai"),
        )
    }

    fn anthropic() -> (Endpoint, PriceFamily) {
        (
            Endpoint {
                url_variable: "ANTHROPIC_BASE_URL".into(),
                default_url: "https://api.anthropic.com".into(),
                key_variable: "ANTHROPIC_API_KEY".into(),
                key_required: true,
                stream_variable: None,
            },
            family("anthropic"),
        )
    }

    fn family(name: &str) -> PriceFamily {
        PriceFamily {
            name: name.into(),
            redirect_variable: None,
            home_setting: None,
        }
    }

    fn grant(
        api: fn() -> (Endpoint, PriceFamily),
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ApiGrant, String> {
        let (endpoint, family) = api();
        api_endpoint(&endpoint, Some(&family), 5000, env)
    }

    #[test]
    fn the_price_table_prices_only_calls_to_the_public_api() {
        let priced = |pairs: &'static [(&'static str, &'static str)]| {
            grant(openai, &env_of(pairs)).unwrap().pricing
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
        let bad = grant(
            openai,
            &env_of(&[(
                "CAUTILUS_OPENAI_PRICES",
                r#"{"m": {"input": -1, "output": 0}}"#,
            )]),
        )
        .unwrap_err();
        assert!(bad.contains("CAUTILUS_OPENAI_PRICES: `m.input`"), "{bad}");
        // An endpoint of no price family: its costs stand as given.
        let (endpoint, _) = openai();
        let unpriced = api_endpoint(&endpoint, None, 5000, &env_of(&[])).unwrap();
        assert_eq!(unpriced.pricing, Pricing::default());
    }

    /// Codex's declaration: priced as OpenAI while it talks to OpenAI.
    fn codex(agent: bool) -> Program {
        Program {
            name: "codex".into(),
            environment: vec!["HOME".into(), "CODEX_HOME".into()],
            install_hint: "install Codex".into(),
            agent,
            home: Some(ProgramHome {
                variable: "CODEX_HOME".into(),
                default_dir: ".codex".into(),
                files: vec!["auth.json".into(), "config.toml".into()],
            }),
        }
    }

    fn codex_family() -> PriceFamily {
        PriceFamily {
            redirect_variable: Some("OPENAI_BASE_URL".into()),
            home_setting: Some(HomeSetting {
                file: "config.toml".into(),
                key: "model_provider".into(),
            }),
            ..family("openai")
        }
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
            talks_to_family(&codex(false), &codex_family(), &move |name| match name {
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
        // The home falls back to its directory under HOME.
        let operator = tempfile::tempdir().unwrap();
        std::fs::create_dir(operator.path().join(".codex")).unwrap();
        std::fs::write(
            operator.path().join(".codex/config.toml"),
            "model_provider = \"ollama\"\n",
        )
        .unwrap();
        let home_dir = operator.path().to_str().unwrap().to_string();
        let env = move |name: &str| (name == "HOME").then(|| home_dir.clone());
        assert!(!talks_to_family(&codex(false), &codex_family(), &env));
        // A family that declares neither: its table always applies (Claude's).
        assert!(talks_to_family(&codex(false), &family("anthropic"), &env));
        let priced = cli_pricing(&codex(false), None, &env).unwrap();
        assert_eq!(priced, Pricing::default(), "no family: costs as given");
    }

    #[test]
    fn openai_is_granted_its_base_urls_host_and_the_key_only_when_set() {
        let grant_of = |env: &dyn Fn(&str) -> Option<String>| grant(openai, env).unwrap();
        let granted = grant_of(&env_of(&[]));
        assert_eq!(granted.host, "api.openai.com");
        assert!(granted.tls);
        assert_eq!(granted.secret, None);
        assert_eq!(granted.options["baseUrl"], "https://api.openai.com/v1");
        assert!(!granted.options.contains_key("apiKeySecret"));

        let env = env_of(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1/"),
            ("OPENAI_API_KEY", "sk-test"),
        ]);
        let granted = grant_of(&env);
        assert_eq!(granted.host, "127.0.0.1");
        assert!(!granted.tls, "a local server needs no certificate store");
        assert_eq!(granted.secret.as_deref(), Some("OPENAI_API_KEY"));
        assert_eq!(granted.options["baseUrl"], "http://127.0.0.1:8080/v1");
        assert_eq!(granted.options["apiKeySecret"], "OPENAI_API_KEY");
        assert!(
            !serde_json::to_string(&granted.options)
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
            grant(openai, &env).map(|granted| granted.options.get("stream").cloned())
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
        assert!(
            !grant(anthropic, &env)
                .unwrap()
                .options
                .contains_key("stream")
        );
    }

    #[test]
    fn anthropic_needs_its_key_and_a_usable_url() {
        let missing = grant(anthropic, &env_of(&[])).unwrap_err();
        assert!(missing.contains("set ANTHROPIC_API_KEY"), "{missing}");
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "ftp://x"),
        ]);
        let bad = grant(anthropic, &env).unwrap_err();
        assert!(
            bad.contains("ANTHROPIC_BASE_URL must be an http(s) URL"),
            "{bad}"
        );
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://[::1]:9/"),
        ]);
        assert_eq!(grant(anthropic, &env).unwrap().host, "::1");
        let env = env_of(&[("OPENAI_BASE_URL", "http://me:pw@127.0.0.1/v1")]);
        let leaky = grant(openai, &env).unwrap_err();
        assert!(
            leaky.contains("must not carry a user or password"),
            "{leaky}"
        );
        assert!(!leaky.contains("pw"), "{leaky}");
    }

    /// A registry of the built-in plugins, compiled once per test binary.
    fn registry() -> &'static Registry {
        static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
        REGISTRY.get_or_init(|| {
            let cache_dir = std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.join("cautilus-unit-cache")));
            let runtime = crate::plugin::Runtime::new(crate::plugin::RuntimeConfig {
                cache_dir,
                fuel_metering: false,
                compile_notice: None,
            })
            .expect("the plugin runtime");
            Registry::new(Arc::new(runtime))
        })
    }

    /// A directory holding an executable `name`, for `PATH`.
    fn bin_with(name: &str) -> tempfile::TempDir {
        let bin = tempfile::tempdir().unwrap();
        let program = bin.path().join(name);
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        bin
    }

    /// What each built-in provider is granted from its declaration: the
    /// grants the host's own tables gave before providers declared them.
    #[test]
    fn built_in_providers_are_granted_what_they_declare() {
        let claude = bin_with("claude");
        let codex = bin_with("codex");
        let path = format!("{}:{}", claude.path().display(), codex.path().display());
        let env = move |name: &str| match name {
            "PATH" => Some(path.clone()),
            "ANTHROPIC_API_KEY" => Some("k".into()),
            _ => None,
        };
        let setup_of = |reference: &str| {
            setup(registry(), reference, &GrantFlags::default(), 5000, &env)
                .unwrap_or_else(|e| panic!("{reference}: {e}"))
        };
        let openai = setup_of("openai");
        assert_eq!(openai.grants.http_hosts, ["api.openai.com"]);
        assert!(openai.grants.secrets.is_empty() && openai.grants.programs.is_empty());
        let anthropic = setup_of("anthropic");
        assert_eq!(anthropic.grants.http_hosts, ["api.anthropic.com"]);
        assert_eq!(
            anthropic.grants.secrets.keys().collect::<Vec<_>>(),
            ["ANTHROPIC_API_KEY"]
        );
        let base = [
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
        for (reference, program, agent, own) in [
            ("claude-cli", "claude", false, "CLAUDE_CODE_OAUTH_TOKEN"),
            ("claude-code", "claude", true, "CLAUDE_CONFIG_DIR"),
            ("codex-cli", "codex", false, "CODEX_API_KEY"),
            ("codex", "codex", true, "CODEX_HOME"),
        ] {
            let cli = setup_of(reference);
            assert_eq!(cli.grants.programs, [program], "{reference}");
            assert_eq!(cli.agent, agent, "{reference}");
            assert_eq!(&cli.grants.program_env[..9], base, "{reference}");
            assert!(
                cli.grants.program_env.iter().any(|v| v == own),
                "{reference}"
            );
            assert_eq!(cli.grants.workspace.is_some(), !agent, "{reference}");
            assert!(cli.grants.http_hosts.is_empty(), "{reference}");
            assert_eq!(settings_applied(&cli.plugin), Some(&[][..]), "{reference}");
            assert_eq!(denied(registry(), reference).unwrap().agent, agent);
        }
        let fixture = setup_of("fixture");
        assert!(fixture.grants.http_hosts.is_empty() && fixture.grants.program_env.is_empty());
        assert_eq!(settings_applied(&fixture.plugin), Some(&[][..]));
        let names = |plugin: &Plugin| settings_applied(plugin).map(<[String]>::to_vec);
        assert_eq!(
            names(&openai.plugin).unwrap(),
            crate::fixture::settings::NAMES
        );
        assert!(!names(&anthropic.plugin).unwrap().contains(&"seed".into()));

        let missing = setup(registry(), "codex", &GrantFlags::default(), 5000, &|_| None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            missing.contains("`codex` is not on PATH; install Codex (`npm install -g @openai/codex`) and log in (`codex login`)"),
            "{missing}"
        );
    }

    #[test]
    fn an_isolated_home_keeps_only_the_declared_files() {
        let operator = tempfile::tempdir().unwrap();
        for file in ["auth.json", "config.toml", "history.jsonl"] {
            std::fs::write(operator.path().join(file), file).unwrap();
        }
        let codex = bin_with("codex");
        let (path, home) = (
            codex.path().display().to_string(),
            operator.path().display().to_string(),
        );
        let env = move |name: &str| match name {
            "PATH" => Some(path.clone()),
            "CODEX_HOME" => Some(home.clone()),
            _ => None,
        };
        let mut agent = setup(registry(), "codex", &GrantFlags::default(), 5000, &env).unwrap();
        isolate_home(&mut agent, "codex", &env).unwrap();
        let (variable, isolated) = &agent.grants.program_env_set[0];
        assert_eq!(variable, "CODEX_HOME");
        let mut kept: Vec<_> = std::fs::read_dir(isolated)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        kept.sort();
        assert_eq!(kept, ["auth.json", "config.toml"]);
        // A messaging CLI, or an agent without a home, is left as it is.
        for reference in ["codex-cli", "fixture"] {
            let mut other =
                setup(registry(), reference, &GrantFlags::default(), 5000, &env).unwrap();
            isolate_home(&mut other, reference, &env).unwrap();
            assert!(other.grants.program_env_set.is_empty(), "{reference}");
        }
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
