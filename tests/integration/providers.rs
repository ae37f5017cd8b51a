//! Model providers against a scripted loopback server: the `openai` and
//! `anthropic` API adapters (request shape, the key kept by the host,
//! usage and the answering model recorded, retries, errors that say what to
//! do) and the capability grants a user gives a provider with `--grant-*`.

use cautilus_tests::model_server::{ModelServer, Recorded, Reply};
use serde_json::{Value, json};

use crate::support::{all_text, component, eval_run_with, read_json, repo};

fn chat_fixture() -> std::path::PathBuf {
    repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml")
}

const KEY: &str = "sk-loopback-secret-4242";

fn body(request: &Recorded) -> Value {
    serde_json::from_str(&request.body).unwrap()
}

fn openai_answer(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "chatcmpl-1",
            "model": "loopback-model-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
        })
        .to_string(),
    )
}

#[test]
fn openai_answers_chat_cases_and_the_key_stays_with_the_host() {
    let server = ModelServer::start(|_, _| {
        openai_answer("Cautilus: write a fixture, then run cautilus eval test.")
    });
    let run = eval_run_with(&chat_fixture(), &["--provider", "openai"], |c| {
        c.env("OPENAI_BASE_URL", format!("{}/v1", server.url))
            .env("OPENAI_API_KEY", KEY);
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one call per case");
    for request in &requests {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/chat/completions")
        );
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    // The follow-up case (workers may send it first).
    let second = requests
        .iter()
        .map(body)
        .max_by_key(|b| b["messages"].as_array().map_or(0, Vec::len))
        .unwrap();
    assert_eq!(
        second["model"], "claude-sonnet-4-6",
        "the fixture's model is pinned"
    );
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user"],
        "the suite system first, then the turns"
    );

    let observed = run.packet("eval-observed.json");
    for evaluation in observed["evaluations"].as_array().unwrap() {
        assert_eq!(evaluation["provider"], "openai");
        assert_eq!(
            evaluation["model"], "loopback-model-1",
            "the model that answered"
        );
        assert_eq!(evaluation["harness"], "openai-api");
        assert_eq!(evaluation["mode"], "messaging");
        assert!(evaluation["durationMs"].as_u64().is_some());
        assert_eq!(
            evaluation["observed"]["finalText"],
            "Cautilus: write a fixture, then run cautilus eval test."
        );
    }
    assert!(
        !all_text(run.dir.path()).contains(KEY),
        "no record holds the key"
    );
}

#[test]
fn anthropic_sends_the_messages_api_shape_with_the_key_in_x_api_key() {
    let server = ModelServer::start(|_, _| {
        Reply::json(
            200,
            json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "model": "claude-loopback-20250101",
                "content": [{"type": "text", "text": "Cautilus: run cautilus eval test."}],
                "usage": {"input_tokens": 30, "output_tokens": 8}
            })
            .to_string(),
        )
    });
    let run = eval_run_with(&chat_fixture(), &["--provider", "anthropic"], |c| {
        c.env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", KEY);
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some(KEY));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.header("authorization"), None);
    let sent = body(first);
    assert!(
        sent["system"]
            .as_str()
            .unwrap()
            .starts_with("You are the Cautilus onboarding assistant")
    );
    assert_eq!(sent["max_tokens"], 1024);
    assert!(
        sent["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["role"] != "system")
    );
    let observed = run.packet("eval-observed.json");
    let evaluation = &observed["evaluations"][0];
    assert_eq!(evaluation["model"], "claude-loopback-20250101");
    assert_eq!(evaluation["harness"], "anthropic-api");
    assert!(
        !all_text(run.dir.path()).contains(KEY),
        "no record holds the key"
    );
}

#[test]
fn a_rate_limited_call_is_retried_as_retry_after_says() {
    let server = ModelServer::start(|_, index| {
        if index == 0 {
            Reply::json(429, r#"{"error": {"message": "slow down"}}"#)
                .with_header("retry-after", "0")
        } else {
            openai_answer("Cautilus: cautilus eval test")
        }
    });
    let run = eval_run_with(
        &chat_fixture(),
        &["--provider", "openai", "--concurrency", "1"],
        |c| {
            c.env("OPENAI_BASE_URL", &server.url)
                .env_remove("OPENAI_API_KEY");
        },
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        server.requests().len(),
        3,
        "the limited call once more, then the other case"
    );
    assert_eq!(
        server.requests()[0].header("authorization"),
        None,
        "no key set, none sent"
    );
    let summary = run.packet("eval-summary.json");
    assert_eq!(
        summary["evaluations"][0]["retries"], 1,
        "the retry is recorded"
    );
    assert!(
        summary["evaluations"][1].get("retries").is_none(),
        "{summary}"
    );
}

#[test]
fn a_rejected_key_is_a_case_error_that_names_the_variable() {
    let server = ModelServer::start(|_, _| {
        Reply::json(
            401,
            r#"{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}"#,
        )
    });
    let run = eval_run_with(&chat_fixture(), &["--provider", "anthropic"], |c| {
        c.env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "wrong");
    });
    assert_ne!(run.code, 0);
    assert_eq!(server.requests().len(), 2, "a 401 is not retried");
    let summary = run.packet("eval-summary.json").to_string();
    assert!(summary.contains("HTTP 401"), "{summary}");
    assert!(summary.contains("invalid x-api-key"), "{summary}");
    assert!(summary.contains("check ANTHROPIC_API_KEY"), "{summary}");
}

#[test]
fn anthropic_without_a_key_is_refused_before_anything_runs() {
    let run = eval_run_with(&chat_fixture(), &["--provider", "anthropic"], |c| {
        c.env_remove("ANTHROPIC_API_KEY");
    });
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("provider `anthropic`: set ANTHROPIC_API_KEY"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--provider fixture"), "{}", run.stderr);
}

/// The probe provider fetches the URL of each case's canned result.
fn probe_run(grants: &[&str]) -> (crate::support::EvalRun, ModelServer) {
    let server = ModelServer::start(|_, _| Reply::json(200, "\"Cautilus: cautilus eval test\""));
    let dir = tempfile::tempdir().unwrap();
    let canned = dir.path().join("canned.json");
    let url = json!({ "url": format!("{}/probe", server.url) });
    std::fs::write(
        &canned,
        json!({ "first-touch-greeting": url, "follow-up-fixture-command": url }).to_string(),
    )
    .unwrap();
    let probe = component("provider-probe");
    let mut args = vec![
        "--provider",
        probe.as_str(),
        "--fixture-results",
        canned.to_str().unwrap(),
    ];
    args.extend_from_slice(grants);
    let run = eval_run_with(&chat_fixture(), &args, |c| {
        c.env("PROBE_TOKEN", "probe-secret-77");
    });
    drop(dir);
    (run, server)
}

#[test]
fn a_user_provider_reaches_a_host_only_when_the_run_grants_it() {
    let (denied, server) = probe_run(&[]);
    assert!(server.requests().is_empty(), "nothing left the host");
    let summary = denied.packet("eval-summary.json").to_string();
    assert!(
        summary.contains("this run does not grant http access to `127.0.0.1`"),
        "{summary}"
    );

    // The probe sends secret `token` in `authorization`: a host alone is not enough.
    let (no_secret, server) = probe_run(&["--grant-http", "127.0.0.1"]);
    assert!(server.requests().is_empty(), "nothing left the host");
    let summary = no_secret.packet("eval-summary.json").to_string();
    assert!(
        summary.contains("this run grants no secret named `token`"),
        "{summary}"
    );

    let (allowed, server) = probe_run(&[
        "--grant-http",
        "127.0.0.1",
        "--grant-secret",
        "token=PROBE_TOKEN",
    ]);
    assert_eq!(allowed.code, 0, "{}\n{}", allowed.stdout, allowed.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].header("authorization"), Some("probe-secret-77"));
    assert!(
        !all_text(allowed.dir.path()).contains("probe-secret-77"),
        "no record holds the secret"
    );
}

#[test]
fn run_json_keeps_the_grants_for_a_resume() {
    let (run, _server) = probe_run(&[
        "--grant-http",
        "127.0.0.1",
        "--grant-secret",
        "token=PROBE_TOKEN",
    ]);
    let state = read_json(&run.dir.path().join("run.json"));
    assert_eq!(
        state["options"]["grants"]["httpHosts"],
        json!(["127.0.0.1"])
    );
    assert_eq!(
        state["options"]["grants"]["secrets"],
        json!({"token": "PROBE_TOKEN"})
    );
}

#[test]
fn a_judge_served_by_the_openai_provider_reaches_its_endpoint() {
    let server = ModelServer::start(|_, _| {
        openai_answer(r#"{"passed": true, "score": 1.0, "reasoning": "names the command"}"#)
    });
    let dir = tempfile::tempdir().unwrap();
    let fixture = crate::support::judged_fixture(dir.path());
    let run = eval_run_with(&fixture, &[], |c| {
        c.env("OPENAI_BASE_URL", &server.url)
            .env("OPENAI_API_KEY", KEY);
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "one judge call");
    assert_eq!(body(&requests[0])["model"], "judge-model");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(!all_text(run.dir.path()).contains(KEY));
}

/// `cautilus eval compare a b [--json]`: (exit code, stdout).
fn compare(a: &std::path::Path, b: &std::path::Path, json: bool) -> (i32, String) {
    let mut command = crate::support::cautilus();
    command.args(["eval", "compare"]).arg(a).arg(b);
    if json {
        command.arg("--json");
    }
    let (code, stdout, stderr) = crate::support::output(command.output().unwrap());
    (code, format!("{stdout}{stderr}"))
}

#[test]
fn eval_compare_checks_two_harnesses_against_the_cross_runtime_rules() {
    let server = ModelServer::start(|_, _| {
        Reply::json(
            200,
            json!({"model": "claude-loopback", "content": [{"type": "text", "text": "Cautilus: cautilus eval test"}],
                   "usage": {"input_tokens": 3, "output_tokens": 4}})
            .to_string(),
        )
    });
    let api = eval_run_with(&chat_fixture(), &["--provider", "anthropic"], |c| {
        c.env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", KEY);
    });
    let canned = eval_run_with(&chat_fixture(), &["--provider", "fixture"], |_| {});
    assert_eq!((api.code, canned.code), (0, 0));

    let (code, text) = compare(api.dir.path(), canned.dir.path(), false);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("the cross-runtime rules hold"), "{text}");
    let (code, report) = compare(api.dir.path(), canned.dir.path(), true);
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["schemaVersion"], "cautilus.run_comparison.v1");
    let differs = &report["cases"][0]["mayDiffer"]["observed.finalText"];
    assert!(
        differs["anthropic-api"].is_string() && differs["fixture-backend"].is_string(),
        "{report}"
    );

    // A run that lost a MUST field breaks the rules (exit 1), naming it.
    let broken = api.dir.path().join("eval-observed.json");
    let mut packet = read_json(&broken);
    packet["evaluations"][0]["observed"]
        .as_object_mut()
        .unwrap()
        .remove("finalText");
    std::fs::write(&broken, packet.to_string()).unwrap();
    let (code, text) = compare(api.dir.path(), canned.dir.path(), false);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("the first run (anthropic-api) lacks `observed.finalText`"),
        "{text}"
    );
    let (code, text) = compare(
        api.dir.path(),
        std::path::Path::new("/nonexistent-run"),
        false,
    );
    assert_eq!(code, 2, "{text}");
}

#[test]
fn plugin_inspect_shows_what_a_provider_requests_and_what_it_would_be_granted() {
    let inspect = |id: &str, env: &[(&str, &str)]| {
        let mut command = crate::support::cautilus();
        command
            .args(["plugin", "inspect", id, "--json"])
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY");
        for (k, v) in env {
            command.env(k, v);
        }
        let (code, stdout, stderr) = crate::support::output(command.output().unwrap());
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    let openai = inspect(
        "openai",
        &[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("OPENAI_API_KEY", KEY),
        ],
    );
    assert_eq!(openai["capabilities"], json!(["http(*)"]));
    assert_eq!(openai["granted"]["httpHosts"], json!(["127.0.0.1"]));
    assert_eq!(openai["granted"]["secrets"], json!(["OPENAI_API_KEY"]));
    assert!(
        !openai.to_string().contains(KEY),
        "names only, never the key"
    );
    let anthropic = inspect("anthropic", &[]);
    assert!(
        anthropic["granted"]["unavailable"]
            .as_str()
            .is_some_and(|w| w.contains("set ANTHROPIC_API_KEY")),
        "{anthropic}"
    );
}

#[test]
fn a_key_the_server_echoes_back_is_redacted_before_it_is_recorded() {
    let server = ModelServer::start(|_, index| {
        if index == 0 {
            Reply::json(
                401,
                format!(r#"{{"error": {{"message": "bad key {KEY}"}}}}"#),
            )
        } else {
            openai_answer(&format!("Cautilus here; you sent {KEY}"))
        }
    });
    let run = eval_run_with(
        &chat_fixture(),
        &["--provider", "openai", "--concurrency", "1"],
        |c| {
            c.env("OPENAI_BASE_URL", &server.url)
                .env("OPENAI_API_KEY", KEY);
        },
    );
    let records = all_text(run.dir.path());
    assert!(!records.contains(KEY), "an echoed key is never recorded");
    assert!(records.contains("bad key [redacted]"), "{records}");
    assert!(records.contains("you sent [redacted]"), "{records}");
}

/// The case records of a chat run against a loopback OpenAI-compatible
/// server that answers as `model`, with `config` as the project's
/// `cautilus.toml`.
fn priced_run(model: &'static str, config: &str) -> Vec<Value> {
    let server = ModelServer::start(move |_, _| {
        let mut reply = openai_answer("Cautilus: write a fixture, then run cautilus eval test.");
        reply.body = reply.body.replace("loopback-model-1", model);
        reply
    });
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("cautilus.toml"), config).unwrap();
    let fixture = project.path().join("chat.fixture.yaml");
    std::fs::copy(chat_fixture(), &fixture).unwrap();
    let out = project.path().join("out");
    let run = crate::support::cautilus()
        .current_dir(project.path())
        .args([
            "eval",
            "test",
            "--fixture",
            "chat.fixture.yaml",
            "--provider",
            "openai",
        ])
        .arg("--output-dir")
        .arg(&out)
        .env("OPENAI_BASE_URL", &server.url)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("CAUTILUS_OPENAI_PRICES")
        .output()
        .unwrap();
    let (code, stdout, stderr) = crate::support::output(run);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let observed: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("eval-observed.json")).unwrap())
            .unwrap();
    observed["evaluations"].as_array().unwrap().clone()
}

#[test]
fn a_local_server_answering_as_a_priced_model_gets_no_made_up_cost() {
    // llama.cpp echoes the requested model name: `gpt-4o-mini` from a
    // loopback server is not an OpenAI call, and the price table says nothing of it.
    for model in ["gpt-4o-mini", "gpt-5-mini", "loopback-model-1"] {
        for evaluation in priced_run(model, "") {
            assert_eq!(evaluation["model"], model);
            assert!(evaluation["costUsd"].is_null(), "{evaluation}");
            assert!(evaluation["costSource"].is_null(), "{evaluation}");
            assert_eq!(
                evaluation["usage"]["inputTokens"], 20,
                "tokens are still recorded"
            );
        }
    }
    // Prices configured for the endpoint price its models, and only those.
    let config = "[providers.openai.prices]\n\"gpt-4o-mini\" = { input = 1.0, output = 4.0 }\nsmollm2 = { input = 0.0, output = 0.0 }\n";
    for evaluation in priced_run("gpt-4o-mini", config) {
        let expected = (20.0 * 1.0 + 5.0 * 4.0) / 1e6;
        assert!(
            (evaluation["costUsd"].as_f64().unwrap() - expected).abs() < 1e-15,
            "{evaluation}"
        );
        assert_eq!(evaluation["costSource"], "configured");
    }
    for evaluation in priced_run("other-model", config) {
        assert!(evaluation["costUsd"].is_null(), "{evaluation}");
    }
}

#[test]
fn configured_prices_are_checked_before_anything_runs() {
    let project = tempfile::tempdir().unwrap();
    for (config, says) in [
        (
            "[providers.openai.prices]\nm = { input = -1.0, output = 0.0 }\n",
            "`providers.openai.prices`: `m.input` must be a price in USD per million tokens",
        ),
        (
            "[providers.openai.prices]\nm = { input = 1.0 }\n",
            "missing field `output`",
        ),
        (
            "[providers.openai.prices]\nm = { input = 1.0, output = 1.0, cachedInput = 1.0 }\n",
            "unknown field `cachedInput`",
        ),
    ] {
        std::fs::write(project.path().join("cautilus.toml"), config).unwrap();
        std::fs::copy(chat_fixture(), project.path().join("chat.fixture.yaml")).unwrap();
        let run = crate::support::cautilus()
            .current_dir(project.path())
            .args([
                "eval",
                "test",
                "--fixture",
                "chat.fixture.yaml",
                "--provider",
                "openai",
            ])
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            .output()
            .unwrap();
        let (code, stdout, stderr) = crate::support::output(run);
        assert_eq!(code, 2, "{config}: {stdout}{stderr}");
        assert!(stderr.contains(says), "{config}: {stderr}");
    }
}

#[test]
fn a_judges_cost_counts_toward_the_case_cost() {
    let server = ModelServer::start(|_, _| {
        let mut reply =
            openai_answer(r#"{"passed": true, "score": 1.0, "reasoning": "names the command"}"#);
        // The judge model answers as a priced one.
        reply.body = reply.body.replace("loopback-model-1", "gpt-5-mini");
        reply
    });
    let dir = tempfile::tempdir().unwrap();
    let fixture = crate::support::judged_fixture(dir.path());
    let text = std::fs::read_to_string(&fixture)
        .unwrap()
        .replace("judge-model", "gpt-5-mini");
    std::fs::write(&fixture, text).unwrap();
    // The loopback server is not OpenAI: its calls are priced only from
    // prices configured for it (here gpt-5-mini's public ones).
    let run = eval_run_with(&fixture, &[], |c| {
        c.env("OPENAI_BASE_URL", &server.url)
            .env("OPENAI_API_KEY", KEY)
            .env(
                "CAUTILUS_OPENAI_PRICES",
                r#"{"gpt-5-mini": {"input": 0.25, "output": 2.0}}"#,
            );
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let summary = run.packet("eval-summary.json");
    let case = &summary["evaluations"][0];
    // 20 input and 5 output tokens at gpt-5-mini's $0.25 / $2 per million.
    let judged = (20.0 * 0.25 + 5.0 * 2.0) / 1e6;
    assert_eq!(case["judgeUsage"]["calls"], 1, "{case}");
    assert_eq!(case["judgeUsage"]["inputTokens"], 20);
    assert!(
        (case["judgeUsage"]["costUsd"].as_f64().unwrap() - judged).abs() < 1e-12,
        "{case}"
    );
    assert!(
        (case["costUsd"].as_f64().unwrap() - judged).abs() < 1e-12,
        "the case's cost includes its judge's: {case}"
    );
    assert!((case["assertions"][0]["costUsd"].as_f64().unwrap() - judged).abs() < 1e-12);
}

#[test]
fn a_judge_whose_provider_gives_no_embeddings_is_refused_naming_it() {
    // `anthropic` is built with the SDK and gives none; provider-v010 is
    // built against 0.1.0, before providers could give any.
    for (judge, named) in [
        ("anthropic", "anthropic"),
        ("./provider-v010.wasm", "test-provider-v010"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            component("provider-v010"),
            dir.path().join("provider-v010.wasm"),
        )
        .unwrap();
        let fixture = dir.path().join("embedded.fixture.json");
        std::fs::write(
            &fixture,
            json!({
                "schemaVersion": "cautilus.evaluation_input.v1",
                "surface": "app", "preset": "prompt", "suiteId": "embedded",
                "provider": "fixture", "model": "canned",
                "judge": {"provider": judge, "model": "m"},
                "assertions": [{"type": "embedding-similarity", "value": "cautilus eval test"}],
                "cases": [{"caseId": "c1", "input": "Which command runs a fixture?"}]
            })
            .to_string(),
        )
        .unwrap();
        let run = eval_run_with(&fixture, &[], |c| {
            c.env("ANTHROPIC_API_KEY", KEY)
                .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9");
        });
        let says = format!("the judge provider `{named}` does not provide embeddings");
        let detail = run.packet("eval-summary.json")["evaluations"][0]["assertions"][0].clone();
        assert!(
            detail.to_string().contains(&says),
            "{judge}: {detail}\n{}{}",
            run.stdout,
            run.stderr
        );
        assert!(!detail.to_string().contains("openai"), "{detail}");
        assert!(!all_text(run.dir.path()).contains(KEY));
    }
}

#[test]
fn embeddings_go_to_the_judges_openai_endpoint_and_replay_from_the_cassette() {
    let server = ModelServer::start(|request, _| {
        assert_eq!(request.path, "/v1/embeddings");
        Reply::json(
            200,
            json!({
                "model": "text-embedding-3-small",
                "data": [{"index": 1, "embedding": [0.6, 0.8]}, {"index": 0, "embedding": [1.0, 0.0]}],
                "usage": {"prompt_tokens": 9, "total_tokens": 9}
            })
            .to_string(),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("embedded.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "embedded",
            "provider": "fixture", "model": "canned",
            "judge": {"provider": "openai", "model": "gpt-5-mini"},
            "assertions": [{"type": "embedding-similarity", "model": "text-embedding-3-small", "threshold": 0.5}],
            "cases": [{"caseId": "c1", "input": "Which command runs a fixture?",
                       "expected": {"finalText": "cautilus eval test"}}]
        })
        .to_string(),
    )
    .unwrap();
    let run = |args: &[&str], url: &str| {
        let mut command = crate::support::cautilus();
        command
            .args(["eval", "test", "--fixture"])
            .arg(&fixture)
            .arg("--workspace")
            .arg(dir.path())
            .args(["--provider", "fixture"])
            .args(args)
            .env("OPENAI_BASE_URL", url)
            .env("OPENAI_API_KEY", KEY);
        let out = dir.path().join(format!("out-{}", args.len()));
        command.arg("--output-dir").arg(&out);
        let (code, stdout, stderr) = crate::support::output(command.output().unwrap());
        (code, stdout, stderr, out)
    };
    let (code, stdout, stderr, out) =
        run(&["--replay", "record-new"], &format!("{}/v1", server.url));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        1,
        "one embeddings call for the answer and the reference"
    );
    let sent = body(&requests[0]);
    assert_eq!(sent["model"], "text-embedding-3-small");
    assert_eq!(sent["input"][1], "cautilus eval test");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let summary = crate::support::read_json(&out.join("eval-summary.json"));
    let scored = &summary["evaluations"][0]["assertions"][0];
    // cos([1, 0], [0.6, 0.8]) = 0.6 (the vectors come back out of order).
    assert!(
        (scored["score"].as_f64().unwrap() - 0.6).abs() < 1e-6,
        "{scored}"
    );
    assert_eq!(summary["evaluations"][0]["judgeUsage"]["inputTokens"], 9);
    assert!(!all_text(dir.path()).contains(KEY));
    // Recorded by the host under the key it always had (the `openai`
    // provider's `provider-embed` export answers it now), so cassettes
    // recorded before still replay.
    let cassettes = dir.path().join(".cautilus/cassettes");
    let cassette = std::fs::read_dir(&cassettes)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a cassette");
    let entries = read_json(&cassette)["entries"].clone();
    let embed = &entries["2ede4149526a9279971d9757f9c7ef59a57cc46555938ed1a4becc5a1ee05cb2"];
    assert_eq!(embed["request"]["kind"], "embed", "{entries}");
    assert_eq!(embed["request"]["adapter"], "openai");
    assert_eq!(embed["request"]["settings"], json!({"purpose": "embed"}));
    assert_eq!(embed["observation"]["usage"]["inputTokens"], 9, "{embed}");

    // Replayed from the cassette with no endpoint at all.
    let (code, stdout, stderr, out) = run(
        &["--replay", "replay-strict", "--jobs", "1"],
        "http://127.0.0.1:9/v1",
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary = crate::support::read_json(&out.join("eval-summary.json"));
    assert!(
        (summary["evaluations"][0]["assertions"][0]["score"]
            .as_f64()
            .unwrap()
            - 0.6)
            .abs()
            < 1e-6
    );
    assert_eq!(server.requests().len(), 1);
}
