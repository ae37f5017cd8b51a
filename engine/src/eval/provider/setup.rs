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
use crate::eval::provider::endpoint::api_endpoint;
use crate::eval::provider::pricing::{Pricing, program_pricing};
use crate::plugin::bindings::provider_needs::{Needs, Program};
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
    let isolated = crate::private_temp::tempdir(&format!("cautilus-{}-home-", program.name))
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
    setup.pricing = program_pricing(
        needs.prices.as_ref(),
        program_home(program, env).as_deref(),
        env,
    )?;
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
    let dir = crate::private_temp::tempdir("cautilus-cli-")
        .map_err(|e| format!("cannot create an empty directory to run it in: {e}"))?;
    setup.grants.workspace = Some(dir.path().to_path_buf());
    setup.scratch = Some(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::registry::test_registry as registry;

    /// Codex's declaration (its home, for [`program_home`]).
    fn codex(agent: bool) -> Program {
        Program {
            name: "codex".into(),
            environment: vec!["HOME".into(), "CODEX_HOME".into()],
            install_hint: "install Codex".into(),
            agent,
            home: Some(crate::plugin::bindings::provider_needs::ProgramHome {
                variable: "CODEX_HOME".into(),
                default_dir: ".codex".into(),
                files: vec!["auth.json".into(), "config.toml".into()],
            }),
        }
    }

    #[test]
    fn a_programs_home_is_its_variable_else_its_directory_under_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let home = |pairs| program_home(&codex(true), &env(pairs));
        assert_eq!(home(&[]), None);
        assert_eq!(
            home(&[("HOME", "/h")]),
            Some(std::path::PathBuf::from("/h/.codex"))
        );
        assert_eq!(
            home(&[("HOME", "/h"), ("CODEX_HOME", "/c")]),
            Some(std::path::PathBuf::from("/c"))
        );
        assert_eq!(
            home(&[("HOME", "/h"), ("CODEX_HOME", " ")]),
            Some(std::path::PathBuf::from("/h/.codex")),
            "blank: unset"
        );
        let mut claude = codex(true);
        claude.home = None;
        assert_eq!(program_home(&claude, &env(&[("HOME", "/h")])), None);
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
        // `exec` needs nothing of the machine: its program is the
        // fixture's (`super::super::exec`); it passes every setting on.
        let exec = setup_of("exec");
        assert!(exec.grants.programs.is_empty() && exec.grants.program_env.is_empty());
        assert!(exec.grants.http_hosts.is_empty() && exec.grants.workspace.is_none());
        assert_eq!(
            settings_applied(&exec.plugin).map(<[String]>::to_vec),
            Some(
                crate::fixture::settings::NAMES
                    .iter()
                    .map(|n| n.to_string())
                    .collect()
            )
        );
        // `http` likewise: its service is the fixture's (`super::super::http`).
        let http = setup_of("http");
        assert!(http.grants.http_hosts.is_empty() && http.grants.programs.is_empty());
        assert!(super::super::http::is_http(&http.plugin));
        assert!(!super::super::exec::is_exec(&http.plugin));
        assert!(!super::super::http::is_http(&exec.plugin));
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
