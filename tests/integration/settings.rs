//! Generation settings (`settings` on a suite, a variant and a case): what
//! reaches the model's server, what a cassette replays, what a provider
//! that cannot apply them says.

use std::collections::BTreeSet;
use std::path::Path;

use cautilus_tests::model_server::{ModelServer, Reply};
use serde_json::{Value, json};

use crate::support::{cautilus, output};

const KEY: &str = "sk-settings-test-1234";

fn answer() -> Reply {
    Reply::json(
        200,
        json!({"model": "m1", "choices": [{"message": {"role": "assistant", "content": "hi there"}}],
               "usage": {"prompt_tokens": 3, "completion_tokens": 2}})
        .to_string(),
    )
}

/// A suite with settings on the suite, a variant and a case.
fn fixture(dir: &Path, suite_temperature: &str) -> std::path::PathBuf {
    let path = dir.join("settings.fixture.yaml");
    std::fs::write(
        &path,
        format!(
            "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: settings
provider: openai
model: m1
settings: {{ temperature: {suite_temperature}, maxTokens: 50, stop: END }}
baseline: base
variants:
  base: {{ model: m1 }}
  cold: {{ settings: {{ temperature: 0, seed: 7 }} }}
cases:
  - caseId: plain
    input: Say hi.
    expected: {{ finalText: hi }}
  - caseId: own
    input: Say bye.
    expected: {{ finalText: hi }}
    settings: {{ maxTokens: 5, topP: 0.5 }}
"
        ),
    )
    .unwrap();
    path
}

fn run(dir: &Path, fixture: &Path, args: &[&str], server: Option<&ModelServer>) -> (i32, String) {
    let mut command = cautilus();
    command
        .current_dir(dir)
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .args(args)
        .env("OPENAI_API_KEY", KEY)
        .env("PATH", "/usr/bin:/bin");
    match server {
        Some(server) => command.env("OPENAI_BASE_URL", &server.url),
        None => command.env_remove("OPENAI_BASE_URL"),
    };
    let (code, stdout, stderr) = output(command.output().unwrap());
    (code, format!("{stdout}\n{stderr}"))
}

/// `value` with its keys in sorted order, as text.
fn canonical(value: &Value) -> String {
    let sorted: std::collections::BTreeMap<&String, &Value> =
        value.as_object().unwrap().iter().collect();
    serde_json::to_string(&sorted).unwrap()
}

/// (the user's message, the settings the server received) of each request.
fn received(server: &ModelServer) -> BTreeSet<(String, String)> {
    server
        .requests()
        .iter()
        .map(|r| {
            let mut body: Value = serde_json::from_str(&r.body).unwrap();
            let text = body["messages"].as_array().unwrap().last().unwrap()["content"]
                .as_str()
                .unwrap()
                .to_string();
            let object = body.as_object_mut().unwrap();
            object.remove("messages");
            object.remove("model");
            (text, canonical(&Value::Object(object.clone())))
        })
        .collect()
}

#[test]
fn suite_variant_and_case_settings_reach_the_server_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(|_, _| answer());
    let fixture = fixture(dir.path(), "0.2");
    let (code, out) = run(dir.path(), &fixture, &[], Some(&server));
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.contains("does not apply"),
        "openai applies them all: {out}"
    );
    let expected: BTreeSet<(String, String)> = [
        (
            "Say hi.",
            json!({"temperature": 0.2, "max_tokens": 50, "stop": ["END"]}),
        ),
        (
            "Say bye.",
            json!({"temperature": 0.2, "max_tokens": 5, "top_p": 0.5, "stop": ["END"]}),
        ),
        (
            "Say hi.",
            json!({"temperature": 0.0, "max_tokens": 50, "seed": 7, "stop": ["END"]}),
        ),
        (
            "Say bye.",
            json!({"temperature": 0.0, "max_tokens": 5, "top_p": 0.5, "seed": 7, "stop": ["END"]}),
        ),
    ]
    .into_iter()
    .map(|(text, settings)| (text.to_string(), canonical(&settings)))
    .collect();
    assert_eq!(received(&server), expected);
}

#[test]
fn a_cassette_replays_only_the_settings_it_recorded() {
    let dir = tempfile::tempdir().unwrap();
    {
        let server = ModelServer::start(|_, _| answer());
        let fixture = fixture(dir.path(), "0.2");
        let (code, out) = run(
            dir.path(),
            &fixture,
            &["--replay", "record-new"],
            Some(&server),
        );
        assert_eq!(code, 0, "{out}");
        assert_eq!(server.requests().len(), 4);
    }
    // The same settings replay offline.
    let fixture = fixture(dir.path(), "0.2");
    let (code, out) = run(dir.path(), &fixture, &["--replay", "replay-strict"], None);
    assert_eq!(code, 0, "{out}");
    // Another temperature is another request: it is not in the cassette.
    let fixture = super::settings::fixture(dir.path(), "0.3");
    let (code, out) = run(dir.path(), &fixture, &["--replay", "replay-strict"], None);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("not in the cassette") || out.contains("no recorded"),
        "{out}"
    );
}

#[test]
fn a_provider_that_cannot_apply_a_setting_says_so_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture(dir.path(), "0.2");
    let out_dir = dir.path().join("out");
    // The fixture backend answers from canned results: no setting applies.
    let (code, out) = run(
        dir.path(),
        &fixture,
        &[
            "--provider",
            "fixture",
            "--variant",
            "base",
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
        None,
    );
    assert!(code == 0 || code == 1, "{out}");
    for name in ["temperature", "maxTokens", "stop", "topP"] {
        assert_eq!(
            out.matches(&format!("does not apply the generation setting `{name}`"))
                .count(),
            1,
            "warned about once: {out}"
        );
    }
    let run_json = std::fs::read_to_string(
        std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find_map(|p| {
                let file = if p.is_dir() {
                    p.join("run.json")
                } else {
                    p.clone()
                };
                (file.file_name() == Some("run.json".as_ref()) && file.is_file()).then_some(file)
            })
            .expect("a run.json"),
    )
    .unwrap();
    let run: Value = serde_json::from_str(&run_json).unwrap();
    assert_eq!(
        run["settingsNotApplied"],
        json!(["maxTokens", "stop", "temperature", "topP"]),
        "{run}"
    );
}

#[test]
fn answers_given_beforehand_are_not_said_to_miss_settings() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture(dir.path(), "0.2");
    let canned = dir.path().join("canned.json");
    std::fs::write(&canned, r#"{"plain": "hi", "own": "hi"}"#).unwrap();
    // Canned answers (`--fixture-results`) and a run's answers scored
    // again (`eval evaluate --fixture`) were generated elsewhere.
    let out_dir = dir.path().join("out");
    let (code, out) = run(
        dir.path(),
        &fixture,
        &[
            "--provider",
            "fixture",
            "--variant",
            "base",
            "--fixture-results",
            canned.to_str().unwrap(),
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("does not apply"), "{out}");
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("run.json")).unwrap()).unwrap();
    assert!(run_json.get("settingsNotApplied").is_none(), "{run_json}");
    let observed = out_dir.join("eval-observed.json");
    let mut command = cautilus();
    command
        .current_dir(dir.path())
        .args(["eval", "evaluate", "--input"])
        .arg(&observed)
        .arg("--fixture")
        .arg(&fixture);
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("does not apply"), "{stderr}");
}

#[test]
fn bad_settings_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (settings, says) in [
        (
            "{ temprature: 0 }",
            "settings.temprature: unknown setting `temprature`: did you mean `temperature`?",
        ),
        (
            "{ temperature: 3 }",
            "settings.temperature: must be a number from 0 to 2",
        ),
        ("{ max_tokens: 5 }", "did you mean `maxTokens`?"),
        (
            "[0.1]",
            "settings: must be an object of generation settings",
        ),
    ] {
        let text = std::fs::read_to_string(fixture(dir.path(), "0.2"))
            .unwrap()
            .replace("{ maxTokens: 5, topP: 0.5 }", settings);
        let path = dir.path().join("bad.fixture.yaml");
        std::fs::write(&path, text).unwrap();
        let (code, out) = run(dir.path(), &path, &["--provider", "fixture"], None);
        assert_eq!(code, 2, "{settings}: {out}");
        assert!(out.contains(says), "{settings}: {out}");
        // And on the suite.
        let text = std::fs::read_to_string(fixture(dir.path(), "0.2"))
            .unwrap()
            .replace("{ temperature: 0.2, maxTokens: 50, stop: END }", settings);
        std::fs::write(&path, text).unwrap();
        let (code, out) = run(dir.path(), &path, &["--provider", "fixture"], None);
        assert_eq!(code, 2, "{settings}: {out}");
    }
    // A repo suite's cases go to a coding agent: `settings` is not its field.
    let repo = dir.path().join("repo.fixture.yaml");
    std::fs::write(
        &repo,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: repo\npreset: whole-repo\nsettings: { temperature: 0 }\ncases:\n  - caseId: a\n    prompt: hi\n",
    )
    .unwrap();
    let (code, out) = run(dir.path(), &repo, &["--provider", "fixture"], None);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("settings"), "{out}");
}
