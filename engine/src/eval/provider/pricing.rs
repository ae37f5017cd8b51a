//! Which costs a run records: a provider's own report, a price the user
//! configured for the endpoint, or the checked-in price table — the table
//! only when the call went to the API whose prices it holds.
//!
//! The built-in providers price token counts from OpenAI's public table
//! (`costSource: derived:<table>`). A local server that echoes
//! `model: gpt-4o-mini` (llama.cpp, vLLM, Ollama) or a Codex configured
//! with another `model_provider` is not OpenAI, and its calls cost nothing
//! of the sort: their derived cost is dropped. A user who wants costs for
//! such an endpoint configures them (`[providers.openai.prices]` in
//! `cautilus.toml`, or `CAUTILUS_OPENAI_PRICES`), and they are recorded as
//! `costSource: configured`. A cost the provider reported itself
//! (`reported`, e.g. Claude Code's) is kept as it is.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::plugin::Observation;
use crate::plugin::bindings::provider_needs::PriceFamily;
use std::path::Path;

/// USD per million tokens of one model.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning tokens included).
    pub output: f64,
    /// Cached input tokens (default: `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
}

/// Model name → its price.
pub type PriceTable = BTreeMap<String, ModelPrice>;

/// The variable that carries a provider family's configured prices (JSON
/// of a [`PriceTable`]); `[providers.<family>.prices]` stands in for it.
pub fn prices_variable(family: &str) -> String {
    format!("CAUTILUS_{}_PRICES", family.to_ascii_uppercase())
}

/// Parses and checks configured prices (finite, not negative).
pub fn parse_prices(text: &str, origin: &str) -> Result<PriceTable, String> {
    let table: PriceTable = serde_json::from_str(text).map_err(|e| {
        format!(
            "{origin}: {e}; give {{\"<model>\": {{\"input\": USD per 1M tokens, \"output\": …, \"cached_input\": …}}}}"
        )
    })?;
    for (model, price) in &table {
        for (name, value) in [
            ("input", Some(price.input)),
            ("output", Some(price.output)),
            ("cached_input", price.cached_input),
        ] {
            if let Some(value) = value
                && !(value.is_finite() && value >= 0.0)
            {
                return Err(format!(
                    "{origin}: `{model}.{name}` must be a price in USD per million tokens (0 or more), got {value}"
                ));
            }
        }
    }
    Ok(table)
}

/// How a run's provider calls are priced.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    /// Whether a `derived:` cost (the checked-in table) stands: the calls
    /// go to the API the table prices.
    pub table_applies: bool,
    /// Prices the user configured for this endpoint.
    pub configured: PriceTable,
}

impl Default for Pricing {
    /// A provider the host knows nothing about: its costs stand as given.
    fn default() -> Self {
        Self {
            table_applies: true,
            configured: PriceTable::new(),
        }
    }
}

/// Where a configured cost comes from, on every observation it prices.
pub const CONFIGURED: &str = "configured";

impl Pricing {
    /// `observation` with the cost this run stands behind.
    pub fn apply(&self, mut observation: Observation) -> Observation {
        let reported = observation.cost_source.as_deref() == Some("reported");
        let derived = observation
            .cost_source
            .as_deref()
            .is_some_and(|s| s.starts_with("derived:"));
        let configured = observation
            .model
            .as_deref()
            .and_then(|m| self.configured.get(m));
        match (configured, &observation.usage) {
            (Some(price), Some(usage)) if !reported => {
                let tokens = |t: Option<u64>| t.unwrap_or(0) as f64;
                let cached = tokens(usage.cached_input_tokens);
                let input = (tokens(usage.input_tokens) - cached).max(0.0);
                let usd = (input * price.input
                    + cached * price.cached_input.unwrap_or(price.input)
                    + tokens(usage.output_tokens) * price.output)
                    / 1e6;
                observation.cost_usd = Some(usd);
                observation.cost_source = Some(CONFIGURED.into());
            }
            _ if derived && !self.table_applies => {
                observation.cost_usd = None;
                observation.cost_source = None;
            }
            _ => {}
        }
        observation
    }
}

/// The prices configured for provider family `family`
/// (`[providers.<family>.prices]`, or its variable).
pub(super) fn configured_prices(
    family: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PriceTable, String> {
    let variable = prices_variable(family);
    match env(&variable) {
        Some(text) if !text.trim().is_empty() => parse_prices(&text, &variable),
        _ => Ok(Default::default()),
    }
}

/// How the calls of a program (a CLI) of price family `family`, whose home
/// is `home`, are priced: by the family's table only while it talks to the
/// family's API (its redirect variable unset, and its home's setting naming
/// no other API), with the family's configured prices; as given when it
/// declares no family.
pub(super) fn program_pricing(
    family: Option<&PriceFamily>,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Pricing, String> {
    let Some(family) = family else {
        return Ok(Pricing::default());
    };
    Ok(Pricing {
        table_applies: talks_to_family(family, home, env),
        configured: configured_prices(&family.name, env)?,
    })
}

fn talks_to_family(
    family: &PriceFamily,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> bool {
    if let Some(variable) = &family.redirect_variable
        && env(variable).is_some_and(|u| !u.trim().is_empty())
    {
        return false;
    }
    let (Some(setting), Some(home)) = (&family.home_setting, home) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn family(name: &str) -> PriceFamily {
        PriceFamily {
            name: name.into(),
            redirect_variable: None,
            home_setting: None,
        }
    }

    /// Codex's declaration: priced as OpenAI while it talks to OpenAI.
    fn codex_family() -> PriceFamily {
        PriceFamily {
            redirect_variable: Some("OPENAI_BASE_URL".into()),
            home_setting: Some(crate::plugin::bindings::provider_needs::HomeSetting {
                file: "config.toml".into(),
                key: "model_provider".into(),
            }),
            ..family("openai")
        }
    }

    #[test]
    fn codex_prices_from_the_table_only_when_it_talks_to_openai() {
        let home = tempfile::tempdir().unwrap();
        let check = |config: Option<&str>, base: Option<&str>| {
            if let Some(text) = config {
                std::fs::write(home.path().join("config.toml"), text).unwrap();
            }
            let base = base.map(str::to_string);
            talks_to_family(&codex_family(), Some(home.path()), &move |name| {
                (name == "OPENAI_BASE_URL").then(|| base.clone()).flatten()
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
        // A family that declares neither: its table always applies (Claude's).
        let none = |_: &str| None;
        assert!(talks_to_family(
            &family("anthropic"),
            Some(home.path()),
            &none
        ));
        assert!(
            talks_to_family(&codex_family(), None, &none),
            "no home: the default"
        );
        let priced = program_pricing(None, Some(home.path()), &none).unwrap();
        assert_eq!(priced, Pricing::default(), "no family: costs as given");
        let configured = program_pricing(Some(&family("anthropic")), None, &|name: &str| {
            (name == "CAUTILUS_ANTHROPIC_PRICES")
                .then(|| r#"{"m": {"input": 1, "output": 2}}"#.to_string())
        })
        .unwrap();
        assert_eq!(configured.configured["m"].output, 2.0);
    }
    use crate::plugin::Usage;

    fn observed(model: &str, source: Option<&str>, cost: Option<f64>) -> Observation {
        Observation {
            final_text: Some("hi".into()),
            messages: Vec::new(),
            tool_calls: None,
            usage: Some(Usage {
                input_tokens: Some(1000),
                output_tokens: Some(100),
                cached_input_tokens: Some(200),
                reasoning_tokens: None,
                llm_calls: Some(1),
            }),
            cost_usd: cost,
            cost_source: source.map(Into::into),
            retries: None,
            duration_ms: None,
            provider: Some("openai".into()),
            model: Some(model.into()),
            harness: None,
            mode: None,
            structured: None,
            trace: None,
        }
    }

    fn table() -> PriceTable {
        parse_prices(
            r#"{"smollm2": {"input": 1.0, "output": 10.0, "cached_input": 0.5}, "free": {"input": 0, "output": 0}}"#,
            "test",
        )
        .unwrap()
    }

    #[test]
    fn a_derived_cost_stands_only_where_the_table_applies() {
        let derived = observed(
            "gpt-4o-mini",
            Some("derived:openai-api-prices@2025-08"),
            Some(0.3),
        );
        let official = Pricing::default().apply(derived.clone());
        assert_eq!(official.cost_usd, Some(0.3));
        let local = Pricing {
            table_applies: false,
            configured: PriceTable::new(),
        };
        let dropped = local.apply(derived);
        assert_eq!((dropped.cost_usd, dropped.cost_source), (None, None));
        // A reported cost is the provider's own word, wherever it came from.
        let reported = local.apply(observed("gpt-4o-mini", Some("reported"), Some(0.2)));
        assert_eq!(reported.cost_usd, Some(0.2));
    }

    #[test]
    fn configured_prices_price_the_tokens_of_their_model() {
        let pricing = Pricing {
            table_applies: false,
            configured: table(),
        };
        let priced = pricing.apply(observed("smollm2", None, None));
        // 800 uncached input + 200 cached at half price + 100 output.
        let expected = (800.0 * 1.0 + 200.0 * 0.5 + 100.0 * 10.0) / 1e6;
        assert!((priced.cost_usd.unwrap() - expected).abs() < 1e-15);
        assert_eq!(priced.cost_source.as_deref(), Some(CONFIGURED));
        // It wins over a derived cost, never over a reported one.
        let over_derived = pricing.apply(observed("smollm2", Some("derived:x"), Some(9.0)));
        assert_eq!(over_derived.cost_source.as_deref(), Some(CONFIGURED));
        let reported = pricing.apply(observed("smollm2", Some("reported"), Some(9.0)));
        assert_eq!(reported.cost_usd, Some(9.0));
        assert_eq!(
            pricing.apply(observed("free", None, None)).cost_usd,
            Some(0.0)
        );
        // Another model gets no cost: never a guess.
        assert_eq!(pricing.apply(observed("other", None, None)).cost_usd, None);
        // No usage: nothing to price.
        let mut no_usage = observed("smollm2", None, None);
        no_usage.usage = None;
        assert_eq!(pricing.apply(no_usage).cost_usd, None);
    }

    #[test]
    fn prices_must_be_prices() {
        for bad in [
            r#"{"m": {"input": -1, "output": 0}}"#,
            r#"{"m": {"input": 1}}"#,
            r#"{"m": {"input": 1, "output": 1, "cachedInput": 1}}"#,
            r#"{"m": {"input": "1", "output": 1}}"#,
            r#"{"m": {"input": 1, "output": 1e400}}"#,
            r#"["m"]"#,
            "not json",
        ] {
            let error = parse_prices(bad, "CAUTILUS_OPENAI_PRICES").unwrap_err();
            assert!(
                error.starts_with("CAUTILUS_OPENAI_PRICES: "),
                "{bad}: {error}"
            );
        }
        assert_eq!(prices_variable("openai"), "CAUTILUS_OPENAI_PRICES");
    }
}
