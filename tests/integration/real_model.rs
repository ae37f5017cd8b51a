//! The `openai` provider end to end against a real small model:
//! SmolLM2-135M-Instruct served by llama-cpp-python as an OpenAI-compatible
//! endpoint (`scripts/smollm2-server.sh setup && scripts/smollm2-server.sh
//! start`). Runs only when `CAUTILUS_TEST_SMOLLM_URL` names the endpoint;
//! says so and passes otherwise (it is not part of the always-on tests).

use serde_json::json;

use crate::support::eval_run_with;

#[test]
fn the_openai_provider_scores_a_real_small_models_answers() {
    let Ok(url) = std::env::var("CAUTILUS_TEST_SMOLLM_URL") else {
        eprintln!(
            "skipping: CAUTILUS_TEST_SMOLLM_URL is not set (scripts/smollm2-server.sh setup; scripts/smollm2-server.sh start)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("capitals.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "chat", "suiteId": "capitals",
            "provider": "openai", "model": "smollm2-135m-instruct",
            "system": "Answer in one short sentence.",
            "cases": [
                {"caseId": "france", "messages": [{"role": "user", "content": "What is the capital of France?"}],
                 "expected": {"finalText": "Paris"}},
                {"caseId": "greeting", "messages": [{"role": "user", "content": "Say hello."}],
                 "expected": {"finalText": "ello"}}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let run = eval_run_with(
        &fixture,
        &["--provider", "openai", "--concurrency", "1"],
        |c| {
            c.env("OPENAI_BASE_URL", &url).env_remove("OPENAI_API_KEY");
        },
    );
    assert!(
        run.code == 0 || run.code == 1,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let summary = run.packet("eval-summary.json");
    for evaluation in summary["evaluations"].as_array().unwrap() {
        // A 135M model may answer anything; what it answered is judged, and
        // the run records who answered and what it cost in tokens.
        assert!(
            matches!(evaluation["status"].as_str(), Some("passed" | "failed")),
            "{evaluation}"
        );
        assert_eq!(evaluation["provider"], "openai");
        assert_eq!(evaluation["harness"], "openai-api");
        assert!(evaluation["model"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(evaluation["durationMs"].as_u64().is_some_and(|d| d > 0));
        assert!(
            evaluation["usage"]["outputTokens"]
                .as_u64()
                .is_some_and(|n| n > 0)
        );
        assert!(
            evaluation["observed"]["finalText"]
                .as_str()
                .is_some_and(|t| !t.trim().is_empty()),
            "{evaluation}"
        );
    }
}

/// The endpoint of the real model, or `None` (saying the test is skipped).
fn smollm() -> Option<String> {
    match std::env::var("CAUTILUS_TEST_SMOLLM_URL") {
        Ok(url) => Some(url),
        Err(_) => {
            eprintln!(
                "skipping: CAUTILUS_TEST_SMOLLM_URL is not set (scripts/smollm2-server.sh setup; scripts/smollm2-server.sh start)"
            );
            None
        }
    }
}

/// Runs `fixture` against the real model in `workspace` (its cassettes go
/// under `workspace/.cautilus`); `url: None` runs offline.
fn run_real(
    fixture: &std::path::Path,
    workspace: &std::path::Path,
    args: &[&str],
    url: Option<&str>,
) -> (i32, String, serde_json::Value, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let mut command = crate::support::cautilus();
    command
        .current_dir(workspace)
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .args(["--provider", "openai", "--concurrency", "1", "--output-dir"])
        .arg(out.path())
        .args(args)
        .env_remove("OPENAI_API_KEY");
    match url {
        Some(url) => command.env("OPENAI_BASE_URL", url),
        None => command.env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    };
    let (code, stdout, stderr) = crate::support::output(command.output().unwrap());
    let observed = crate::support::read_json(&out.path().join("eval-observed.json"));
    let summary = crate::support::read_json(&out.path().join("eval-summary.json"));
    (code, format!("{stdout}\n{stderr}"), observed, summary)
}

fn answers(observed: &serde_json::Value) -> Vec<String> {
    observed["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["observed"]["finalText"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// Settings reach the real model (a token budget it must keep, greedy
/// decoding that repeats itself), a judge served by the same model grades
/// an answer, and a cassette recorded against it replays offline.
#[test]
fn settings_a_judge_and_a_cassette_against_the_real_model() {
    let Some(url) = smollm() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("settings.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "chat", "suiteId": "real-settings",
            "provider": "openai", "model": "smollm2-135m-instruct",
            "settings": {"temperature": 0, "seed": 42, "maxTokens": 8},
            "judge": {"provider": "openai", "model": "smollm2-135m-instruct"},
            "cases": [
                {"caseId": "story", "messages": [{"role": "user", "content": "Tell me a long story about a cat."}],
                 "expected": {"finalText": "cat"}},
                {"caseId": "capital", "messages": [{"role": "user", "content": "What is the capital of France?"}],
                 "settings": {"maxTokens": 16},
                 "assertions": ["The answer names Paris."]}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let (code, out, first, summary) = run_real(
        &fixture,
        dir.path(),
        &["--replay", "record-new"],
        Some(&url),
    );
    assert!(code == 0 || code == 1, "{out}");
    assert!(
        !out.contains("does not apply"),
        "openai applies every setting: {out}"
    );
    for evaluation in first["evaluations"].as_array().unwrap() {
        let budget = if evaluation["caseId"] == "capital" {
            16
        } else {
            8
        };
        let used = evaluation["usage"]["outputTokens"].as_u64().unwrap();
        assert!(
            used > 0 && used <= budget,
            "maxTokens {budget}: {evaluation}"
        );
        // A local model: no cost is made up from OpenAI's price table.
        assert!(evaluation["costUsd"].is_null(), "{evaluation}");
    }
    // Greedy decoding with a seed: the same answers again, live.
    let (code, out, again, _) = run_real(&fixture, dir.path(), &["--replay", "live"], Some(&url));
    assert!(code == 0 || code == 1, "{out}");
    assert_eq!(
        answers(&again),
        answers(&first),
        "temperature 0 repeats itself"
    );
    // The judge's call went to the real model and came back as a verdict
    // or as an error that says why (a 135M model may not write JSON).
    let capital = summary["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["caseId"] == "capital")
        .unwrap();
    assert_eq!(capital["judgeUsage"]["calls"], 1, "{capital}");
    let judged = &capital["assertions"][0];
    assert!(
        matches!(
            judged["status"].as_str(),
            Some("passed" | "failed" | "errored")
        ),
        "{capital}"
    );
    if judged["status"] == "errored" {
        assert!(
            judged["detail"].as_str().is_some_and(|d| !d.is_empty()),
            "{capital}"
        );
    }
    // Offline, from the cassette: the recorded answers (and judge calls).
    let (code, out, replayed, _) =
        run_real(&fixture, dir.path(), &["--replay", "replay-strict"], None);
    assert!(code == 0 || code == 1, "{out}");
    assert_eq!(answers(&replayed), answers(&first));
    // Another setting is another request: not in the cassette.
    let text = std::fs::read_to_string(&fixture)
        .unwrap()
        .replace("\"maxTokens\":8", "\"maxTokens\":9");
    std::fs::write(&fixture, text).unwrap();
    let (code, out, _, _) = run_real(&fixture, dir.path(), &["--replay", "replay-strict"], None);
    assert_ne!(code, 0, "a changed setting must not replay: {out}");
}

/// Streamed answers of the real model (`CAUTILUS_OPENAI_STREAM`): read as
/// whole, and timed to their first token, which comes no later than the
/// whole answer.
#[test]
fn streamed_answers_of_the_real_model_are_timed_to_their_first_token() {
    let Some(url) = smollm() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("stream.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: chat
suiteId: stream
provider: openai
model: smollm2-135m-instruct
settings: { temperature: 0, maxTokens: 24 }
cases:
  - caseId: france
    messages: [{ role: user, content: What is the capital of France? }]
    expected: { finalText: Paris }
  - caseId: count
    messages: [{ role: user, content: Count from one to five. }]
    expected: { finalText: three }
",
    )
    .unwrap();
    for stream in ["0", "1"] {
        let out = tempfile::tempdir().unwrap();
        let mut command = crate::support::cautilus();
        command
            .current_dir(dir.path())
            .args(["eval", "test", "--fixture"])
            .arg(&fixture)
            .args(["--provider", "openai", "--concurrency", "2", "--output-dir"])
            .arg(out.path())
            .env_remove("OPENAI_API_KEY")
            .env("OPENAI_BASE_URL", &url)
            .env("CAUTILUS_OPENAI_STREAM", stream);
        let (code, stdout, stderr) = crate::support::output(command.output().unwrap());
        assert!(code == 0 || code == 1, "{stdout}\n{stderr}");
        let observed = crate::support::read_json(&out.path().join("eval-observed.json"));
        for evaluation in observed["evaluations"].as_array().unwrap() {
            assert!(
                evaluation["observed"]["finalText"]
                    .as_str()
                    .is_some_and(|t| !t.trim().is_empty()),
                "stream={stream}: {evaluation}"
            );
            let duration = evaluation["durationMs"].as_u64().unwrap();
            let first = evaluation["firstByteMs"].as_u64();
            assert!(
                first.is_some_and(|f| f <= duration),
                "stream={stream}: firstByteMs {first:?}, durationMs {duration}"
            );
            eprintln!(
                "stream={stream} {}: firstByteMs {} of durationMs {duration}",
                evaluation["caseId"],
                first.unwrap_or_default()
            );
        }
    }
}
