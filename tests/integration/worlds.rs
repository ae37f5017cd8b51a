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
    let Description::Preset(preset) = &plugin.description else {
        panic!("not a preset")
    };
    let info = &preset.info;
    assert_eq!(
        (info.surface.as_str(), info.preset.as_str()),
        ("app", "prompt")
    );
    assert_eq!(info.plugin.id, "test-preset-probe");
    let mut session =
        cautilus::plugin::preset::PresetSession::new(plugin, Default::default()).unwrap();
    let plans = session
        .translate("{}", &["1".to_string(), "2".to_string()], 0)
        .unwrap();
    let ids: Vec<&str> = plans.iter().map(|p| p.case_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2"]);
    assert_eq!(plans[1].repeat_count, 1);
    // Error paths are absolute: the batch starts at case 7.
    let error = session
        .translate("{}", &["\"x\"".to_string()], 7)
        .unwrap_err();
    assert!(
        error.to_string().contains("cases[7]: must be a number"),
        "{error}"
    );
    let verdicts = session
        .evaluate(
            &[json!({"n": 2, "caseId": "c2"}).to_string(), "[".to_string()],
            0,
        )
        .unwrap();
    assert_eq!(verdicts[0].case_id, "c2");
    assert!(
        verdicts[1]
            .summary
            .contains("evaluations[1] is not valid JSON")
    );
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
fn inspect_takes_a_built_in_preset_by_its_pair_and_shows_its_inputs_and_answer() {
    for (pair, inputs, answer) in [
        (
            "app/prompt",
            json!(["input"]),
            json!(["/observed/finalText"]),
        ),
        (
            "app/chat",
            json!(["messages"]),
            json!(["/observed/finalText"]),
        ),
        ("repo/skill", json!(["prompt", "turns"]), json!([])),
        ("repo/whole-repo", json!(["prompt"]), json!([])),
    ] {
        let (code, stdout, stderr) = run(&["plugin", "inspect", pair, "--json"]);
        assert_eq!(code, 0, "{pair}: {stderr}");
        let view: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(view["kind"], "preset", "{pair}");
        assert_eq!(view["preset"]["inputFields"], inputs, "{pair}");
        assert_eq!(view["preset"]["answer"], answer, "{pair}");
    }
    // A pair no preset serves is still read as a pack reference.
    let (code, _, stderr) = run(&["plugin", "inspect", "app/nothing"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn a_preset_whose_contract_redeclares_a_host_field_is_refused_at_load() {
    let error = registry()
        .load_path(&cautilus_tests::component("preset-bad-contract"))
        .err()
        .expect("refused");
    assert!(matches!(error, PluginError::BadContract { .. }), "{error}");
    assert!(error.is_definition_error());
    let text = error.to_string();
    assert!(
        text.contains("suite contract declares suite field `suiteId`, which the host owns or reserves; rename it"),
        "{text}"
    );
    // Through the CLI: a definition error, exit code 2.
    let (code, _, stderr) = run(&["plugin", "inspect", &component("preset-bad-contract")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the host refuses it"), "{stderr}");
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
        text.contains("this host implements cautilus:plugin@0.1.1"),
        "{text}"
    );
    assert!(
        text.contains("rebuild it against cautilus-sdk 0.1.1"),
        "{text}"
    );
    let (code, _, stderr) = run(&["plugin", "inspect", &component("wit-v2")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cautilus:plugin@0.2.0"), "{stderr}");
}

#[test]
fn a_preset_built_against_an_older_patch_loads_and_translates() {
    // preset-v010 is built against the frozen 0.1.0 WIT
    // (tests/components/wit-0.1.0): no `preset-contract` export.
    let plugin = registry()
        .load_path(&cautilus_tests::component("preset-v010"))
        .unwrap();
    let Description::Preset(preset) = &plugin.description else {
        panic!("not a preset")
    };
    assert_eq!(preset.info.plugin.id, "test-preset-v010");
    assert!(preset.contract.undeclared && preset.contract.fields.is_empty());
    // It gets what hosts did before contracts: ids derived from the
    // input-like fields, the answer looked for where it used to be.
    assert_eq!(
        preset.contract.input_fields,
        ["input", "messages", "prompt", "turns"]
    );
    assert_eq!(preset.contract.answer, ["/observed/finalText", "/output"]);
    let mut session =
        cautilus::plugin::preset::PresetSession::new(plugin, Default::default()).unwrap();
    let plans = session
        .translate(
            r#"{"model": "m"}"#,
            &[r#"{"caseId": "a", "input": "hi"}"#.to_string()],
            0,
        )
        .unwrap();
    assert_eq!(plans[0].model.as_deref(), Some("m"));
}

#[test]
fn a_provider_built_against_an_older_patch_loads_declaring_nothing() {
    // provider-v010 is built against the frozen 0.1.0 WIT
    // (tests/components/wit-0.1.0): no `provider-needs` export.
    let plugin = registry()
        .load_path(&cautilus_tests::component("provider-v010"))
        .unwrap();
    assert_eq!(plugin.kind, PluginKind::Provider);
    let Description::Provider(provider) = &plugin.description else {
        panic!("not a provider")
    };
    assert_eq!(provider.plugin.id, "test-provider-v010");
    let needs = &provider.needs;
    assert!(needs.endpoint.is_none() && needs.program.is_none() && needs.prices.is_none());
    assert_eq!(
        needs.settings_applied, None,
        "it says nothing about settings"
    );
    assert!(provider.embedder.is_none(), "it gives no embeddings");
    let mut session = cautilus::plugin::provider::ProviderSession::new(
        plugin,
        Default::default(),
        Default::default(),
    )
    .unwrap();
    let request = cautilus::plugin::bindings::provider_api::Invocation {
        case_id: "a".into(),
        mode: "messaging".into(),
        model: Some("m".into()),
        system: None,
        messages: vec![cautilus::plugin::bindings::types::Message {
            role: "user".into(),
            content: "hi".into(),
        }],
        input: None,
        expected: None,
        options: None,
    };
    let observation = cautilus::plugin::io::block_on(session.invoke(&request)).unwrap();
    assert_eq!(observation.final_text.as_deref(), Some("echo: hi"));
}

#[test]
fn inspect_shows_what_a_provider_declares_it_needs() {
    let inspect = |reference: &str| {
        let (code, stdout, stderr) = run(&["plugin", "inspect", reference, "--json"]);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["provider"]["needs"].clone()
    };
    let openai = inspect("openai");
    assert_eq!(openai["endpoint"]["urlVariable"], "OPENAI_BASE_URL");
    assert_eq!(openai["endpoint"]["keyRequired"], false);
    assert_eq!(openai["prices"]["family"], "openai");
    assert_eq!(openai["program"], json!(null));
    let codex = inspect("codex");
    assert_eq!(codex["program"]["name"], "codex");
    assert_eq!(codex["program"]["agent"], true);
    assert_eq!(codex["program"]["home"]["variable"], "CODEX_HOME");
    assert_eq!(codex["settingsApplied"], json!([]));
    // Built against 0.1.0: nothing declared, nothing said about settings.
    let old = inspect(&component("provider-v010"));
    assert_eq!(
        old,
        json!({"endpoint": null, "program": null, "prices": null, "settingsApplied": null})
    );
}

#[test]
fn inspect_shows_whether_a_provider_gives_embeddings() {
    let embeddings = |reference: &str| {
        let (code, stdout, stderr) = run(&["plugin", "inspect", reference, "--json"]);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["provider"]["embeddings"]
            .clone()
    };
    assert_eq!(
        embeddings("openai"),
        json!({"defaultModel": "text-embedding-3-small"})
    );
    assert_eq!(
        embeddings("fixture"),
        json!({"defaultModel": "fixture-embedding"})
    );
    // Built with the SDK, which gives none unless the provider does.
    for none in [
        "anthropic",
        "claude-cli",
        "codex-cli",
        "claude-code",
        "codex",
    ] {
        assert_eq!(embeddings(none), json!(null), "{none}");
    }
    // Built against 0.1.0, before providers could give any.
    assert_eq!(embeddings(&component("provider-v010")), json!(null));
}

#[test]
fn a_newer_patch_of_the_contract_is_refused_with_upgrade_advice() {
    // The host serves 0.1.0 ..= its own patch of the 0.1 line (see
    // engine/src/contract.rs); a component of a newer patch (0.1.2 on this
    // 0.1.1 host) may call what this host lacks.
    let error = registry()
        .load_path(&cautilus_tests::component("wit-next-patch"))
        .err()
        .expect("refused");
    let text = error.to_string();
    assert!(
        text.contains("built against WIT cautilus:plugin@0.1.2")
            && text.contains("it is newer: upgrade cautilus"),
        "{text}"
    );
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

#[test]
fn the_sdk_crate_carries_the_same_contract_as_wit() {
    // The SDK is packaged with its own copy of the WIT (a published crate
    // cannot reach ../wit); it must never drift from the host's.
    let repo = crate::support::repo();
    let names = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".wit"))
            .collect();
        names.sort();
        names
    };
    let wit = repo.join("wit");
    let copy = repo.join("sdk/wit");
    assert_eq!(names(&wit), names(&copy), "the same .wit files");
    for name in names(&wit) {
        assert_eq!(
            std::fs::read_to_string(wit.join(&name)).unwrap(),
            std::fs::read_to_string(copy.join(&name)).unwrap(),
            "sdk/wit/{name} differs from wit/{name}: copy wit/*.wit into sdk/wit/"
        );
    }
}
