//! What a provider calling a model API is granted and told, from the
//! endpoint it declares (`provider-needs`): the host of its base URL (its
//! variable, else its default URL; no user or password in it), its key's
//! secret name when the key is set (refused when it is required and
//! missing), streaming when its stream variable asks, and whether the price
//! table prices its calls (only calls to the default URL's host). The key
//! itself never reaches the component.

use serde_json::{Map, Value, json};

use crate::eval::provider::pricing::Pricing;
use crate::plugin::bindings::provider_needs::{Endpoint, PriceFamily};

/// What an API provider is granted and told.
#[derive(Debug, PartialEq)]
pub(super) struct ApiGrant {
    /// The base URL's host.
    pub(super) host: String,
    /// Whether the base URL is `https://`.
    pub(super) tls: bool,
    /// The key's secret name (= its environment variable), when set.
    pub(super) secret: Option<String>,
    pub(super) options: Map<String, Value>,
    pub(super) pricing: Pricing,
}

/// The grant of a provider calling `endpoint`, priced as `family`, or what
/// to set.
pub(super) fn api_endpoint(
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
            configured: super::pricing::configured_prices(&family.name, env)?,
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A lookup of the variables in `pairs` (the rest unset).
    pub(crate) fn env_of(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<String> {
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
}
