//! Fixture composition through the real binary: C1 (several inline cases),
//! C2 `extends`, directory discovery and case files (seed 001), and
//! `${{ VAR }}` interpolation.

use serde_json::Value;

use crate::support::{cautilus, eval_run_with, output, repo};

/// Runs `eval test` on a fixture of `fixtures/eval/compose/` with `env`;
/// returns (exit code, stdout, stderr, cases packet, summary packet).
fn eval_test(fixture: &str, env: &[(&str, &str)]) -> (i32, String, String, Value, Value) {
    let run = eval_run_with(
        &repo().join("fixtures/eval/compose").join(fixture),
        &[],
        |command| {
            for name in ["CAUTILUS_EXAMPLE_MODEL", "CAUTILUS_EXAMPLE_TOPIC"] {
                command.env_remove(name);
            }
            for (name, value) in env {
                command.env(name, value);
            }
        },
    );
    let (cases, summary) = (
        run.packet("eval-cases.json"),
        run.packet("eval-summary.json"),
    );
    (run.code, run.stdout, run.stderr, cases, summary)
}

fn case_ids(packet: &Value, list: &str) -> Vec<String> {
    packet[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["caseId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn c1_every_inline_case_is_evaluated() {
    let (code, stdout, stderr, _, summary) = eval_test("extends/base.fixture.json", &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(summary["evaluationCounts"]["total"], 1);
    let (code, stdout, stderr, _, summary) = eval_test("extends/child.fixture.json", &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        case_ids(&summary, "evaluations"),
        ["child-case", "child-case-2"]
    );
    assert_eq!(summary["evaluationCounts"]["passed"], 2);
}

#[test]
fn c2_a_child_inherits_and_overrides() {
    let (code, _, stderr, cases, summary) = eval_test("extends/child.fixture.json", &[]);
    assert_eq!(code, 0, "{stderr}");
    // Inherited scalars (suiteId, provider, system) ...
    assert_eq!(cases["suiteId"], "tagline-variants");
    assert_eq!(cases["cases"][0]["provider"], "anthropic");
    assert_eq!(cases["cases"][0]["system"], "Answer in one short sentence.");
    // ... overridden scalars (model, suiteDisplayName) ...
    assert_eq!(cases["cases"][0]["model"], "claude-haiku-4-5");
    assert_eq!(summary["suiteDisplayName"], "Tagline (smaller model)");
    // ... and the child's case list replaces the base's.
    assert_eq!(case_ids(&cases, "cases"), ["child-case", "child-case-2"]);
    assert!(cases.get("extends").is_none());
}

#[test]
fn c2_an_extends_cycle_is_a_definition_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), r#"{"extends": "./b.json"}"#).unwrap();
    std::fs::write(dir.path().join("b.json"), r#"{"extends": "./a.json"}"#).unwrap();
    let (code, stdout, stderr) = output(
        cautilus()
            .args(["eval", "validate", "--fixture"])
            .arg(dir.path().join("a.json"))
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("extends: extends cycle: "), "{stderr}");
}

#[test]
fn discovery_takes_case_directories_in_order_and_warns_about_the_rest() {
    let (code, stdout, stderr, cases, summary) = eval_test("discovery/suite.yaml", &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Byte order of directory names (farewell < greeting); `id:` overrides
    // the directory name; `notes/` has no case.yaml.
    assert_eq!(case_ids(&cases, "cases"), ["say-goodbye", "greeting"]);
    assert_eq!(summary["evaluationCounts"]["passed"], 2);
    assert!(
        stderr.contains("warning: ")
            && stderr.contains("notes: no case.yaml, case.yml or case.json; skipped"),
        "{stderr}"
    );
}

#[test]
fn case_files_load_by_type() {
    let (code, _, stderr, cases, _) = eval_test("case-files/jsonl.fixture.yaml", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(case_ids(&cases, "cases"), ["jsonl-1", "jsonl-2"]);
    let (code, _, stderr, cases, _) = eval_test("case-files/csv.fixture.yaml", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(case_ids(&cases, "cases"), ["csv-1", "csv-2"]);
    assert_eq!(cases["cases"][0]["input"], "Explain fixtures, briefly.");
    assert_eq!(cases["cases"][0]["expected"]["finalText"], "fixtures");
}

#[test]
fn environment_variables_are_interpolated_or_named_when_missing() {
    let (code, stdout, stderr, cases, _) = eval_test(
        "env/suite.yaml",
        &[("CAUTILUS_EXAMPLE_TOPIC", "sandboxing")],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(cases["cases"][0]["input"], "Tell me about sandboxing.");
    assert_eq!(
        cases["cases"][0]["model"], "claude-sonnet-4-6",
        "the default applies"
    );
    let (code, _, _, cases, _) = eval_test(
        "env/suite.yaml",
        &[
            ("CAUTILUS_EXAMPLE_TOPIC", "x"),
            ("CAUTILUS_EXAMPLE_MODEL", "gpt-4o"),
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(cases["cases"][0]["model"], "gpt-4o");

    let (code, stdout, stderr, cases, _) = eval_test("env/suite.yaml", &[]);
    assert_eq!(code, 2, "{stdout}");
    assert!(cases.is_null(), "nothing ran");
    assert!(
        stderr.contains(
            // Placed where the placeholder is written.
            "suite.yaml:10:5: cases[0].input: environment variable `CAUTILUS_EXAMPLE_TOPIC` is not set"
        ),
        "{stderr}"
    );
}

#[test]
fn case_directories_resolve_paths_and_copy_their_workspace() {
    let template = repo().join("fixtures/eval/compose/case-dirs/cases/with-workspace/workspace");
    let (code, stdout, stderr, cases, summary) = eval_test("case-dirs/suite.fixture.yaml", &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        case_ids(&cases, "cases"),
        ["snapshot-here", "with-workspace"]
    );
    // `./golden.txt` in cases/snapshot-here/case.yaml is that directory's file.
    assert_eq!(summary["evaluations"][0]["match"], true);
    // The grader ran in a copy of workspace/ (it checks), and wrote there,
    // not into the template.
    let grader = &summary["evaluations"][1]["assertions"][0];
    assert_eq!(grader["passed"], true, "{grader}");
    assert!(!template.join("written-by-grader.txt").exists());
    // The host-private origin never reaches the records.
    assert!(!cases.to_string().contains("$origin"));
}

#[test]
fn errors_in_a_discovered_case_name_its_own_file() {
    let (code, _, stderr) = crate::support::run(&[
        "eval",
        "validate",
        "--fixture",
        repo()
            .join("fixtures/eval/invalid/discovered-case-error/fixture.json")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cases[0] (")
            && stderr.contains("cases/bad/case.yaml): input: is missing or empty"),
        "{stderr}"
    );
}
