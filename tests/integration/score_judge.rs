//! `cautilus score` with a judge: `--judge PROVIDER/MODEL` or the project's
//! `[judge]`, granted only to a scorer that requests `model`, its calls
//! recorded in and replayed from a cassette (`--replay`, `--cassette`),
//! against a scripted loopback OpenAI-compatible server.

use cautilus_tests::model_server::{ModelServer, Recorded, Reply};
use serde_json::{Value, json};

use crate::support::{cautilus, component, output};

const KEY: &str = "sk-score-judge-7373";
const CRITERIA: &str = r#"{"criteria": "names the eval command"}"#;

/// A Chat Completions judge: passes an answer that mentions `eval test`,
/// and quotes the request's `authorization` header in its reasoning (so a
/// key that reached the output or the cassette would show).
fn judge_server() -> ModelServer {
    ModelServer::start(|request: &Recorded, _| {
        let body: Value = serde_json::from_str(&request.body).unwrap_or_default();
        let passed = body.to_string().contains("eval test");
        let auth = request.header("authorization").unwrap_or("none");
        let verdict = json!({"passed": passed, "score": if passed { 1.0 } else { 0.0 },
                             "reasoning": format!("verdict given to {auth}")});
        Reply::json(
            200,
            json!({"model": body["model"], "choices": [{"message": {"role": "assistant",
                       "content": verdict.to_string()}}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
            .to_string(),
        )
    })
}

/// `cautilus score` in `cwd` with `args`; the environment holds no key or
/// endpoint unless `env` sets one.
fn score(cwd: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = cautilus();
    command
        .current_dir(cwd)
        .arg("score")
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL");
    for (name, value) in env {
        command.env(name, value);
    }
    output(command.output().expect("run cautilus score"))
}

fn judged(output: &str, extra: &[&'static str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--scorer", "judge", "--config", CRITERIA, "--output", output,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn the_judge_flag_scores_by_the_servers_verdict_and_keeps_the_key_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = judge_server();
    let env = [
        ("OPENAI_BASE_URL", server.url.as_str()),
        ("OPENAI_API_KEY", KEY),
    ];
    let args = judged(
        "Run cautilus eval test.",
        &["--judge", "openai/judge-model", "--json"],
    );
    let (code, stdout, stderr) = score(dir.path(), &strs(&args), &env);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["passed"], true, "{report}");
    assert_eq!(report["judge"]["model"], "judge-model", "{report}");
    assert_eq!(report["judge"]["calls"], 1, "{report}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    // The key went to the server, and nowhere else.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{stdout}{stderr}"
    );

    let args = judged("Run it somehow.", &["--judge", "openai:judge-model"]);
    let (code, stdout, stderr) = score(dir.path(), &strs(&args), &env);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.starts_with("FAIL judge"), "{stdout}");
    assert!(
        stdout.contains("judge: openai/judge-model (1 call(s))"),
        "{stdout}"
    );
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{stdout}{stderr}"
    );
}

#[test]
fn without_a_judge_the_error_says_how_to_give_one() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = score(dir.path(), &strs(&judged("x", &[])), &[]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("calls a judge model")
            && stderr.contains("--judge PROVIDER/MODEL")
            && stderr.contains("[judge]"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");
}

#[test]
fn the_projects_judge_is_used_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let server = judge_server();
    std::fs::write(
        dir.path().join("cautilus.toml"),
        format!(
            "[judge]\nprovider = \"openai\"\nmodel = \"config-model\"\n\n[providers.openai]\nbase_url = \"{}\"\n",
            server.url
        ),
    )
    .unwrap();
    let sub = dir.path().join("answers");
    std::fs::create_dir(&sub).unwrap();
    let args = judged("cautilus eval test", &["--json"]);
    let (code, stdout, stderr) = score(&sub, &strs(&args), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{stdout}{stderr}");
    let body: Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(body["model"], "config-model");
    // The flag wins over the config.
    let args = judged("cautilus eval test", &["--judge", "openai/flag-model"]);
    let (code, stdout, stderr) = score(&sub, &strs(&args), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let body: Value = serde_json::from_str(&server.requests()[1].body).unwrap();
    assert_eq!(body["model"], "flag-model");
}

#[test]
fn a_recorded_judge_replays_offline_with_the_same_score() {
    let dir = tempfile::tempdir().unwrap();
    let recorded_args = judged(
        "Use cautilus eval test.",
        &[
            "--judge",
            "openai/judge-model",
            "--json",
            "--replay",
            "record-new",
            "--cassette",
            "rubric",
        ],
    );
    let recorded = {
        let server = judge_server();
        let env = [
            ("OPENAI_BASE_URL", server.url.as_str()),
            ("OPENAI_API_KEY", KEY),
        ];
        let (code, stdout, stderr) = score(dir.path(), &strs(&recorded_args), &env);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_eq!(server.requests().len(), 1);
        stdout
    };
    let cassette = dir.path().join(".cautilus/cassettes/rubric.json");
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(text.contains(r#""kind": "model""#), "{text}");
    assert!(!text.contains(KEY), "the key reached the cassette: {text}");
    assert!(!recorded.contains(KEY), "{recorded}");
    // The server is gone, and so are the endpoint and the key.
    let replay_args = judged(
        "Use cautilus eval test.",
        &[
            "--judge",
            "openai/judge-model",
            "--json",
            "--replay",
            "replay-strict",
            "--cassette",
            "rubric",
        ],
    );
    let (code, replayed, stderr) = score(dir.path(), &strs(&replay_args), &[]);
    assert_eq!(code, 0, "{replayed}{stderr}");
    let (a, b): (Value, Value) = (
        serde_json::from_str(&recorded).unwrap(),
        serde_json::from_str(&replayed).unwrap(),
    );
    for field in ["passed", "value", "detail", "label"] {
        assert_eq!(a[field], b[field], "{field}: {a} vs {b}");
    }
    assert!(
        b["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("[redacted]"),
        "{b}"
    );
    // Another answer is a miss: replay-strict calls nothing and says so.
    let other = judged(
        "Something else.",
        &[
            "--judge",
            "openai/judge-model",
            "--replay",
            "replay-strict",
            "--cassette",
            "rubric",
        ],
    );
    let (code, stdout, stderr) = score(dir.path(), &strs(&other), &[]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("no recorded answer"),
        "{stdout}{stderr}"
    );
}

#[test]
fn a_scorer_that_did_not_request_model_is_not_granted_the_judge() {
    let dir = tempfile::tempdir().unwrap();
    let server = judge_server();
    let env = [
        ("OPENAI_BASE_URL", server.url.as_str()),
        ("OPENAI_API_KEY", KEY),
    ];
    let hostile = component("hostile");
    let (code, stdout, stderr) = score(
        dir.path(),
        &[
            "--scorer",
            &hostile,
            "--output",
            "ask-model",
            "--judge",
            "openai/judge-model",
        ],
        &env,
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("did not request `model`"), "{stdout}");
    assert!(server.requests().is_empty(), "the judge was called");
}

#[test]
fn an_unknown_judge_provider_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let args = judged("x", &["--judge", "no-such-provider/m"]);
    let (code, stdout, stderr) = score(dir.path(), &strs(&args), &[]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("no-such-provider"), "{stderr}");
    let args = judged("x", &["--judge", "no-model"]);
    let (code, _, stderr) = score(dir.path(), &strs(&args), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("PROVIDER/MODEL"), "{stderr}");
}
