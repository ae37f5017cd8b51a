//! Suites are checked before anything is spent on them: `eval list` names
//! every invalid fixture (and still lists the valid ones), and `eval test`
//! over a project checks every suite before it runs any, so one broken
//! suite costs no model call (a loopback model counts them). Suite-level
//! `tags`: accepted, checked, recorded, and selecting with `--tag`.

use std::path::Path;

use cautilus_tests::model_server::{ModelServer, openai_echo};
use serde_json::{Value, json};

use crate::support::{cautilus, output, read_json};

/// An app/prompt suite answered by the `openai` provider (the loopback).
fn suite(id: &str, cases: &[&str]) -> Value {
    json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": id, "provider": "openai", "model": "loopback-model",
        "cases": cases.iter().map(|c| json!({"caseId": c, "input": format!("echo {c}"),
            "expected": {"finalText": format!("echo {c}")}})).collect::<Vec<_>>(),
    })
}

fn write(root: &Path, path: &str, text: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

/// A project of three valid suites under `evals/`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cautilus.toml", "dir = \"records\"\n");
    for id in ["alpha", "beta", "gamma"] {
        write(
            dir.path(),
            &format!("evals/{id}.fixture.json"),
            &suite(id, &["c1", "c2"]).to_string(),
        );
    }
    dir
}

fn run(cwd: &Path, server: &ModelServer, args: &[&str]) -> (i32, String, String) {
    let mut command = cautilus();
    command
        .current_dir(cwd)
        .args(args)
        .env("OPENAI_BASE_URL", &server.url)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY");
    output(command.output().unwrap())
}

/// Broken fixtures of several kinds, each with what its error must say.
fn broken() -> Vec<(&'static str, String, &'static str)> {
    let mut misspelled_case = suite("typo-case", &["c1"]);
    misspelled_case["cases"][0]["expeted"] = misspelled_case["cases"][0]
        .as_object_mut()
        .unwrap()
        .remove("expected")
        .unwrap();
    let mut suite_field = suite("typo-suite", &["c1"]);
    suite_field["sytem"] = json!("Be brief.");
    let mut scorer = suite("bad-assertion", &["c1"]);
    scorer["assertions"] = json!([{"type": "no-such-scorer"}]);
    let mut regex = suite("bad-regex", &["c1"]);
    regex["cases"][0]["assertions"] = json!([{"type": "regex", "value": "(unclosed"}]);
    vec![
        (
            "evals/typo-case.fixture.json",
            misspelled_case.to_string(),
            "expeted",
        ),
        (
            "evals/typo-suite.fixture.json",
            suite_field.to_string(),
            "sytem",
        ),
        (
            "evals/bad-assertion.fixture.json",
            scorer.to_string(),
            "no-such-scorer",
        ),
        (
            "evals/bad-regex.fixture.json",
            regex.to_string(),
            "cases[0].assertions[0]",
        ),
        (
            "evals/not-yaml.fixture.yaml",
            "schemaVersion: [unclosed\n".to_string(),
            "not-yaml.fixture.yaml",
        ),
    ]
}

#[test]
fn eval_list_names_every_invalid_fixture_and_still_lists_the_valid_ones() {
    let dir = project();
    let server = ModelServer::start(|request, _| openai_echo(request));
    let (code, stdout, stderr) = run(dir.path(), &server, &["eval", "list"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    for (path, text, _) in broken() {
        write(dir.path(), path, &text);
    }
    let (code, stdout, stderr) = run(dir.path(), &server, &["eval", "list"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.contains("3 suites, 6 cases"), "{stdout}");
    for id in ["alpha", "beta", "gamma"] {
        assert!(stdout.lines().any(|l| l.starts_with(id)), "{stdout}");
    }
    assert!(
        stderr.contains("5 fixture(s) of the project are invalid"),
        "{stderr}"
    );
    for (path, _, says) in broken() {
        let at = stderr.find(&format!("  {path}")).unwrap_or_else(|| {
            panic!("{path} is not named: {stderr}");
        });
        assert!(stderr[at..].contains(says), "{path}: {says}: {stderr}");
        assert!(!stdout.contains(path), "{path} listed as valid: {stdout}");
    }

    let (code, stdout, stderr) = run(dir.path(), &server, &["eval", "list", "--json"]);
    assert_eq!(code, 2, "{stderr}");
    let manifest: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(manifest["suites"].as_array().unwrap().len(), 3);
    let invalid: Vec<&str> = manifest["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    let mut expected: Vec<&str> = broken().iter().map(|(p, _, _)| *p).collect();
    expected.sort();
    assert_eq!(invalid, expected);
    assert_eq!(server.requests().len(), 0, "listing calls no model");
}

#[test]
fn a_project_run_checks_every_suite_before_it_calls_any_model() {
    for (path, text, says) in broken() {
        let dir = project();
        write(dir.path(), path, &text);
        let server = ModelServer::start(|request, _| openai_echo(request));
        for extra in [&[][..], &["--parallel-suites", "1"], &["--json"]] {
            let mut args = vec!["eval", "test"];
            args.extend_from_slice(extra);
            let (code, stdout, stderr) = run(dir.path(), &server, &args);
            assert_eq!(
                server.requests().len(),
                0,
                "{path} {extra:?}: a model was called: {stdout}{stderr}"
            );
            assert_eq!(code, 2, "{path} {extra:?}: {stdout}{stderr}");
            assert!(stderr.contains(path) && stderr.contains(says), "{stderr}");
            assert!(stderr.contains("nothing ran"), "{stderr}");
            assert!(
                !dir.path().join("records").exists(),
                "{path}: records were written"
            );
        }
    }

    // Every broken suite at once is listed, each once.
    let dir = project();
    for (path, text, _) in broken() {
        write(dir.path(), path, &text);
    }
    let server = ModelServer::start(|request, _| openai_echo(request));
    let (code, _, stderr) = run(dir.path(), &server, &["eval", "test"]);
    assert_eq!(code, 2);
    for (path, _, _) in broken() {
        assert_eq!(stderr.matches(&format!("  {path}")).count(), 1, "{stderr}");
    }
    assert_eq!(server.requests().len(), 0);

    // A fixture that does not load stops any run (its id is unknown);
    // suites that load but are broken stop only a run that selects them.
    // The loopback does count the calls of the suites that run.
    let (code, stdout, stderr) = run(
        dir.path(),
        &server,
        &["eval", "test", "--suite", "alpha", "--suite", "beta"],
    );
    assert_eq!(code, 2, "a fixture that does not load still stops the run");
    assert!(stderr.contains("not-yaml.fixture.yaml"), "{stdout}{stderr}");
    std::fs::remove_file(dir.path().join("evals/not-yaml.fixture.yaml")).unwrap();
    let (code, stdout, stderr) = run(
        dir.path(),
        &server,
        &["eval", "test", "--suite", "alpha", "--suite", "beta"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(server.requests().len(), 4, "2 suites × 2 cases");
}

#[test]
fn suite_tags_are_checked_recorded_and_select_every_case_of_the_suite() {
    let dir = project();
    // alpha is tagged as a whole; beta has one tagged case; gamma neither.
    let mut alpha = suite("alpha", &["c1", "c2"]);
    alpha["tags"] = json!(["smoke", "team-a"]);
    write(dir.path(), "evals/alpha.fixture.json", &alpha.to_string());
    let mut beta = suite("beta", &["c1", "c2"]);
    beta["cases"][1]["tags"] = json!(["smoke"]);
    write(dir.path(), "evals/beta.fixture.json", &beta.to_string());
    let server = ModelServer::start(|request, _| openai_echo(request));

    let (code, stdout, stderr) = run(dir.path(), &server, &["eval", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let manifest: Value = serde_json::from_str(&stdout).unwrap();
    let alpha_entry = &manifest["suites"][0];
    assert_eq!(alpha_entry["id"], "alpha");
    assert_eq!(alpha_entry["suiteTags"], json!(["smoke", "team-a"]));
    assert_eq!(alpha_entry["tags"], json!(["smoke", "team-a"]));

    // --tag over the project: alpha whole, beta's tagged case, no gamma.
    let (code, stdout, stderr) = run(
        dir.path(),
        &server,
        &["eval", "test", "--tag", "smoke", "--json"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    let ran: Vec<(&str, u64)> = summary["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap(),
                s["counts"]["total"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ran, [("alpha", 2), ("beta", 1)]);
    // The record: the suite's tags, and every cell carries them.
    let out = dir.path().join("alpha-run");
    let (code, stdout, stderr) = run(
        dir.path(),
        &server,
        &[
            "eval",
            "test",
            "--fixture",
            "evals/alpha.fixture.json",
            "--tag",
            "team-a",
            "--output-dir",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let record = read_json(&out.join("experiment.json"));
    assert_eq!(record["suiteTags"], json!(["smoke", "team-a"]));
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert!(
        cells
            .iter()
            .all(|c| c["tags"] == json!(["smoke", "team-a"])),
        "{record}"
    );
    // A tag neither the suite nor a case carries selects nothing.
    let (code, _, stderr) = run(
        dir.path(),
        &server,
        &[
            "eval",
            "test",
            "--fixture",
            "evals/gamma.fixture.json",
            "--tag",
            "smoke",
        ],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("--tag smoke matches no case"), "{stderr}");

    // Checked like a case's tags: a list of non-empty strings; a variant
    // may not change them.
    for (tags, at, says) in [
        (json!("smoke"), "tags", "must be a list of strings"),
        (json!([""]), "tags[0]", "non-empty string"),
        (json!(["ok", "  "]), "tags[1]", "non-empty string"),
        (json!(["ok", 3]), "tags[1]", "got a number"),
        (json!([["nested"]]), "tags[0]", "got a list"),
        (json!({"a": 1}), "tags", "must be a list of strings"),
    ] {
        let mut bad = suite("bad-tags", &["c1"]);
        bad["tags"] = tags.clone();
        let file = dir.path().join("bad.json");
        std::fs::write(&file, bad.to_string()).unwrap();
        let (code, _, stderr) = run(
            dir.path(),
            &server,
            &["eval", "validate", "--fixture", file.to_str().unwrap()],
        );
        assert_eq!(code, 2, "{tags}: {stderr}");
        assert!(
            stderr.contains(&format!("{at}: ")) && stderr.contains(says),
            "{tags}: {stderr}"
        );
    }
    let mut overridden = suite("override-tags", &["c1"]);
    overridden["tags"] = json!(["smoke"]);
    overridden["variants"] = json!({"other": {"tags": ["nightly"]}});
    let file = dir.path().join("bad.json");
    std::fs::write(&file, overridden.to_string()).unwrap();
    let (code, _, stderr) = run(
        dir.path(),
        &server,
        &["eval", "validate", "--fixture", file.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("variants.other.tags"), "{stderr}");
    // A misspelling is still caught, and pointed at `tags`.
    let mut typo = suite("typo-tags", &["c1"]);
    typo["tgas"] = json!(["smoke"]);
    std::fs::write(&file, typo.to_string()).unwrap();
    let (code, _, stderr) = run(
        dir.path(),
        &server,
        &["eval", "validate", "--fixture", file.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("did you mean `tags`?"), "{stderr}");
}
