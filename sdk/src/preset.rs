//! The preset trait and the `export_preset!` macro.
//!
//! A preset owns one (surface, preset) pair of the host's taxonomy: it
//! validates and normalizes a suite's cases (`translate`) and scores an
//! observed packet against its expectations (`evaluate`). Packets are JSON.

use std::marker::PhantomData;

use serde_json::Value;

use crate::bindings::preset::exports::cautilus::plugin::preset_api;
use crate::types::PluginError;

pub use preset_api::PresetInfo;

/// A preset plugin.
pub trait Preset: 'static {
    /// Identity, the (surface, preset) pair and the packet schema ids.
    fn info() -> PresetInfo;
    /// Validates a composed suite and returns its cases packet.
    fn translate(suite: Value) -> Result<Value, PluginError>;
    /// Builds the observed packet from the cases packet and per-case results.
    fn collect(cases: Value, results: Value) -> Result<Value, PluginError>;
    /// Scores an observed packet; returns the summary packet.
    fn evaluate(observed: Value) -> Result<Value, PluginError>;
}

#[doc(hidden)]
pub struct PresetExport<P>(PhantomData<P>);

fn parse(json: &str, what: &str) -> Result<Value, PluginError> {
    serde_json::from_str(json)
        .map_err(|e| PluginError::input("", format!("{what} is not valid JSON: {e}")))
}

impl<P: Preset> preset_api::Guest for PresetExport<P> {
    fn describe() -> PresetInfo {
        P::info()
    }

    fn translate(suite: String) -> Result<String, PluginError> {
        P::translate(parse(&suite, "the suite")?).map(|v| v.to_string())
    }

    fn collect(cases: String, results: String) -> Result<String, PluginError> {
        P::collect(
            parse(&cases, "the cases packet")?,
            parse(&results, "the results")?,
        )
        .map(|v| v.to_string())
    }

    fn evaluate(observed: String) -> Result<String, PluginError> {
        P::evaluate(parse(&observed, "the observed packet")?).map(|v| v.to_string())
    }
}

/// Identity of a plugin from the crate's `Cargo.toml`.
#[macro_export]
macro_rules! plugin_info {
    ($($capability:expr),* $(,)?) => {
        $crate::PluginInfo {
            id: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            description: env!("CARGO_PKG_DESCRIPTION").to_string(),
            capabilities: vec![$($capability),*],
        }
    };
}

/// Exports a [`Preset`] as this component's preset world.
#[macro_export]
macro_rules! export_preset {
    ($preset:ty) => {
        const _: () = {
            type __CautilusPresetExport = $crate::__private::PresetExport<$preset>;
            $crate::__private::__export_preset_world!(
                __CautilusPresetExport with_types_in $crate::__private::preset_bindings
            );
        };
    };
}

/// Helpers for building packets; every built-in preset uses them.
pub mod packet {
    use serde_json::{Map, Value};

    use crate::PluginError;

    /// Copies `keys` from `from` into `to`, skipping absent and null values.
    pub fn copy_fields(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
        for key in keys {
            if let Some(value) = from.get(*key).filter(|v| !v.is_null()) {
                to.insert((*key).to_string(), value.clone());
            }
        }
    }

    /// A packet's header: its schema and pair, and the suite identity and
    /// `fixtureRef` carried over from `source` (the previous packet).
    pub fn header(schema: &str, surface: &str, preset: &str, source: &Value) -> Map<String, Value> {
        let mut header = Map::new();
        header.insert("schemaVersion".into(), Value::String(schema.into()));
        header.insert("surface".into(), Value::String(surface.into()));
        header.insert("preset".into(), Value::String(preset.into()));
        for key in ["suiteId", "suiteDisplayName", "fixtureRef"] {
            header.insert(key.into(), source.get(key).cloned().unwrap_or(Value::Null));
        }
        header
    }

    /// The evaluations of an observed packet, after checking that it is the
    /// packet `schema` and holds at least one evaluation.
    pub fn evaluations(observed: &Value, schema: &str) -> Result<Vec<Value>, PluginError> {
        let found = observed
            .get("schemaVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if found != schema {
            return Err(PluginError::input(
                "schemaVersion",
                format!("expected `{schema}`, got `{found}`"),
            ));
        }
        match observed.get("evaluations").and_then(Value::as_array) {
            Some(list) if !list.is_empty() => Ok(list.clone()),
            _ => Err(PluginError::input(
                "evaluations",
                "is missing or empty: an observed packet needs at least one evaluation",
            )),
        }
    }

    /// The cases of a cases packet and the host's results, checked to pair up
    /// one to one, in order.
    pub fn pair_results(
        cases: &Value,
        results: Value,
    ) -> Result<(Vec<Value>, Vec<Value>), PluginError> {
        let list = cases
            .get("cases")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Value::Array(results) = results else {
            return Err(PluginError::input(
                "results",
                "must be a list, one result per case",
            ));
        };
        if results.len() != list.len() {
            return Err(PluginError::input(
                "results",
                format!(
                    "{} results for {} cases; give one result per case, in order",
                    results.len(),
                    list.len()
                ),
            ));
        }
        Ok((list, results))
    }
}
