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
