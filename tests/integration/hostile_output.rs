//! Hostile output, through the binary:
//!
//! - a key granted to a provider or a judge and echoed back by it (in the
//!   answering `model`, as `Bearer <key>` in any case, in an error body, a
//!   tool call, the harness, the cost source, …) reaches no record, no
//!   cassette, no report and neither stdout nor stderr;
//! - fixture text carrying terminal control sequences (an OSC window
//!   title, erase-line, carriage returns, newlines, C1 controls, bidi
//!   overrides) in suite and case ids, display names, models, assertion
//!   names and answers is printed escaped by `eval validate`, `eval test`,
//!   `eval list`, `report` and in errors: no raw control reaches the
//!   terminal and no line can be forged.

use std::path::{Path, PathBuf};

use cautilus_tests::model_server::{ModelServer, Reply};
use serde_json::{Value, json};

use crate::support::{all_text, cautilus, output, validate_and_test};

const KEY: &str = "sk-echo-Secret-4242";

/// Every shape in which a key comes back: as it is, behind `Bearer` in any
/// case, inside JSON text, as a key of an object, in another letter case.
fn echoes() -> Vec<String> {
    vec![
        KEY.to_string(),
        format!("Bearer {KEY}"),
        format!("BEARER {KEY}"),
        format!("authorization: bearer {KEY}"),
        format!("x{KEY}x"),
        KEY.to_ascii_uppercase(),
        KEY.to_ascii_lowercase(),
        format!("{{\"api_key\": \"{KEY}\"}}"),
    ]
}

/// The forms of the key that must be in no output.
fn leaked(text: &str) -> Option<&'static str> {
    let lower = text.to_ascii_lowercase();
    lower
        .contains(&KEY.to_ascii_lowercase())
        .then_some("the key (in some letter case)")
}

fn assert_clean(what: &str, text: &str) {
    if let Some(form) = leaked(text) {
        panic!("{what} holds {form}:\n{text}");
    }
}

/// `eval test` in `workspace` with records in `<workspace>/run`.
fn eval_test(
    workspace: &Path,
    fixture: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(workspace)
        .arg("--output-dir")
        .arg(workspace.join("run"))
        .arg("--html")
        .arg(workspace.join("report.html"))
        .arg("--junit")
        .arg(workspace.join("report.xml"))
        .arg("--markdown")
        .arg(workspace.join("report.md"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    for (k, v) in env {
        command.env(k, v);
    }
    output(command.output().unwrap())
}

/// `cautilus report <format> <run>` to stdout, checked clean.
fn assert_reports_clean(run: &Path) {
    for format in ["html", "junit", "markdown"] {
        let (code, stdout, stderr) = output(
            cautilus()
                .args(["report", format])
                .arg(run)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "report {format}: {stderr}");
        assert_clean(&format!("report {format} (stdout)"), &stdout);
        assert_clean(&format!("report {format} (stderr)"), &stderr);
    }
}

#[test]
fn a_key_a_provider_echoes_in_any_field_reaches_no_record_report_or_output() {
    let workspace = tempfile::tempdir().unwrap();
    let echoes = echoes();
    let cases: Vec<Value> = (0..echoes.len())
        .map(|i| json!({"caseId": format!("c{i}"), "input": "hi", "expected": {"finalText": "not in the answer"}}))
        .collect();
    let fixture = workspace.path().join("echo.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "echo",
            "provider": "fixture", "model": "canned", "cases": cases,
        })
        .to_string(),
    )
    .unwrap();
    // Each case's answer echoes the key in every field the provider fills.
    let canned: serde_json::Map<String, Value> = echoes
        .iter()
        .enumerate()
        .map(|(i, echo)| {
            (
                format!("c{i}"),
                json!({
                    "finalText": format!("answer {echo}"),
                    "messages": [{"role": "assistant", "content": format!("said {echo}")}],
                    "model": echo,
                    "provider": format!("provider {echo}"),
                    "harness": format!("harness {echo}"),
                    "costUsd": 0.5,
                    "costSource": format!("reported by {echo}"),
                    "usage": {"inputTokens": 1, "outputTokens": 2},
                    "toolCalls": [{
                        "name": format!("tool {echo}"),
                        "arguments": {echo.clone(): echo, "header": format!("Bearer {KEY}")},
                        "output": format!("out {echo}"),
                    }],
                }),
            )
        })
        .collect();
    let results = workspace.path().join("canned.json");
    std::fs::write(&results, Value::Object(canned).to_string()).unwrap();
    for extra in [&[][..], &["--json"][..]] {
        let mut args = vec![
            "--provider",
            "fixture",
            "--fixture-results",
            results.to_str().unwrap(),
            "--grant-secret",
            "token=ECHO_KEY",
            "--replay",
            "record-new",
        ];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) =
            eval_test(workspace.path(), &fixture, &args, &[("ECHO_KEY", KEY)]);
        assert_eq!(code, 1, "the cases fail: {stdout}\n{stderr}");
        assert_clean("stdout", &stdout);
        assert_clean("stderr", &stderr);
        let written = all_text(workspace.path());
        assert!(
            written.contains("[redacted]"),
            "the echoes are redacted, not dropped"
        );
        // The canned answers hold the key by design; what the run wrote
        // must not.
        let mut checked = String::new();
        for name in ["run", ".cautilus"] {
            checked.push_str(&all_text(&workspace.path().join(name)));
        }
        for name in ["report.html", "report.xml", "report.md"] {
            checked.push_str(&std::fs::read_to_string(workspace.path().join(name)).unwrap());
        }
        assert!(
            checked.contains("cautilus.cassette.v1"),
            "a cassette was recorded"
        );
        assert_clean("the records, cassette and reports", &checked);
        assert_reports_clean(&workspace.path().join("run"));
        std::fs::remove_dir_all(workspace.path().join("run")).unwrap();
        std::fs::remove_dir_all(workspace.path().join(".cautilus")).unwrap();
    }
}

/// An OpenAI Chat Completions answer naming `model`.
fn chat_answer(model: &str, text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "chatcmpl-1", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
        })
        .to_string(),
    )
}

#[test]
fn a_key_an_openai_compatible_server_echoes_reaches_no_record_report_or_output() {
    // Cases alternate: answers naming the key as their model, and errors
    // quoting the header back, in every shape. The shape and the echo follow
    // the case's question, not the call's place in line: judge calls
    // interleave with answer calls in an order the scheduler picks (with the
    // echo chosen by place, whether the plain `Bearer <key>` echo reached a
    // 401 case depended on that order).
    let server = ModelServer::start(|request, _| {
        let question = (0..9)
            .find(|i| request.body.contains(&format!("\"question {i}\"")))
            .unwrap_or(0);
        let echo = &echoes()[question % echoes().len()];
        if request.body.contains("names Cautilus") {
            return chat_answer(
                &format!("Bearer {KEY}"),
                &json!({"passed": false, "score": 0.0, "reasoning": format!("the key was {echo}")})
                    .to_string(),
            );
        }
        match question % 3 {
            0 => chat_answer(echo, &format!("Cautilus, with {echo}")),
            1 => Reply::json(
                401,
                json!({"error": {"message": format!("Incorrect API key provided: {echo}"),
                                 "header": format!("Authorization: Bearer {KEY}")}})
                .to_string(),
            ),
            _ => Reply::json(400, format!("bad request from {echo} (raw text)")),
        }
    });
    let workspace = tempfile::tempdir().unwrap();
    let cases: Vec<Value> = (0..9)
        .map(|i| {
            json!({"caseId": format!("c{i}"), "input": format!("question {i}"),
                   "expected": {"finalText": "Cautilus"},
                   "assertions": ["names Cautilus"]})
        })
        .collect();
    let fixture = workspace.path().join("openai.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "openai-echo",
            "provider": "openai", "model": "loopback-model",
            "judge": {"provider": "openai", "model": "judge-model"},
            "cases": cases,
        })
        .to_string(),
    )
    .unwrap();
    let (_, stdout, stderr) = eval_test(
        workspace.path(),
        &fixture,
        &["--concurrency", "1", "--replay", "record-new"],
        &[("OPENAI_BASE_URL", &server.url), ("OPENAI_API_KEY", KEY)],
    );
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.header("authorization") == Some(&format!("Bearer {KEY}"))),
        "the key was sent (the server had it to echo)"
    );
    assert_clean("stdout", &stdout);
    assert_clean("stderr", &stderr);
    let written = all_text(workspace.path());
    assert!(
        written.contains("cautilus.cassette.v1"),
        "a cassette was recorded: {stdout}\n{stderr}"
    );
    assert!(
        written.contains("Incorrect API key provided: Bearer [redacted]"),
        "the error is kept, the key is not"
    );
    assert_clean("the records, cassette and reports", &written);
    assert_reports_clean(&workspace.path().join("run"));
}

// ---- terminal output ----

/// Text that drives a terminal, one family member per element: OSC window
/// title and hyperlink, erase-line + carriage return forging a case line,
/// newlines (LF, CRLF, NEL, LINE SEPARATOR) starting a forged line,
/// backspaces and DEL over text, BEL, a full reset, C1 CSI, and bidi
/// overrides and isolates that reorder what is shown.
fn hostile() -> Vec<&'static str> {
    vec![
        "\u{1b}]0;pwned title\u{7}",
        "\u{1b}]8;;https://evil.example\u{1b}\\link\u{1b}]8;;\u{1b}\\",
        "\u{1b}[2K\rPASS  FORGED — ok",
        "\rPASS  FORGED",
        "\n  PASS  FORGED — ok",
        "\r\nPASS FORGED",
        "\u{85}PASS FORGED",
        "\u{2028}PASS FORGED\u{2029}",
        "\u{8}\u{8}\u{8}\u{7f}FORGED",
        "\u{7}\u{1b}c",
        "\u{9b}2K\u{9d}0;title\u{9c}",
        "\u{202e}DEGROF SSAP\u{202c}",
        "\u{2066}\u{2067}\u{2068}FORGED\u{2069}\u{202a}\u{202b}\u{202d}",
    ]
}

/// Bytes and characters that must never reach a terminal raw.
fn raw_control(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
    })
}

/// Fails when `text` holds a raw control (a newline aside).
fn assert_no_raw_control(what: &str, text: &str) {
    if let Some(c) = raw_control(text) {
        panic!("{what} holds a raw {c:?}:\n{}", text.escape_debug());
    }
}

/// Fails when `text` (a stream of the CLI) holds a raw control or a line
/// that a hostile string started.
fn assert_terminal_safe(what: &str, text: &str) {
    assert_no_raw_control(what, text);
    for line in text.lines() {
        // The payloads start their lines as `PASS  FORGED …` or `FORGED`;
        // the real case lines name their case (`pass3…`) after the tag.
        let start = line.trim_start();
        let after_tag = start.strip_prefix("PASS").map(str::trim_start);
        assert!(
            !start.starts_with("FORGED") && !after_tag.is_some_and(|t| t.starts_with("FORGED")),
            "{what} has a forged line {line:?}:\n{}",
            text.escape_debug()
        );
    }
}

/// A suite whose every user-chosen string carries hostile text `h`.
fn hostile_suite(index: usize, h: &str) -> Value {
    json!({
        "schemaVersion": "cautilus.evaluation_input.v1",
        "surface": "app", "preset": "prompt",
        "suiteId": format!("s{index}{h}"),
        "suiteDisplayName": format!("suite {h}"),
        "provider": "fixture", "model": format!("model{h}"),
        "cases": [
            {"caseId": format!("pass{index}{h}"), "displayName": format!("name {h}"),
             "input": format!("say {h}"), "expected": {"finalText": "Fixture"}},
            {"caseId": format!("fail{index}{h}"), "displayName": format!("name {h}"),
             "input": format!("say {h}"), "expected": {"finalText": format!("want {h}")},
             "assertions": [{"type": "contains", "value": format!("zz{h}"), "name": format!("check {h}")}]},
        ],
    })
}

/// A project with one hostile suite per family member under `evals/`.
fn hostile_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("evals")).unwrap();
    for (i, h) in hostile().into_iter().enumerate() {
        std::fs::write(
            dir.path().join(format!("evals/h{i}.fixture.json")),
            hostile_suite(i, h).to_string(),
        )
        .unwrap();
    }
    dir
}

fn run_in(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    output(cautilus().current_dir(cwd).args(args).output().unwrap())
}

fn fixtures(project: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(project.join("evals"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    all.sort();
    all
}

#[test]
fn eval_validate_and_eval_test_print_hostile_ids_names_and_answers_escaped() {
    let project = hostile_project();
    for fixture in fixtures(project.path()) {
        let fixture = fixture.to_str().unwrap();
        let (code, stdout, stderr) =
            run_in(project.path(), &["eval", "validate", "--fixture", fixture]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_terminal_safe("eval validate stdout", &stdout);
        assert_terminal_safe("eval validate stderr", &stderr);
        assert!(stdout.contains("valid app/prompt fixture"), "{stdout}");

        let out = project.path().join("out");
        let (code, stdout, stderr) = run_in(
            project.path(),
            &[
                "eval",
                "test",
                "--fixture",
                fixture,
                "--provider",
                "fixture",
                "--output-dir",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 1, "one case fails: {stdout}{stderr}");
        assert_terminal_safe("eval test stdout", &stdout);
        assert_terminal_safe("eval test stderr", &stderr);
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("  PASS ")).count(),
            1,
            "one PASS line, the real one: {}",
            stdout.escape_debug()
        );
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("  FAIL ")).count(),
            1,
            "{}",
            stdout.escape_debug()
        );
        // A report is a document: multi-line text inside it (a JUnit
        // failure's diff) keeps its line breaks, and nothing else raw.
        for format in ["markdown", "junit", "html"] {
            let (code, stdout, stderr) =
                run_in(project.path(), &["report", format, out.to_str().unwrap()]);
            assert_eq!(code, 0, "{stderr}");
            assert_no_raw_control(&format!("report {format} stdout"), &stdout);
            assert_terminal_safe(&format!("report {format} stderr"), &stderr);
        }
        std::fs::remove_dir_all(&out).unwrap();

        // `--json` prints the summary packet: JSON-escaped, same strings.
        let (code, stdout, stderr) = run_in(
            project.path(),
            &[
                "eval",
                "test",
                "--fixture",
                fixture,
                "--provider",
                "fixture",
                "--json",
                "--output-dir",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 1, "{stdout}{stderr}");
        assert_terminal_safe("eval test --json stdout", &stdout);
        assert_terminal_safe("eval test --json stderr", &stderr);
        let summary: Value = serde_json::from_str(&stdout).expect("--json prints JSON");
        let ids: Vec<&str> = summary["evaluations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["caseId"].as_str().unwrap())
            .collect();
        assert!(
            ids.iter()
                .all(|id| id.starts_with("pass") || id.starts_with("fail")),
            "{ids:?}"
        );
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("eval-summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary, written, "the same packet, escaped differently");
        std::fs::remove_dir_all(&out).unwrap();
    }
}

#[test]
fn eval_list_and_a_project_run_print_hostile_suites_escaped() {
    let project = hostile_project();
    let (code, stdout, stderr) = run_in(project.path(), &["eval", "list"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_terminal_safe("eval list stdout", &stdout);
    assert_terminal_safe("eval list stderr", &stderr);
    assert_eq!(
        stdout.lines().count(),
        hostile().len() + 2,
        "a header, one line per suite, the totals: {}",
        stdout.escape_debug()
    );

    // JSON keeps every string, escaped as JSON.
    let (code, stdout, stderr) = run_in(project.path(), &["eval", "list", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_terminal_safe("eval list --json", &stdout);
    let manifest: Value = serde_json::from_str(&stdout).unwrap();
    let mut ids: Vec<String> = manifest["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let mut want: Vec<String> = hostile()
        .into_iter()
        .enumerate()
        .map(|(i, h)| format!("s{i}{h}"))
        .collect();
    want.sort();
    assert_eq!(ids, want, "the JSON round-trips the ids");

    for json in [false, true] {
        let mut args = vec!["eval", "test", "--provider", "fixture"];
        if json {
            args.push("--json");
        }
        let (code, stdout, stderr) = run_in(project.path(), &args);
        assert_eq!(code, 1, "{stdout}{stderr}");
        assert_terminal_safe("project run stdout", &stdout);
        assert_terminal_safe("project run stderr", &stderr);
        if json {
            serde_json::from_str::<Value>(&stdout).expect("--json prints JSON");
        }
    }
}

/// A fixture made invalid by hostile text in `h`, in one of several places
/// an error names.
fn invalid_fixtures(h: &str) -> Vec<Value> {
    let base = hostile_suite(0, "");
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        f(&mut v);
        v
    };
    vec![
        with(&|v| v[format!("x{h}")] = json!(1)),
        with(&|v| v["preset"] = json!(format!("p{h}"))),
        with(&|v| {
            v["cases"][0]["caseId"] = json!(format!("d{h}"));
            v["cases"][1]["caseId"] = json!(format!("d{h}"));
        }),
        with(&|v| v["cases"][0]["assertions"] = json!([{"type": format!("nope{h}")}])),
        with(&|v| v["cases"][0][format!("k{h}")] = json!(1)),
        with(&|v| v["cases"][0]["expected"] = json!({format!("f{h}"): 1})),
    ]
}

#[test]
fn errors_naming_hostile_text_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    for (i, h) in hostile().into_iter().enumerate() {
        for (j, fixture) in invalid_fixtures(h).into_iter().enumerate() {
            let file = dir.path().join(format!("bad{i}-{j}.fixture.json"));
            std::fs::write(&file, fixture.to_string()).unwrap();
            for (command, (code, stdout, stderr)) in
                validate_and_test(&file, &dir.path().join("out"))
            {
                assert_eq!(code, 2, "{j}: {fixture}: {stdout}{stderr}");
                assert!(stderr.starts_with("error: "), "{stderr}");
                assert_terminal_safe(&format!("eval {command} stdout"), &stdout);
                assert_terminal_safe(&format!("eval {command} stderr"), &stderr);
            }
        }
        // A path: the fixture named on the command line, and where records go.
        let named = dir.path().join(format!("missing{h}.fixture.json"));
        let (code, stdout, stderr) = output(
            cautilus()
                .args(["eval", "validate", "--fixture"])
                .arg(&named)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert_terminal_safe("a missing fixture's error", &stderr);
    }
}
