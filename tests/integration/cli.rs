//! The command line: output formats, `@file` inputs and exit codes.

use crate::support::run;

#[test]
fn score_exit_codes_are_pass_fail_error() {
    let (code, stdout, _) = run(&[
        "score",
        "--scorer",
        "contains",
        "--output",
        "Hello, world",
        "--config",
        r#"{"value": "world"}"#,
    ]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("PASS contains"), "{stdout}");

    let (code, stdout, _) = run(&[
        "score",
        "--scorer",
        "contains",
        "--output",
        "Hello",
        "--expected",
        "bye",
    ]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("FAIL contains")
            && stdout.contains("expected the output to contain \"bye\""),
        "{stdout}"
    );

    let (code, _, stderr) = run(&[
        "score",
        "--scorer",
        "regex",
        "--output",
        "x",
        "--config",
        r#"{"value": "(oops"}"#,
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid config at `value`"), "{stderr}");

    let (code, _, stderr) = run(&["score", "--scorer", "no-such-scorer", "--output", "x"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no built-in plugin `no-such-scorer`"),
        "{stderr}"
    );

    let (code, _, stderr) = run(&["score", "--scorer", "contains"]);
    assert_eq!(code, 2, "missing --output is a usage error: {stderr}");

    let (code, _, stderr) = run(&[
        "score",
        "--scorer",
        "contains",
        "--output",
        "x",
        "--config",
        "{not json",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--config: not valid JSON"), "{stderr}");
}

#[test]
fn score_json_output_and_file_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("answer.txt");
    std::fs::write(&output, "{\"a\": 1, \"b\": 3}").unwrap();
    let at_output = format!("@{}", output.display());
    let (code, stdout, stderr) = run(&[
        "score",
        "--scorer",
        "json-diff",
        "--output",
        &at_output,
        "--expected-json",
        r#"{"a": 1, "b": 2}"#,
        "--json",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["scorer"], "json-diff");
    assert_eq!(report["value"], 0.5);
    assert_eq!(report["passed"], false);
    assert!(
        report["detail"]
            .as_str()
            .unwrap()
            .contains("$.b: expected 2, got 3")
    );

    let (code, _, stderr) = run(&[
        "score",
        "--scorer",
        "contains",
        "--output",
        "@/no/such/file",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--output @/no/such/file: cannot read the file"),
        "{stderr}"
    );
}

#[test]
fn negate_works_from_the_cli() {
    let (code, stdout, _) = run(&[
        "score",
        "--scorer",
        "contains",
        "--output",
        "calm",
        "--config",
        r#"{"value": "ERROR", "negate": true}"#,
    ]);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn plugin_list_shows_every_builtin_scorer() {
    let (code, stdout, _) = run(&["plugin", "list"]);
    assert_eq!(code, 0);
    for id in [
        "equals",
        "contains",
        "icontains",
        "contains-any",
        "contains-all",
        "starts-with",
        "ends-with",
        "regex",
        "levenshtein",
        "is-json",
        "json-diff",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{id} "))),
            "{id} missing:\n{stdout}"
        );
    }
    assert!(stdout.contains("WIT") && stdout.contains("SHA256") && stdout.contains("CAPABILITIES"));
}

#[test]
fn plugin_inspect_shows_schema_and_cost_class() {
    let (code, stdout, _) = run(&["plugin", "inspect", "regex"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("scorer regex (cost class: code)"),
        "{stdout}"
    );
    assert!(stdout.contains("\"flags\""), "{stdout}");
    assert!(
        !stdout.contains("scorer contains "),
        "only the asked scorer: {stdout}"
    );
    let (code, stdout, _) = run(&["plugin", "inspect", "cautilus-builtin-scorers", "--json"]);
    assert_eq!(code, 0);
    let view: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(view["scorers"].as_array().unwrap().len(), 22);
}

#[test]
fn every_command_has_help_with_examples() {
    for args in [
        vec!["--help"],
        vec!["score", "--help"],
        vec!["plugin", "list", "--help"],
        vec!["plugin", "inspect", "--help"],
        vec!["plugin", "new", "--help"],
        vec!["plugin", "new", "scorer", "--help"],
        vec!["eval", "test", "--help"],
        vec!["eval", "promote", "--help"],
        vec!["eval", "merge", "--help"],
    ] {
        let (code, stdout, _) = run(&args);
        assert_eq!(code, 0, "{args:?}");
        assert!(
            stdout.contains("Examples:"),
            "{args:?} has no examples:\n{stdout}"
        );
    }
}

#[test]
fn a_closed_stdout_neither_panics_nor_loses_the_records() {
    // `cautilus eval test … | head -1`: the reader is gone before the case
    // lines are printed; the run still ends normally and writes its records.
    let workspace = tempfile::tempdir().unwrap();
    let out = workspace.path().join("run");
    let mut child = crate::support::cautilus()
        .args(["eval", "test", "--fixture"])
        .arg(crate::support::repo().join("fixtures/eval/app/prompt/tagline.fixture.json"))
        .args(["--provider", "fixture", "--output-dir"])
        .arg(&out)
        .arg("--workspace")
        .arg(workspace.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let finished = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&finished.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        matches!(finished.status.code(), Some(0 | 1)),
        "{:?}: {stderr}",
        finished.status
    );
    assert!(out.join("eval-summary.json").exists(), "{stderr}");
}
