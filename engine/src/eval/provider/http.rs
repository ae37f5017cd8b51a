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
    let secrets = setup.grants.secrets.clone();
    let field = check(suite, grant, &|name| secrets.contains_key(name), user_hosts)?;
    setup.options.insert("http".into(), field.written());
    let limit = field.timeout_ms.unwrap_or(timeout_ms).min(timeout_ms);
    setup
        .options
        .insert("timeoutMs".into(), json!(limit.min(u64::from(u32::MAX))));
    if !grant {
        return Ok(());
    }
    if !setup
        .grants
        .http_hosts
        .iter()
        .any(|h| host_key(h) == host_key(&field.host))
    {
        setup.grants.http_hosts.push(field.host.clone());
    }
    setup.tls |= field.https;
    Ok(())
}

/// The suite's `http` field, checked, and unless the run answers from its
/// cassette only (`grant` false) the secrets its headers name checked
/// against the run's grants (`granted`: whether the run grants a secret;
/// `user_hosts`: the hosts the user grants): what [`prepare`] gives the
/// provider, and what an experiment checks of every variant before the
/// first one runs.
pub fn check(
    suite: &Suite,
    grant: bool,
    granted: &dyn Fn(&str) -> bool,
    user_hosts: &[String],
) -> Result<HttpField, EvalError> {
    let problem = |path: &str, message: String| EvalError::Cases {
        file: suite.file.clone(),
        problems: vec![(suite.field_at(path), message)],
    };
    let Some(written) = suite.body.get("http").filter(|v| !v.is_null()) else {
        return Err(problem(
            "http",
            "is missing: the `http` provider sends each case to the service this field describes, e.g. `http: {url: \"http://127.0.0.1:8000/chat\", body: {question: \"${message}\"}, answer: $.reply}`".into(),
        ));
    };
    let field = HttpField::parse(written)
        .map_err(|(path, message)| problem(&format!("http{path}"), message))?;
    if !grant {
        return Ok(field);
    }
    let host = host_key(&field.host);
    for (header, secret) in field.secrets() {
        let at = format!("http.headers.{header}");
        if !granted(secret) {
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
    Ok(field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::provider::setup::{GrantFlags, setup};
    use crate::plugin::registry::test_registry as registry;
    use serde_json::{Value, json};

    fn suite(http: Value) -> Suite {
        crate::fixture::check_suite(
            std::path::Path::new("f.json"),
            json!({"schemaVersion": crate::fixture::SCHEMA_VERSION, "surface": "app", "preset": "chat",
                   "suiteId": "s", "provider": "http", "http": http, "cases": [{"caseId": "c"}]}),
        )
        .unwrap()
    }

    /// The `http` provider set up with `secrets` (name → variable) and
    /// `hosts` granted by the user, then prepared for `http`.
    fn prepared(
        http: Value,
        secrets: &[&str],
        hosts: &[&str],
        grant: bool,
    ) -> Result<ProviderSetup, String> {
        let flags = GrantFlags {
            http_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            secrets: secrets
                .iter()
                .map(|s| (s.to_string(), format!("{s}_VAR")))
                .collect(),
            ..GrantFlags::default()
        };
        let mut setup = setup(registry(), "http", &flags, 5000, &|_| None).unwrap();
        prepare(&mut setup, &suite(http), grant, 5000, &flags.http_hosts)
            .map(|()| setup)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_urls_host_is_granted_and_a_secret_only_for_a_host_the_user_granted() {
        let plain =
            json!({"url": "https://Bot.Example.com/chat", "answer": "$.reply", "timeoutMs": 9000});
        let ready = prepared(plain.clone(), &[], &[], true).unwrap();
        assert_eq!(ready.grants.http_hosts, ["bot.example.com"]);
        assert!(ready.tls);
        // Its time limit is capped by the run's; the field as written
        // (without it) is the call key's.
        assert_eq!(ready.options["timeoutMs"], 5000);
        assert_eq!(ready.options["http"]["url"], "https://Bot.Example.com/chat");
        assert!(ready.options["http"].get("timeoutMs").is_none());
        // Answered from a cassette only: told, granted nothing.
        let strict = prepared(plain, &[], &[], false).unwrap();
        assert!(strict.grants.http_hosts.is_empty() && strict.options.contains_key("http"));

        let keyed = json!({"url": "http://127.0.0.1:8000/chat", "answer": "$.reply",
                           "headers": {"X-Api-Key": {"secret": "BOT_KEY"}}});
        // (secrets granted, hosts granted, refusal or None)
        let rows: [(&[&str], &[&str], Option<&str>); 4] = [
            (&["BOT_KEY"], &["127.0.0.1"], None),
            (&["BOT_KEY"], &["127.0.0.1", "other.example"], None),
            (
                &[],
                &["127.0.0.1"],
                Some(
                    "http.headers.X-Api-Key: names secret `BOT_KEY`, which this run does not grant: add `--grant-secret BOT_KEY=ENV_VAR`",
                ),
            ),
            (
                &["BOT_KEY"],
                &["other.example"],
                Some(
                    "http.headers.X-Api-Key: would send secret `BOT_KEY` to `127.0.0.1`, a host the fixture names and you have not granted: add `--grant-http 127.0.0.1`",
                ),
            ),
        ];
        for (secrets, hosts, refusal) in rows {
            match (prepared(keyed.clone(), secrets, hosts, true), refusal) {
                (Ok(setup), None) => {
                    assert!(setup.grants.http_hosts.iter().any(|h| h == "127.0.0.1"));
                    assert_eq!(setup.grants.secrets["BOT_KEY"], "BOT_KEY_VAR");
                }
                (Err(said), Some(expected)) => {
                    assert!(said.contains(expected), "{secrets:?} {hosts:?}: {said}");
                }
                (other, _) => panic!("{secrets:?} {hosts:?}: {:?}", other.map(|_| ())),
            }
        }
        // A replayed run checks no grant.
        assert!(prepared(keyed, &[], &[], false).is_ok());
    }

    #[test]
    fn without_its_field_the_provider_cannot_run_and_others_ignore_it() {
        let mut setup = setup(registry(), "http", &GrantFlags::default(), 5000, &|_| None).unwrap();
        let no_field = crate::fixture::check_suite(
            std::path::Path::new("f.json"),
            json!({"schemaVersion": crate::fixture::SCHEMA_VERSION, "surface": "app", "preset": "chat",
                   "suiteId": "s", "cases": [{"caseId": "c"}]}),
        )
        .unwrap();
        let said = prepare(&mut setup, &no_field, true, 5000, &[])
            .unwrap_err()
            .to_string();
        assert!(said.contains("http: is missing"), "{said}");
        let mut other = setup_of_fixture();
        prepare(&mut other, &no_field, true, 5000, &[]).unwrap();
        assert!(other.options.get("http").is_none());
    }

    fn setup_of_fixture() -> ProviderSetup {
        setup(registry(), "fixture", &GrantFlags::default(), 5000, &|_| {
            None
        })
        .unwrap()
    }
}
