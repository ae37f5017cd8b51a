//! Fixture assertions through scorer plugins, through the real binary:
//! suite-level and per-case lists, required and optional, weights,
//! negation, definition errors naming the assertion's path.

use std::path::Path;

use serde_json::Value;

use crate::support::{repo, run};

fn eval_test(fixture: &Path) -> (i32, String, String, Value) {
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--fixture",
        &fixture.display().to_string(),
        "--workspace",
        &repo().display().to_string(),
        "--output-dir",
        &out.path().display().to_string(),
    ]);
    let summary = std::fs::read_to_string(out.path().join("eval-summary.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (code, stdout, stderr, summary)
}

fn case<'a>(summary: &'a Value, id: &str) -> &'a Value {
    summary["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["caseId"] == id)
        .unwrap()
}

#[test]
fn assertions_pass_fail_and_gate_the_case() {
    let fixture = repo().join("fixtures/eval/assertions/scorers.fixture.yaml");
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(
        code, 1,
        "a failed required assertion rejects: {stdout}{stderr}"
    );
    assert_eq!(summary["recommendation"], "reject");

    let pass = case(&summary, "all-pass");
    assert_eq!(pass["status"], "passed");
    let names: Vec<&str> = pass["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    // The case's own first, then the suite's.
    assert_eq!(
        names,
        [
            "levenshtein",
            "icontains",
            "contains",
            "starts-like-a-fixture"
        ]
    );
    assert!(
        pass["assertions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["passed"] == true)
    );
    assert_eq!(pass["assertions"][1]["weight"], 2.0);
    assert!(pass["assertionScore"].as_f64().unwrap() > 0.9);

    let failed = case(&summary, "required-fails");
    assert_eq!(failed["status"], "failed");
    assert!(
        failed["summary"]
            .as_str()
            .unwrap()
            .contains("assertion `equals` failed: expected exactly \"Goodbye.\""),
        "{failed}"
    );
    assert!(
        stdout.contains("FAIL  required-fails — assertion `equals` failed"),
        "{stdout}"
    );

    // Optional assertions are reported but do not fail the case; negation works.
    let optional = case(&summary, "optional-fails");
    assert_eq!(optional["status"], "passed", "{optional}");
    assert_eq!(optional["assertions"][0]["passed"], false);
    assert_eq!(optional["assertions"][0]["required"], false);
    assert_eq!(
        optional["assertions"][1]["passed"], false,
        "negated contains"
    );
}

#[test]
fn bad_assertions_are_definition_errors_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let base =
        std::fs::read_to_string(repo().join("fixtures/eval/assertions/scorers.fixture.yaml"))
            .unwrap();
    for (from, to, want) in [
        (
            "flags: i",
            "flags: q",
            "assertions[1]: plugin `regex`: invalid config at `flags`",
        ),
        (
            "type: equals",
            "type: equalz",
            "cases[1].assertions[0]: no built-in plugin `equalz`",
        ),
        (
            "weight: 2",
            "weight: -1",
            "cases[0].assertions[1].weight: must be a non-negative number",
        ),
        (
            "type: is-json, required: false",
            "required: false",
            "cases[2].assertions[0].type: is missing",
        ),
    ] {
        let fixture = dir.path().join("bad.yaml");
        std::fs::write(&fixture, base.replace(from, to)).unwrap();
        let (code, stdout, stderr, summary) = eval_test(&fixture);
        assert_eq!(code, 2, "{from}: {stdout}");
        assert!(summary.is_null(), "nothing ran");
        assert!(stderr.contains(want), "{from}: {stderr}");
    }
}
