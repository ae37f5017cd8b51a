//! The app/chat preset: system prompt + a multi-turn `messages` list.

use cautilus_presets_app::{Shape, collect, describe, evaluate, translate};
use cautilus_sdk::preset::{Preset, PresetInfo};
use cautilus_sdk::{PluginError, export_preset, plugin_info};
use serde_json::Value;

struct Chat;

impl Preset for Chat {
    fn info() -> PresetInfo {
        describe(Shape::Chat, plugin_info!())
    }

    fn translate(suite: Value) -> Result<Value, PluginError> {
        translate(Shape::Chat, suite)
    }

    fn collect(cases: Value, results: Value) -> Result<Value, PluginError> {
        collect(Shape::Chat, cases, results)
    }

    fn evaluate(observed: Value) -> Result<Value, PluginError> {
        evaluate(Shape::Chat, observed)
    }
}

export_preset!(Chat);
