//! The messaging-mode CLI providers against the real coding-agent CLIs,
//! fully offline: `claude` (npm `@anthropic-ai/claude-code`) reads
//! `ANTHROPIC_BASE_URL` and streams the Messages API from a scripted
//! loopback server. A test whose CLI is not on PATH says so and passes;
//! `.ci/run` installs the CLIs.

use cautilus_tests::model_server::{
    ModelServer, Recorded, Reply, anthropic_stream, openai_responses_stream,
};
use serde_json::Value;

use crate::support::{all_text, codex_home, eval_run_with, repo};

/// The directory holding `program` on PATH, or `None` (the test then skips).
fn installed(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path).find(|dir| dir.join(program).is_file());
    if found.is_none() {
        eprintln!(
            "skipping: `{program}` is not on PATH (npm install -g @anthropic-ai/claude-code @openai/codex; .ci/run installs them)"
        );
    }
    found
}

const KEY: &str = "sk-ant-loopback-9090";

fn messages_api(request: &Recorded, _: usize) -> Reply {
    if request.method == "POST" && request.path.starts_with("/v1/messages") {
        anthropic_stream(
            "claude-sonnet-4-6",
            "Cautilus: write a fixture, then run cautilus eval test.",
        )
    } else {
        Reply::json(200, "{}")
    }
}

#[test]
fn claude_cli_answers_chat_cases_with_the_real_claude_binary() {
    if installed("claude").is_none() {
        return;
    }
    let server = ModelServer::start(messages_api);
    let home = tempfile::tempdir().unwrap();
    let fixture = repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml");
    let run = eval_run_with(&fixture, &["--provider", "claude-cli"], |c| {
        c.env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", KEY)
            .env("HOME", home.path());
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    let observed = run.packet("eval-observed.json");
    for evaluation in observed["evaluations"].as_array().unwrap() {
        assert_eq!(evaluation["provider"], "anthropic");
        assert_eq!(evaluation["harness"], "claude_code");
        assert_eq!(
            evaluation["model"], "claude-sonnet-4-6",
            "pinned, and the one that answered"
        );
        assert_eq!(evaluation["mode"], "messaging");
        assert!(evaluation["durationMs"].as_u64().is_some_and(|d| d > 0));
        assert!(evaluation["costUsd"].as_f64().is_some(), "{evaluation}");
        assert_eq!(
            evaluation["observed"]["finalText"],
            "Cautilus: write a fixture, then run cautilus eval test."
        );
    }

    // What Claude Code sent: the pinned model, the suite's system prompt,
    // and the multi-turn case rendered as a transcript.
    let sent: Vec<Value> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.starts_with("/v1/messages"))
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    assert!(sent.len() >= 2, "{} model calls", sent.len());
    assert!(sent.iter().all(|b| b["model"] == "claude-sonnet-4-6"));
    assert!(
        sent.iter()
            .all(|b| b["tools"].as_array().is_none_or(Vec::is_empty)),
        "no tools"
    );
    let bodies = serde_json::to_string(&sent).unwrap();
    assert!(
        bodies.contains("You are the Cautilus onboarding assistant"),
        "system prompt sent"
    );
    assert!(
        bodies.contains("[user — reply to this]\\nWhich command runs it?"),
        "{bodies}"
    );
    assert!(
        !all_text(run.dir.path()).contains(KEY),
        "no record holds the key"
    );
}

#[test]
fn claude_cli_not_logged_in_blocks_the_case_with_runner_auth_missing() {
    if installed("claude").is_none() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let fixture = repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml");
    let run = eval_run_with(&fixture, &["--provider", "claude-cli"], |c| {
        c.env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
            .env("HOME", home.path());
    });
    let summary = run.packet("eval-summary.json");
    let first = &summary["evaluations"][0];
    assert_eq!(first["status"], "blocked", "{first}");
    assert_eq!(first["blockerKind"], "runner_auth_missing");
    assert!(
        first["summary"].as_str().unwrap().contains("log in"),
        "{first}"
    );
}

#[test]
fn claude_cli_without_claude_on_path_is_refused_with_the_install_command() {
    let fixture = repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml");
    let empty = tempfile::tempdir().unwrap();
    let run = eval_run_with(&fixture, &["--provider", "claude-cli"], |c| {
        c.env("PATH", empty.path());
    });
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("`claude` is not on PATH"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("npm install -g @anthropic-ai/claude-code"),
        "{}",
        run.stderr
    );
}

#[test]
fn codex_cli_answers_chat_cases_with_the_real_codex_binary() {
    if installed("codex").is_none() {
        return;
    }
    let server = ModelServer::start(|request, _| {
        if request.method == "POST" && request.path.ends_with("/responses") {
            openai_responses_stream(
                "gpt-5-mini",
                "Cautilus: write a fixture, then run cautilus eval test.",
            )
        } else {
            Reply::json(200, r#"{"data": []}"#)
        }
    });
    let codex_home = codex_home(&server);
    let dir = tempfile::tempdir().unwrap();
    // The onboarding suite, pinned to a model the price table knows.
    let text =
        std::fs::read_to_string(repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml"))
            .unwrap()
            .replace("provider: anthropic", "provider: openai")
            .replace("model: claude-sonnet-4-6", "model: gpt-5-mini");
    let fixture = dir.path().join("onboarding.fixture.yaml");
    std::fs::write(&fixture, text).unwrap();
    // No key or base URL for the API provider: the fixture's `openai` falls
    // to `codex-cli` because `codex` is on PATH.
    // Codex talks to the loopback `model_provider` of its config, not to
    // OpenAI: the price table does not apply, prices configured for the
    // endpoint do (here gpt-5-mini's public ones).
    let run = eval_run_with(&fixture, &["--provider", "codex-cli"], |c| {
        c.env("CODEX_HOME", codex_home.path())
            .env("OPENAI_API_KEY", KEY)
            .env("HOME", dir.path())
            .env(
                "CAUTILUS_OPENAI_PRICES",
                r#"{"gpt-5-mini": {"input": 0.25, "cached_input": 0.025, "output": 2.0}}"#,
            );
    });
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let observed = run.packet("eval-observed.json");
    for evaluation in observed["evaluations"].as_array().unwrap() {
        assert_eq!(evaluation["provider"], "openai");
        assert_eq!(evaluation["harness"], "codex_exec");
        assert_eq!(evaluation["model"], "gpt-5-mini");
        let expected = (800.0 * 0.25 + 200.0 * 0.025 + 100.0 * 2.0) / 1e6;
        assert!(
            (evaluation["costUsd"].as_f64().unwrap() - expected).abs() < 1e-12,
            "{evaluation}"
        );
        assert_eq!(evaluation["costSource"], "configured");
        assert_eq!(evaluation["usage"]["inputTokens"], 1000);
    }
    let sent: Vec<Value> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/responses"))
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    assert!(sent.len() >= 2);
    assert!(
        sent.iter().all(|b| b["model"] == "gpt-5-mini"),
        "the pinned model"
    );
    let first_developer = |b: &Value| {
        b["input"][0]["content"][0]["text"]
            .as_str()
            .map(str::to_string)
    };
    assert!(
        sent.iter().all(|b| first_developer(b)
            .is_some_and(|t| t.starts_with("You are the Cautilus onboarding assistant"))),
        "the suite's system prompt replaces Codex's instructions"
    );
    assert!(
        !all_text(run.dir.path()).contains(KEY),
        "no record holds the key"
    );
}

#[test]
fn the_fixtures_openai_falls_to_codex_cli_and_unauthenticated_codex_blocks() {
    if installed("codex").is_none() {
        return;
    }
    let server = ModelServer::start(|_, _| {
        Reply::json(
            401,
            r#"{"error": {"message": "Missing bearer or basic authentication in header"}}"#,
        )
    });
    let codex_home = codex_home(&server);
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml"))
            .unwrap()
            .replace("provider: anthropic", "provider: openai");
    let fixture = dir.path().join("onboarding.fixture.yaml");
    std::fs::write(&fixture, text).unwrap();
    // No `--provider`: the fixture's `openai`, with no key and no base URL
    // set, is answered by `codex-cli` because `codex` is on PATH.
    let out = dir.path().join("run");
    let (_, _, stderr) = crate::support::output(
        crate::support::cautilus()
            .args(["eval", "test", "--fixture"])
            .arg(&fixture)
            .arg("--output-dir")
            .arg(&out)
            .env("CODEX_HOME", codex_home.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("HOME", dir.path())
            .output()
            .unwrap(),
    );
    let summary = crate::support::read_json(&out.join("eval-summary.json"));
    assert_eq!(
        summary["evaluations"][0]["harness"], "codex_exec",
        "{stderr}"
    );
    let first = &summary["evaluations"][0];
    assert_eq!(first["status"], "blocked", "{first}\n{stderr}");
    assert_eq!(first["blockerKind"], "runner_auth_missing");
}

#[test]
fn the_anthropic_api_and_claude_p_give_packets_that_meet_the_parity_rules() {
    if installed("claude").is_none() {
        return;
    }
    let server = ModelServer::start(|request, _| {
        if request.method == "POST" && request.path.starts_with("/v1/messages") {
            let streamed = serde_json::from_str::<Value>(&request.body)
                .ok()
                .and_then(|b| b["stream"].as_bool())
                .unwrap_or(false);
            if streamed {
                anthropic_stream("claude-sonnet-4-6", "Cautilus: run cautilus eval test.")
            } else {
                Reply::json(
                    200,
                    serde_json::json!({"model": "claude-sonnet-4-6",
                        "content": [{"type": "text", "text": "Cautilus: cautilus eval test"}],
                        "usage": {"input_tokens": 3, "output_tokens": 4}})
                    .to_string(),
                )
            }
        } else {
            Reply::json(200, "{}")
        }
    });
    let home = tempfile::tempdir().unwrap();
    let fixture = repo().join("fixtures/eval/app/chat/onboarding.fixture.yaml");
    let env = |c: &mut std::process::Command| {
        c.env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", KEY)
            .env("HOME", home.path());
    };
    let api = eval_run_with(&fixture, &["--provider", "anthropic"], env);
    let cli = eval_run_with(&fixture, &["--provider", "claude-cli"], env);
    assert_eq!(
        (api.code, cli.code),
        (0, 0),
        "{}\n{}",
        api.stderr,
        cli.stderr
    );
    let (code, stdout, stderr) = crate::support::output(
        crate::support::cautilus()
            .args(["eval", "compare", "--json"])
            .arg(api.dir.path())
            .arg(cli.dir.path())
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["a"]["harness"], "anthropic-api");
    assert_eq!(report["b"]["harness"], "claude_code");
    let differs = &report["cases"][0]["mayDiffer"];
    assert!(differs["costUsd"]["claude_code"].is_number(), "{report}");
}
