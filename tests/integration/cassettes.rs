//! Cassettes: a run against a model recorded once (`--replay record-new`)
//! and replayed offline (`--replay replay-strict`: no network, no process,
//! no key), with credentials redacted from the file.

use cautilus_tests::model_server::{ModelServer, Reply};
use serde_json::{Value, json};

use crate::support::{cautilus, output, read_json, repo};

const KEY: &str = "sk-ant-cassette-5151";

fn messages_answer() -> Reply {
    Reply::json(
        200,
        json!({"id": "msg_1", "type": "message", "role": "assistant",
               "model": "claude-recorded-1",
               "content": [{"type": "text", "text": "Cautilus: run cautilus eval test."}],
               "usage": {"input_tokens": 30, "output_tokens": 8}})
        .to_string(),
    )
}

/// `cautilus eval test` on `fixture` in `workspace` with `args`; the
/// environment holds no key or endpoint unless `env` sets one.
fn run(
    workspace: &std::path::Path,
    fixture: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String, Value) {
    let out = workspace.join(format!("run-{}", args.join("-").replace(['-', ' '], "")));
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(workspace)
        .arg("--output-dir")
        .arg(&out)
        .args(args)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("PATH", "/usr/bin:/bin"); // no coding-agent CLI either
    for (k, v) in env {
        command.env(k, v);
    }
    let (code, stdout, stderr) = output(command.output().unwrap());
    let summary = if out.join("eval-summary.json").exists() {
        read_json(&out.join("eval-summary.json"))
    } else {
        Value::Null
    };
    (code, stdout, stderr, summary)
}

fn chat_fixture(dir: &std::path::Path, follow_up: &str) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml"))
            .unwrap()
            .replace("Which command runs it?", follow_up);
    let path = dir.join("onboarding.fixture.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_recorded_run_replays_offline_without_key_network_or_processes() {
    let workspace = tempfile::tempdir().unwrap();
    let fixture = chat_fixture(workspace.path(), "Which command runs it?");
    let cassette = workspace
        .path()
        .join(".cautilus/cassettes/cautilus-onboarding.json");
    {
        let server = ModelServer::start(|_, _| messages_answer());
        let (code, stdout, stderr, _) = run(
            workspace.path(),
            &fixture,
            &["--replay", "record-new"],
            &[
                ("ANTHROPIC_API_KEY", KEY),
                ("ANTHROPIC_BASE_URL", &server.url),
            ],
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_eq!(server.requests().len(), 2);
        // A second record-new run answers from the cassette.
        let (code, _, _, _) = run(
            workspace.path(),
            &fixture,
            &["--replay", "record-new"],
            &[
                ("ANTHROPIC_API_KEY", KEY),
                ("ANTHROPIC_BASE_URL", &server.url),
            ],
        );
        assert_eq!(code, 0);
        assert_eq!(
            server.requests().len(),
            2,
            "no new call: both were recorded"
        );
    } // the server is gone from here on

    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(!text.contains(KEY), "the key is never written");
    let recorded: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(recorded["schemaVersion"], "cautilus.cassette.v1");
    assert_eq!(recorded["models"], json!(["claude-recorded-1"]));
    assert!(recorded["cautilusVersion"].is_string() && recorded["recordedAt"].is_string());

    // No key, no endpoint, no CLI: replay-strict picks the recorded adapter
    // for the fixture's `anthropic` and answers every case from the file.
    let (code, stdout, stderr, summary) = run(
        workspace.path(),
        &fixture,
        &["--replay", "replay-strict"],
        &[],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    for evaluation in summary["evaluations"].as_array().unwrap() {
        assert_eq!(evaluation["status"], "passed");
        assert_eq!(evaluation["model"], "claude-recorded-1");
        assert_eq!(evaluation["harness"], "anthropic-api");
        assert!(evaluation["durationMs"].as_u64().is_some());
    }

    // A call the cassette does not hold fails closed, naming its key.
    let changed = chat_fixture(workspace.path(), "And which command validates it?");
    let (code, _, _, summary) = run(
        workspace.path(),
        &changed,
        &["--replay", "replay-strict"],
        &[],
    );
    assert_ne!(code, 0);
    let second = summary["evaluations"][1].to_string();
    assert!(
        second.contains("no recorded answer") && second.contains("cassette key"),
        "{second}"
    );
    assert_eq!(
        summary["evaluations"][0]["status"], "passed",
        "the unchanged case still replays"
    );
}

#[test]
fn replay_strict_without_a_cassette_is_refused_before_anything_runs() {
    let workspace = tempfile::tempdir().unwrap();
    let fixture = chat_fixture(workspace.path(), "Which command runs it?");
    let (code, _, stderr, _) = run(
        workspace.path(),
        &fixture,
        &["--replay", "replay-strict"],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("needs a recorded cassette"), "{stderr}");
    assert!(stderr.contains("--replay record-new"), "{stderr}");
}

#[test]
fn judge_calls_are_recorded_and_replayed_too() {
    let workspace = tempfile::tempdir().unwrap();
    let fixture = crate::support::judged_fixture(workspace.path());
    {
        let server = ModelServer::start(|_, _| {
            Reply::json(
                200,
                json!({"model": "judge-model",
                       "choices": [{"message": {"role": "assistant",
                           "content": "{\"passed\": true, \"score\": 1.0, \"reasoning\": \"names it\"}"}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
                .to_string(),
            )
        });
        let (code, stdout, stderr, _) = run(
            workspace.path(),
            &fixture,
            &["--replay", "record-new"],
            &[("OPENAI_BASE_URL", &server.url), ("OPENAI_API_KEY", KEY)],
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_eq!(server.requests().len(), 1, "one judge call");
    }
    let text =
        std::fs::read_to_string(workspace.path().join(".cautilus/cassettes/judged.json")).unwrap();
    assert!(text.contains(r#""kind": "model""#), "{text}");
    assert!(!text.contains(KEY));
    // Offline: no endpoint, no key; the judge's answer comes from the cassette.
    let (code, stdout, stderr, summary) = run(
        workspace.path(),
        &fixture,
        &["--replay", "replay-strict"],
        &[],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(summary["evaluations"][0]["status"], "passed", "{summary}");
}

#[test]
fn the_fixture_can_set_the_replay_mode_and_the_flag_wins() {
    let workspace = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml"))
            .unwrap()
            .replace(
                "suiteId: cautilus-onboarding",
                "suiteId: cautilus-onboarding\nreplay: replay-strict",
            );
    let fixture = workspace.path().join("strict.fixture.yaml");
    std::fs::write(&fixture, text.clone()).unwrap();
    // The fixture asks for replay-strict and there is no cassette.
    let (code, _, stderr, _) = run(workspace.path(), &fixture, &[], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("needs a recorded cassette"), "{stderr}");
    // `--replay live` overrides it (and then finds no key: exit 2 naming it).
    let (code, _, stderr, _) = run(workspace.path(), &fixture, &["--replay", "live"], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("set ANTHROPIC_API_KEY"), "{stderr}");

    let bad = workspace.path().join("bad.fixture.yaml");
    std::fs::write(
        &bad,
        text.replace("replay: replay-strict", "replay: sometimes"),
    )
    .unwrap();
    let (code, _, stderr, _) = run(workspace.path(), &bad, &[], &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown replay mode `sometimes`"),
        "{stderr}"
    );
}
