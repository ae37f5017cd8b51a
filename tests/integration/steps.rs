//! C3 multi-step fixtures through the real binary: placeholders reading an
//! earlier step's output (dotted path, whole output, JSON answers), the run
//! summary, stopping at a failing step, and placeholder errors.

use serde_json::Value;

use crate::support::{eval_run, repo};

fn steps_fixture(name: &str) -> std::path::PathBuf {
    repo().join("fixtures/eval/compose/steps").join(name)
}

#[test]
fn step_two_reads_step_one_through_a_dotted_path() {
    let run = eval_run(&steps_fixture("two-step.fixture.yaml"), &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let summary = run.packet("eval-summary.json");
    assert_eq!(summary["schemaVersion"], "cautilus.evaluation_summary.v1");
    assert_eq!(summary["suiteId"], "two-step");
    assert_eq!(summary["recommendation"], "accept-now");
    assert_eq!(summary["evaluationCounts"]["total"], 2);
    assert_eq!(summary["evaluationCounts"]["passed"], 2);
    let steps = summary["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["status"], "passed");
    assert_eq!(
        steps[0]["output"]["text"],
        "Fixture response includes seed text."
    );
    assert_eq!(steps[1]["summaryFile"], "steps/step-1/eval-summary.json");
    // The step's own records hold the substituted case.
    let cases = run.packet("steps/step-1/eval-cases.json");
    assert_eq!(
        cases["cases"][0]["input"],
        "Second saw Fixture response includes seed text."
    );
    assert_eq!(
        cases["cases"][0]["expected"]["finalText"],
        "Fixture response includes seed text."
    );
    assert!(run.stdout.contains("step 1 `second` (app/prompt): passed"));
}

#[test]
fn a_bare_output_placeholder_substitutes_the_whole_typed_node() {
    let run = eval_run(&steps_fixture("whole-output.fixture.yaml"), &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let case = &run.packet("steps/step-1/eval-cases.json")["cases"][0];
    // `metadata: "${steps[0].output}"` became the object, not its text.
    assert!(case["metadata"].is_object(), "{case}");
    assert_eq!(case["metadata"]["caseId"], "seed");
    assert_eq!(
        case["metadata"]["finalText"],
        "Fixture response includes seed text."
    );
    assert_eq!(
        case["metadata"]["messages"][0]["content"],
        "Name a seed word."
    );
    assert_eq!(
        case["messages"][1]["content"],
        "Fixture response includes seed text."
    );
}

#[test]
fn json_answers_put_their_fields_at_the_top_of_the_output() {
    let results = steps_fixture("json-answer.results.json");
    let run = eval_run(
        &steps_fixture("json-answer.fixture.yaml"),
        &["--fixture-results", results.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let summary = run.packet("eval-summary.json");
    assert_eq!(
        summary["steps"][0]["output"]["evidence"][0]["title"],
        "Rust ownership"
    );
    let case = &run.packet("steps/step-1/eval-cases.json")["cases"][0];
    assert_eq!(
        case["input"],
        "Summarize the evidence titled Rust ownership."
    );
}

#[test]
fn a_failing_step_stops_the_run_and_later_steps_are_not_run() {
    let run = eval_run(&steps_fixture("stops.fixture.yaml"), &[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let summary = run.packet("eval-summary.json");
    assert_eq!(summary["recommendation"], "reject");
    assert_eq!(summary["steps"][0]["status"], "failed");
    assert_eq!(summary["steps"][1]["status"], "not-run");
    assert!(summary["steps"][1].get("outputDir").is_none());
    assert_eq!(summary["evaluationCounts"]["total"], 1);
    assert!(!run.dir.path().join("steps/step-1").exists());
    assert!(run.stdout.contains("step 1 `second` (app/prompt): not-run"));
}

#[test]
fn a_path_that_does_not_resolve_stops_with_the_placeholder_and_its_place() {
    let run = eval_run(&steps_fixture("unresolved.fixture.yaml"), &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("error: step 1: "), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "unresolved.fixture.yaml:10:9: steps[1].cases[0].input: `${steps[0].output.evidence[0].title}`: the path does not resolve: step 0's `output` has no `.evidence`"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("does not resolve").count(),
        1,
        "{}",
        run.stderr
    );
    // The finished step and the failure are on record.
    let summary = run.packet("eval-summary.json");
    assert_eq!(summary["steps"][0]["status"], "passed");
    assert_eq!(summary["steps"][1]["status"], "errored");
    assert!(
        summary["steps"][1]["error"]
            .as_str()
            .unwrap()
            .contains("does not resolve")
    );
}

#[test]
fn malformed_placeholders_stop_before_any_step_runs() {
    // The negative fixtures (fixtures/eval/invalid/steps-*) are run by
    // `eval::invalid_fixtures_are_rejected_before_anything_runs`; here, that
    // nothing was written.
    let fixture = repo().join("fixtures/eval/invalid/steps-forward-reference/fixture.json");
    let run = eval_run(&fixture, &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("forward or self reference"),
        "{}",
        run.stderr
    );
    assert_eq!(run.packet("eval-summary.json"), Value::Null);
    assert!(!run.dir.path().join("steps").exists());
}

#[test]
fn a_steps_fixture_validates_offline() {
    let (code, stdout, stderr) = crate::support::run(&[
        "eval",
        "validate",
        "--fixture",
        steps_fixture("two-step.fixture.yaml").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("valid steps fixture `two-step` with 2 step(s)"),
        "{stdout}"
    );
}

#[test]
fn a_later_steps_bad_preset_field_is_refused_before_the_first_step_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        steps_fixture("first.fixture.yaml"),
        dir.path().join("first.fixture.yaml"),
    )
    .unwrap();
    let fixture = dir.path().join("bad-second.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsuiteId: bad-second\nsteps:\n  - $ref: ./first.fixture.yaml\n  - schemaVersion: cautilus.evaluation_input.v1\n    surface: app\n    preset: prompt\n    suiteId: second\n    provider: fixture\n    model: m\n    system: [not, a, string]\n    cases:\n      - {caseId: b, input: hi}\n",
    )
    .unwrap();
    let run = eval_run(&fixture, &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("system: [\"not\",\"a\",\"string\"] is not of type \"string\""),
        "{}",
        run.stderr
    );
    // Step 0 never ran.
    assert!(!run.stdout.contains("step 0"), "{}", run.stdout);
}
