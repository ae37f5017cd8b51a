//! The preset and provider worlds load and describe; a component of the
//! wrong world or WIT version is refused with a clear load error.

use cautilus::plugin::{Description, PluginError, PluginKind};
use serde_json::json;

use crate::support::{component, registry, run, session};

#[test]
fn preset_component_loads_and_describes() {
    let plugin = registry()
        .load_path(&cautilus_tests::component("preset-probe"))
        .unwrap();
    assert_eq!(plugin.kind, PluginKind::Preset);
    let Description::Preset(info) = &plugin.description else {
        panic!("not a preset")
    };
    assert_eq!(
        (info.surface.as_str(), info.preset.as_str()),
        ("app", "prompt")
    );
    assert_eq!(info.plugin.id, "test-preset-probe");
    let suite = json!({"cases": [1, 2]});
    let translated = cautilus::plugin::oneshot::call_preset(
        &plugin,
        cautilus::plugin::oneshot::PresetCall::Translate(&suite),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(translated, json!({"cases": [1, 2]}));
}

#[test]
fn provider_component_loads_and_describes() {
    let plugin = registry()
        .load_path(&cautilus_tests::component("provider-probe"))
        .unwrap();
    assert_eq!(plugin.kind, PluginKind::Provider);
    let Description::Provider(info) = &plugin.description else {
        panic!("not a provider")
    };
    assert_eq!(info.harness, "probe");
    assert_eq!(info.plugin.capabilities.len(), 2);
}

#[test]
fn inspect_shows_each_world() {
    let (code, stdout, stderr) = run(&["plugin", "inspect", &component("preset-probe"), "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let view: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(view["kind"], "preset");
    assert_eq!(view["preset"]["surface"], "app");
    let (code, stdout, _) = run(&["plugin", "list", &component("provider-probe")]);
    assert_eq!(code, 0);
    assert!(stdout.contains("http(127.0.0.1) process(echo)"), "{stdout}");
}

#[test]
fn other_wit_version_is_a_clear_load_error() {
    let error = registry()
        .load_path(&cautilus_tests::component("wit-v2"))
        .err()
        .expect("refused");
    assert!(matches!(error, PluginError::WitVersion { .. }), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("built against WIT cautilus:plugin@0.2.0"),
        "{text}"
    );
    assert!(
        text.contains("this host implements cautilus:plugin@0.1.0"),
        "{text}"
    );
    let (code, _, stderr) = run(&["plugin", "inspect", &component("wit-v2")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cautilus:plugin@0.2.0"), "{stderr}");
}

#[test]
fn wrong_world_is_refused_where_a_scorer_is_needed() {
    let error = session(&component("preset-probe"), json!({}))
        .err()
        .expect("refused");
    assert!(
        error
            .to_string()
            .contains("implements the `preset` world, but a `scorer` plugin is needed"),
        "{error}"
    );
    assert!(error.is_definition_error());
}

#[test]
fn a_file_that_is_not_a_component_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.wasm");
    std::fs::write(&path, b"definitely not wasm").unwrap();
    let error = registry().load_path(&path).err().expect("refused");
    assert!(matches!(error, PluginError::Compile { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("is not a valid WebAssembly component")
    );
    let error = registry()
        .load_path(&dir.path().join("missing.wasm"))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("run `cautilus plugin list`"),
        "{error}"
    );
}
