//! The app/prompt preset: system prompt + one `input`, single turn.

use cautilus_presets_app::{Shape, collect, describe, evaluate, translate};
use cautilus_sdk::preset::{Preset, PresetInfo};
use cautilus_sdk::{PluginError, export_preset, plugin_info};
use serde_json::Value;

struct Prompt;

impl Preset for Prompt {
    fn info() -> PresetInfo {
        describe(Shape::Prompt, plugin_info!())
    }

    fn translate(suite: Value) -> Result<Value, PluginError> {
        translate(Shape::Prompt, suite)
    }

    fn collect(cases: Value, results: Value) -> Result<Value, PluginError> {
        collect(Shape::Prompt, cases, results)
    }

    fn evaluate(observed: Value) -> Result<Value, PluginError> {
        evaluate(Shape::Prompt, observed)
    }
}

export_preset!(Prompt);
