//! A preset declaring a cross-axis pair (`repo/chat`), which the host must
//! refuse at load: the taxonomy belongs to the host, not to plugins.

use cautilus_sdk::preset::{Preset, PresetInfo};
use cautilus_sdk::{PluginError, export_preset, plugin_info};
use serde_json::Value;

pub struct Outside;

impl Preset for Outside {
    fn info() -> PresetInfo {
        PresetInfo {
            plugin: plugin_info!(),
            surface: "repo".into(),
            preset: "chat".into(),
            cases_schema: "x.cases.v1".into(),
            observed_schema: "x.observed.v1".into(),
            summary_schema: "x.summary.v1".into(),
        }
    }

    fn translate(suite: Value) -> Result<Value, PluginError> {
        Ok(suite)
    }

    fn collect(cases: Value, _results: Value) -> Result<Value, PluginError> {
        Ok(cases)
    }

    fn evaluate(observed: Value) -> Result<Value, PluginError> {
        Ok(observed)
    }
}

export_preset!(Outside);
