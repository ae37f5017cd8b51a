//! A minimal preset component, to prove the preset world loads and describes.

use cautilus_sdk::preset::{Preset, PresetInfo};
use cautilus_sdk::{PluginError, export_preset, plugin_info};
use serde_json::{Value, json};

pub struct Probe;

impl Preset for Probe {
    fn info() -> PresetInfo {
        PresetInfo {
            plugin: plugin_info!(),
            surface: "app".into(),
            preset: "prompt".into(),
            cases_schema: "cautilus.app_prompt_test_cases.v1".into(),
            observed_schema: "cautilus.app_prompt_evaluation_inputs.v1".into(),
            summary_schema: "cautilus.app_prompt_evaluation_summary.v1".into(),
        }
    }

    fn translate(suite: Value) -> Result<Value, PluginError> {
        Ok(json!({ "cases": suite.get("cases").cloned().unwrap_or(Value::Null) }))
    }

    fn collect(cases: Value, results: Value) -> Result<Value, PluginError> {
        Ok(json!({ "cases": cases, "results": results }))
    }

    fn evaluate(observed: Value) -> Result<Value, PluginError> {
        Ok(json!({ "observed": observed }))
    }
}

export_preset!(Probe);
