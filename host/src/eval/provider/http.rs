//! What the built-in `http` provider is granted: the service the suite's
//! `http` field describes ([`crate::fixture::http_field`]).
//!
//! The fixture is untrusted (it arrives in pull requests). The host of its
//! URL is granted to the provider alone (it requests `*`, whichever hosts
//! the run grants), so a fixture can make cautilus send the cases
//! themselves to a host of its choosing, as it could name any model. A
//! secret is another matter: a header `{secret: NAME}` is filled in only
//! when the user grants the secret (`--grant-secret NAME=ENV_VAR`) *and*
//! the URL's host (`--grant-http HOST`, or `[grants] http` in
//! `cautilus.toml`); otherwise the run stops before it starts, naming the
//! header and the flag to add. The provider is told the field as written
//! (option `http`, part of the call key: method, URL, headers with secret
//! names, body template, paths) and its time limit (`timeoutMs`, capped
//! by `--timeout-ms`). A run answered from its cassette only
//! (`replay-strict`) grants nothing: the service need not be up.

use serde_json::json;

use crate::eval::EvalError;
use crate::eval::provider::setup::ProviderSetup;
use crate::fixture::Suite;
use crate::fixture::http_field::HttpField;
use crate::plugin::capability::http::host_key;
use crate::plugin::{Description, Plugin, PluginSource};

/// Whether `plugin` calls the suite's service: a built-in provider that
/// declares so (`calls-suite-service` in its needs). A provider from a
/// `.wasm` file or a pack declaring it gets nothing this way.
pub fn is_http(plugin: &Plugin) -> bool {
    matches!(&plugin.source, PluginSource::Builtin(_))
        && matches!(&plugin.description, Description::Provider(p) if p.needs.calls_suite_service)
}

/// Gives the `http` provider of a run of `suite` its service: the field
/// as written always, and unless the run answers from its cassette only
/// (`grant` false) the URL's host, once the secrets its headers name are
/// granted and their host is one the user granted (`user_hosts`: the
/// run's `--grant-http` and `[grants] http`). Any other provider is left
/// as it is.
pub fn prepare(
    setup: &mut ProviderSetup,
    suite: &Suite,
    grant: bool,
    timeout_ms: u64,
    user_hosts: &[String],
) -> Result<(), EvalError> {
    if !is_http(&setup.plugin) {
        return Ok(());
    }
    let problem = |path: &str, message: String| EvalError::Cases {
        file: suite.file.clone(),
        problems: vec![(path.to_string(), message)],
    };
    let Some(written) = suite.body.get("http").filter(|v| !v.is_null()) else {
        return Err(problem(
            "http",
            "is missing: the `http` provider sends each case to the service this field describes, e.g. `http: {url: \"http://127.0.0.1:8000/chat\", body: {question: \"${message}\"}, answer: $.reply}`".into(),
        ));
    };
    let field = HttpField::parse(written)
        .map_err(|(path, message)| problem(&format!("http{path}"), message))?;
    setup.options.insert("http".into(), field.written());
    let limit = field.timeout_ms.unwrap_or(timeout_ms).min(timeout_ms);
    setup
        .options
        .insert("timeoutMs".into(), json!(limit.min(u64::from(u32::MAX))));
    if !grant {
        return Ok(());
    }
    let host = host_key(&field.host);
    for (header, secret) in field.secrets() {
        let at = format!("http.headers.{header}");
        if !setup.grants.secrets.contains_key(secret) {
            return Err(problem(
                &at,
                format!(
                    "names secret `{secret}`, which this run does not grant: add `--grant-secret {secret}=ENV_VAR` (the environment variable holding it)"
                ),
            ));
        }
        if !user_hosts.iter().any(|h| host_key(h) == host) {
            return Err(problem(
                &at,
                format!(
                    "would send secret `{secret}` to `{host}`, a host the fixture names and you have not granted: add `--grant-http {host}` (or `http = [\"{host}\"]` under `[grants]` in cautilus.toml) to send it there"
                ),
            ));
        }
    }
    if !setup.grants.http_hosts.iter().any(|h| host_key(h) == host) {
        setup.grants.http_hosts.push(field.host.clone());
    }
    setup.tls |= field.https;
    Ok(())
}
