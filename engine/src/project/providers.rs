//! A project's `[providers.<id>]` tables: the settings of a built-in
//! provider calling a model API (its base URL, its models' prices, whether
//! to stream), checked against what that provider declares (its endpoint's
//! URL and stream variables, its price family) and turned into the
//! variables they stand in for, which the environment's own values
//! override. The host names no provider here: the ids a table may have are
//! those of the built-in providers declaring an endpoint, in the built-in
//! pack's order.
//!
//! Only the commands that run or check suites read these tables, and they
//! load the built-in pack anyway; a config without one loads nothing for it.

use std::collections::BTreeMap;

use super::config::{Loaded, ProviderSettings, unknown_key};
use crate::eval::provider::declared::Declared;
use crate::eval::provider::pricing::{parse_prices, prices_variable};
use crate::project::ConfigError;

/// The variables the `[providers.<id>]` tables of `loaded` stand in for
/// (used where the variable is not set), or what is wrong with a table.
pub fn provider_env(
    loaded: &Loaded,
    declared: &Declared,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let error = |message: String| ConfigError {
        path: loaded.file.clone(),
        message,
    };
    let tables = &loaded.config.providers;
    let endpoints: Vec<_> = declared.endpoints().collect();
    let ids: Vec<&str> = endpoints.iter().map(|(id, ..)| *id).collect();
    if let Some(id) = tables.keys().find(|id| !ids.contains(&id.as_str())) {
        return Err(error(unknown_key("providers", id, &ids)));
    }
    // Each table in the declared order, its keys first, then its values.
    let configured: Vec<_> = endpoints
        .iter()
        .filter_map(|(id, endpoint, family)| Some((*id, tables.get(*id)?, *endpoint, *family)))
        .collect();
    for (id, table, endpoint, family) in &configured {
        let keys: Vec<&str> = std::iter::once("base_url")
            .chain(family.is_some().then_some("prices"))
            .chain(endpoint.stream_variable.is_some().then_some("stream"))
            .collect();
        if let Some(key) = table
            .as_table()
            .and_then(|t| t.keys().find(|k| !keys.contains(&k.as_str())))
        {
            return Err(error(unknown_key(&format!("providers.{id}"), key, &keys)));
        }
    }
    let settings = configured
        .iter()
        .map(|(id, table, endpoint, family)| {
            let settings: ProviderSettings = (*table)
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| error(e.message().to_string()))?;
            Ok((*id, settings, *endpoint, *family))
        })
        .collect::<Result<Vec<_>, ConfigError>>()?;
    let mut env = BTreeMap::new();
    for (id, settings, endpoint, _) in &settings {
        let Some(url) = &settings.base_url else {
            continue;
        };
        match reqwest::Url::parse(url) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
            _ => {
                return Err(error(format!(
                    "`providers.{id}.base_url`: `{url}` is not an http(s) URL"
                )));
            }
        }
        env.insert(endpoint.url_variable.clone(), url.clone());
    }
    for (id, settings, endpoint, family) in &settings {
        if let (Some(prices), Some(family)) = (&settings.prices, family) {
            let text = serde_json::to_string(prices).expect("prices serialize");
            parse_prices(&text, &format!("`providers.{id}.prices`")).map_err(error)?;
            env.insert(prices_variable(&family.name), text);
        }
        if let (Some(stream), Some(variable)) = (settings.stream, &endpoint.stream_variable) {
            env.insert(variable.clone(), stream.to_string());
        }
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::provider::declared::tests::{api, cli};
    use crate::plugin::bindings::provider_needs::PriceFamily;
    use crate::plugin::registry::test_registry as builtin_registry;

    fn env_of(text: &str, declared: &Declared) -> Result<BTreeMap<String, String>, String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(crate::project::config::FILE);
        std::fs::write(&file, text).unwrap();
        let loaded = crate::project::config::load(&file).map_err(|e| e.message)?;
        provider_env(&loaded, declared).map_err(|e| e.message)
    }

    fn builtin() -> Declared {
        Declared::builtin(builtin_registry()).unwrap()
    }

    /// What the built-in providers' tables set, as `as_env` set it when
    /// the host named their variables itself.
    #[test]
    fn the_built_in_tables_set_the_variables_they_always_did() {
        let env = env_of(
            r#"
[providers.openai]
base_url = "http://127.0.0.1:8080/v1"
stream = true
prices = { smollm2 = { input = 0.1, output = 0.2 } }
[providers.anthropic]
base_url = "https://proxy.test"
prices = { m = { input = 1.0, output = 2.0 } }
"#,
            &builtin(),
        )
        .unwrap();
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "ANTHROPIC_BASE_URL",
                "CAUTILUS_ANTHROPIC_PRICES",
                "CAUTILUS_OPENAI_PRICES",
                "CAUTILUS_OPENAI_STREAM",
                "OPENAI_BASE_URL"
            ]
        );
        assert_eq!(env["OPENAI_BASE_URL"], "http://127.0.0.1:8080/v1");
        assert_eq!(env["ANTHROPIC_BASE_URL"], "https://proxy.test");
        assert_eq!(env["CAUTILUS_OPENAI_STREAM"], "true");
        assert_eq!(
            env["CAUTILUS_OPENAI_PRICES"],
            r#"{"smollm2":{"input":0.1,"output":0.2}}"#
        );
        assert_eq!(env_of("", &builtin()).unwrap(), BTreeMap::new());
        assert_eq!(
            env_of("[providers.openai]\nstream = false", &builtin()).unwrap()["CAUTILUS_OPENAI_STREAM"],
            "false"
        );
    }

    #[test]
    fn a_table_of_no_endpoint_or_a_key_it_cannot_take_is_refused_naming_what_exists() {
        for (text, says) in [
            (
                "[providers.opnai]\nbase_url = \"http://x\"",
                "unknown key `providers.opnai`; did you mean `openai`? keys here: openai, anthropic",
            ),
            // A provider declaring no endpoint has no table.
            (
                "[providers.claude-cli]\nbase_url = \"http://x\"",
                "unknown key `providers.claude-cli`; keys here: openai, anthropic",
            ),
            (
                "[providers.fixture]",
                "unknown key `providers.fixture`; keys here: openai, anthropic",
            ),
            // Only the openai provider streams.
            (
                "[providers.anthropic]\nstream = true",
                "unknown key `providers.anthropic.stream`; keys here: base_url, prices",
            ),
            (
                "[providers.openai]\nbase_uri = \"x\"",
                "unknown key `providers.openai.base_uri`; did you mean `base_url`? keys here: base_url, prices, stream",
            ),
            (
                "[providers.anthropic]\nbase_url = \"ftp://x\"",
                "`providers.anthropic.base_url`: `ftp://x` is not an http(s) URL",
            ),
            (
                "[providers.openai.prices]\nm = { input = -1.0, output = 0.0 }",
                "`providers.openai.prices`: `m.input` must be a price in USD per million tokens",
            ),
            ("[providers.openai]\nstream = \"yes\"", "invalid type"),
            (
                "[providers.openai.prices]\nm = { input = 1.0 }",
                "missing field `output`",
            ),
        ] {
            let refused = env_of(text, &builtin()).unwrap_err();
            assert!(refused.starts_with(says), "{text}: {refused}");
        }
    }

    /// The host holds no provider's id, variable or family: any declared
    /// endpoint gets a table.
    #[test]
    fn any_declared_endpoint_gets_a_table_mapped_through_its_declaration() {
        let (id, mut needs) = api("acme", false);
        needs.endpoint.as_mut().unwrap().stream_variable = Some("ACME_STREAM".into());
        needs.prices = Some(PriceFamily {
            name: "acme".into(),
            redirect_variable: None,
            home_setting: None,
        });
        let declared = Declared::new(vec![
            (id, needs),
            api("plain", true),
            cli("acme-cli", "acme", false, Some("acme")),
        ]);
        let env = env_of(
            "[providers.acme]\nbase_url = \"http://127.0.0.1:9\"\nstream = true\nprices = { m = { input = 1.0, output = 1.0 } }\n[providers.plain]\nbase_url = \"https://p.test\"",
            &declared,
        )
        .unwrap();
        assert_eq!(env["ACME_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(env["ACME_STREAM"], "true");
        assert!(env.contains_key("CAUTILUS_ACME_PRICES"));
        assert_eq!(env["PLAIN_BASE_URL"], "https://p.test");
        let refused = env_of("[providers.plain]\nprices = {}", &declared).unwrap_err();
        assert_eq!(
            refused,
            "unknown key `providers.plain.prices`; keys here: base_url"
        );
        let refused = env_of("[providers.openai]", &declared).unwrap_err();
        assert_eq!(
            refused,
            "unknown key `providers.openai`; keys here: acme, plain"
        );
    }
}
