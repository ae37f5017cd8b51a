//! A judge whose verdicts cannot be used (a small model's `"score":
//! "1.5"`, a score out of range, no score) makes its assertions `errored`,
//! and that is never silent: the case line names each one (an optional
//! one too), the counts say how many errored beside the case statuses, a
//! case nothing else checked is `errored` (not `unchecked`), and the
//! experiment's aggregates say how many cells each score dropped out of.
//! The fixture is fixtures/eval/assertions/judge-errors/.

use cautilus_tests::model_server::{ModelServer, Reply};
use serde_json::{Value, json};

use crate::support::{EvalRun, eval_run_with, repo};

const KEY: &str = "sk-judge-failures-5151";

/// A judge that answers every call with `verdict` (the model's content).
fn judge(verdict: Value) -> ModelServer {
    ModelServer::start(move |_, _| {
        Reply::json(
            200,
            json!({"model": "judge-model",
                   "choices": [{"message": {"role": "assistant", "content": verdict.to_string()}}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
            .to_string(),
        )
    })
}

/// Verdicts no judged assertion can use (the score must be a number).
fn bad_verdicts() -> Vec<Value> {
    vec![
        json!({"passed": true, "score": "1.5", "reasoning": "fine"}),
        json!({"passed": true, "score": "high", "reasoning": "fine"}),
        json!({"passed": "yes", "score": null, "reasoning": "no verdict"}),
    ]
}

fn run(server: &ModelServer, args: &[&str]) -> EvalRun {
    let fixture = repo().join("fixtures/eval/assertions/judge-errors/judge-errors.fixture.yaml");
    eval_run_with(&fixture, args, |c| {
        c.env("OPENAI_BASE_URL", &server.url)
            .env("OPENAI_API_KEY", KEY);
    })
}

/// The summary evaluation of case `id`.
fn case<'a>(summary: &'a Value, id: &str) -> &'a Value {
    summary["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["caseId"] == id)
        .unwrap_or_else(|| panic!("no case {id}: {summary}"))
}

/// The terminal line of case `id`.
fn line<'a>(stdout: &'a str, id: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.contains(&format!(" {id} — ")))
        .unwrap_or_else(|| panic!("no line for {id}:\n{stdout}"))
}

#[test]
fn errored_judges_are_named_counted_and_never_leave_a_case_unchecked() {
    for verdict in bad_verdicts() {
        let server = judge(verdict.clone());
        let run = run(&server, &[]);
        let out = format!("{verdict}\n{}\n{}", run.stdout, run.stderr);
        assert_eq!(run.code, 1, "{out}");
        let summary = run.packet("eval-summary.json");

        // (a) optional judge errored: passed, but named on its line and counted.
        let optional = line(&run.stdout, "optional-judge-errored");
        assert!(optional.starts_with("  PASS "), "{out}");
        assert!(
            optional.contains("optional assertion `polite` could not be checked"),
            "{out}"
        );
        let evaluation = case(&summary, "optional-judge-errored");
        assert_eq!(evaluation["status"], "passed", "{out}");
        assert_eq!(evaluation["assertionsErrored"], 1, "{out}");

        // (b) every assertion errored: errored, naming them all.
        let every = line(&run.stdout, "every-judge-errored");
        assert!(every.starts_with("  ERROR "), "{out}");
        assert!(!every.contains("declares no expectations"), "{out}");
        for name in ["greets", "short", "The answer is friendly"] {
            assert!(
                every.contains(&format!("assertion `{name}`")),
                "{name}: {out}"
            );
        }
        assert!(
            every.contains("none of its 3 assertions could be checked"),
            "{out}"
        );
        assert_eq!(case(&summary, "every-judge-errored")["status"], "errored");

        // (c) a failure beside an errored judge: failed, the judge named,
        // and the counts never say nothing errored.
        let failed = line(&run.stdout, "failed-beside-errored-judge");
        assert!(failed.starts_with("  FAIL "), "{out}");
        assert!(failed.contains("assertion `equals` failed"), "{out}");
        assert!(
            failed.contains("assertion `farewell` could not be checked"),
            "{out}"
        );
        assert_eq!(
            case(&summary, "failed-beside-errored-judge")["assertionsErrored"],
            1
        );
        let counts = &summary["evaluationCounts"];
        assert_eq!(counts["assertionsErrored"], 5, "{out}");
        assert!(
            run.stdout.contains(
                "recommendation: reject (3 cases: 1 passed, 1 failed, 1 errored; 5 assertions errored)"
            ),
            "{out}"
        );
    }
}

#[test]
fn a_failed_case_with_an_errored_judge_alone_still_shows_the_errored_judge() {
    // The case on its own: no errored case to make the counts look right.
    let server = judge(bad_verdicts()[0].clone());
    let run = run(&server, &["--case", "failed-beside-errored-judge"]);
    let out = format!("{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{out}");
    // (a filtered run is an experiment: its summary says so)
    let gate = line_with(&run.stdout, "default errored");
    assert!(
        gate.contains("1 assertion in 1 cell could not be carried out"),
        "{out}"
    );
    let record = run.packet("experiment.json");
    assert_eq!(
        record["aggregates"]["default"]["assertionsErrored"],
        json!({"assertions": 1, "cells": 1}),
        "{out}"
    );
    // Unfiltered, the same case alone: the counts say it.
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("one.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "one",
            "provider": "fixture", "model": "canned",
            "judge": {"provider": "openai", "model": "judge-model"},
            "cases": [{"caseId": "c", "input": "Say bye.", "assertions": [
                {"type": "equals", "value": "Goodbye."},
                {"type": "judge", "criteria": "a farewell", "name": "farewell"}]}]
        })
        .to_string(),
    )
    .unwrap();
    let run = eval_run_with(&fixture, &[], |c| {
        c.env("OPENAI_BASE_URL", &server.url)
            .env("OPENAI_API_KEY", KEY);
    });
    let out = format!(
        "{}
{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stdout.contains(
            "recommendation: reject (1 cases: 0 passed, 1 failed, 0 errored; 1 assertion errored)"
        ),
        "{out}"
    );
}

#[test]
fn a_case_its_preset_failed_still_names_the_judge_that_errored_beside_it() {
    // The preset's own expectation fails (no assertion does): the errored
    // required judge, and a failed assertion, are named after its reason.
    let server = judge(bad_verdicts()[0].clone());
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("preset-failed.fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "preset-failed",
            "provider": "fixture", "model": "canned",
            "judge": {"provider": "openai", "model": "judge-model"},
            "cases": [
                {"caseId": "judge-only", "input": "Say bye.",
                 "expected": {"finalText": "Berlin"},
                 "assertions": [{"type": "judge", "criteria": "a farewell", "name": "farewell"}]},
                {"caseId": "judge-and-assertion", "input": "Say bye.",
                 "expected": {"finalText": "Berlin"},
                 "assertions": [
                    {"type": "contains", "value": "London", "name": "london"},
                    {"type": "judge", "criteria": "a farewell", "name": "farewell"},
                    {"type": "judge", "criteria": "polite", "name": "polite", "required": false}]}
            ]
        })
        .to_string(),
    )
    .unwrap();
    // The system under test says goodbye, not Berlin.
    let answers = dir.path().join("answers.json");
    std::fs::write(
        &answers,
        json!({"judge-only": "Goodbye!", "judge-and-assertion": "Goodbye!"}).to_string(),
    )
    .unwrap();
    let answers = answers.to_str().unwrap();
    let run = eval_run_with(&fixture, &["--fixture-results", answers], |c| {
        c.env("OPENAI_BASE_URL", &server.url)
            .env("OPENAI_API_KEY", KEY);
    });
    let out = format!("{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{out}");
    let summary = run.packet("eval-summary.json");
    for id in ["judge-only", "judge-and-assertion"] {
        let line = line(&run.stdout, id);
        assert!(line.starts_with("  FAIL "), "{id}: {out}");
        assert!(
            line.contains("Berlin"),
            "the preset's reason stays first: {out}"
        );
        assert!(
            line.contains("assertion `farewell` could not be checked"),
            "{id}: {out}"
        );
        assert_eq!(case(&summary, id)["status"], "failed", "{out}");
        assert!(
            case(&summary, id)["summary"]
                .as_str()
                .unwrap()
                .contains("assertion `farewell` could not be checked"),
            "{id}: {out}"
        );
    }
    let both = line(&run.stdout, "judge-and-assertion");
    assert!(both.contains("assertion `london` failed"), "{out}");
    assert!(
        both.contains("optional assertion `polite` could not be checked"),
        "{out}"
    );
    assert_eq!(
        case(&summary, "judge-and-assertion")["assertionsErrored"],
        2
    );
    assert!(
        run.stdout.contains(
            "recommendation: reject (2 cases: 0 passed, 2 failed, 0 errored; 3 assertions errored)"
        ),
        "{out}"
    );
}

fn line_with<'a>(stdout: &'a str, what: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with {what}:\n{stdout}"))
}

#[test]
fn the_aggregates_say_how_many_cells_each_score_dropped_out_of() {
    let server = judge(bad_verdicts()[0].clone());
    let run = run(&server, &["--trials", "2"]);
    let out = format!("{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{out}");
    let record = run.packet("experiment.json");
    let scores = &record["aggregates"]["default"]["scores"];
    // A score every cell dropped is listed, with no mean.
    assert_eq!(
        scores["polite"],
        json!({"n": 0, "mean": null, "sem": null, "dropped": 2}),
        "{out}"
    );
    assert_eq!(scores["farewell"]["dropped"], 2, "{out}");
    assert_eq!(scores["equals"]["n"], 2, "{out}");
    assert_eq!(scores["equals"]["dropped"], 0, "{out}");
    assert!(
        run.stdout
            .contains("polite — (no cell gave a score; 2 dropped)"),
        "{out}"
    );
    // Each trial prints its counts, not a recommendation of its own.
    assert!(
        run.stdout
            .contains("  3 cases: 1 passed, 1 failed, 1 errored; 5 assertions errored"),
        "{out}"
    );
    assert!(!run.stdout.contains("recommendation:"), "{out}");
}
