//! Tests of [`super`]: odd hand-made records read as `load` reads them.
use super::*;
use serde_json::json;

fn write(dir: &Path, name: &str, value: &Value) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

/// The typed parse read `dir` (not `load`), and as `load` reads it.
fn agrees(dir: &Path) -> Outline {
    let quick = quick(dir).expect("read by the typed parse");
    assert_eq!(quick, Outline::of(&load(dir).unwrap()));
    quick
}

#[test]
fn a_plain_run_outlines_as_its_report_whatever_its_members_hold() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "run.json",
        &json!({"status": "completed", "startedAt": "2026-01-01T00:00:00.000Z", "endedAt": 5}),
    );
    write(
        d,
        "eval-summary.json",
        &json!({
            "schemaVersion": "cautilus.app_prompt_evaluation_summary.v1",
            "suiteId": "s", "suiteDisplayName": "", "surface": 3,
            "recommendation": "defer",
            "evaluations": [
                {"caseId": "a", "status": "passed", "durationMs": 12.5, "costUsd": 0.1,
                 "provider": "p", "model": "m", "harness": 7,
                 "observed": {"finalText": "x", "deep": [[[{"k": null}]]]},
                 "assertions": [{"name": "x", "score": 0.25, "detail": null, "extra": [1]},
                                {"score": 1, "passed": false, "weight": null}, {}]},
                {"caseId": "b", "status": 5, "durationMs": "12", "costUsd": null,
                 "assertions": {"not": "an array"}, "provider": null},
                "not an object",
                [1, 2],
                {"caseId": "c", "status": "failed", "status": "errored", "costUsd": 1, "costUsd": 2,
                 "assertionScore": 0.5, "assertions": [{"score": 0.5, "label": "l"}, {"score": 0}]},
                {},
            ],
        }),
    );
    let o = agrees(d);
    assert_eq!(o.cells.len(), 6);
    assert_eq!(o.header.counts["errored"], 3);
    assert_eq!(o.header.targets, ["p / m / ?", "? / ? / ?"]);
    assert_eq!(o.header.cost_usd, Some(2.1));
    assert_eq!(
        o.header.started_at.as_deref(),
        Some("2026-01-01T00:00:00.000Z")
    );

    // Interrupted; run.json not JSON.
    std::fs::write(d.join("run.json"), "{").unwrap();
    write(
        d,
        "eval-summary.json",
        &json!({"suiteId": "s", "interrupted": null, "evaluations": []}),
    );
    assert_eq!(agrees(d).header.status, "interrupted");
}

#[test]
fn what_the_typed_parse_cannot_read_is_read_by_load() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for text in [
        "{\"evaluations\": [",
        "{\"evaluations\": {}}",
        "{\"suiteId\": \"s\"}",
        "[1]",
        "{\"evaluations\": []} x",
        // What `serde_json::Value` refuses in a member not kept.
        "{\"evaluations\": [{\"observed\": 1e400}]}",
        "{\"evaluations\": [{\"observed\": [\"\\udc00\"]}]}",
        "{\"x\": \"\u{1}\", \"evaluations\": []}",
    ] {
        std::fs::write(d.join("eval-summary.json"), text).unwrap();
        assert!(quick(d).is_none(), "{text}");
        let (a, b) = (outline(d).unwrap_err(), load(d).unwrap_err());
        assert_eq!(a.to_string(), b.to_string());
    }
    assert!(quick(&d.join("nothing")).is_none());
    // Not UTF-8 in a member not kept.
    std::fs::write(
        d.join("eval-summary.json"),
        b"{\"x\": \"\xff\", \"evaluations\": []}",
    )
    .unwrap();
    assert!(quick(d).is_none());
    assert!(load(d).is_err());
    // Assertions `load` reads as empty ones (no score).
    for assertion in [
        r#"{"name": 3, "score": 1.0}"#,
        r#"{"score": 1.0, "required": "yes"}"#,
        r#"{"score": 1.0, "score": 0.5}"#,
        r#"["n", "passed", true, 0.5]"#,
        "5",
    ] {
        let text = format!(
            "{{\"suiteId\": \"s\", \"evaluations\": [{{\"caseId\": \"a\", \"assertions\": [{{\"score\": 0.25}}, {assertion}]}}]}}"
        );
        std::fs::write(d.join("eval-summary.json"), &text).unwrap();
        assert!(quick(d).is_none(), "{text}");
        assert_eq!(
            outline(d).unwrap(),
            Outline::of(&load(d).unwrap()),
            "{text}"
        );
    }
}

#[test]
fn an_experiment_outlines_as_its_report_its_groups_read_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let evaluation = |case: &str, status: &str, score: f64| {
        json!({"caseId": case, "status": status, "durationMs": 10, "provider": "fixture",
               "model": "m1", "harness": "h", "assertions": [{"name": "a", "score": score}]})
    };
    write(
        d,
        "variants/small/trial-1/eval-summary.json",
        &json!({"evaluations": [evaluation("c1", "passed", 1.0), evaluation("c2", "failed", 0.5),
                                evaluation("c1", "failed", 0.0), 4]}),
    );
    write(
        d,
        "variants/large/trial-1/eval-summary.json",
        &json!({"evaluations": "no"}),
    );
    write(d, "variants/large/trial-2/eval-summary.json", &json!([]));
    write(
        d,
        "experiment.json",
        &json!({
            "schemaVersion": "cautilus.experiment.v1",
            "suiteId": "models", "suiteDisplayName": "Models", "status": "completed",
            "passed": true, "startedAt": "t0", "finishedAt": "t1", "baseline": "small",
            "variants": [{"name": "small", "overrides": {"model": "m1"}}],
            "aggregates": {"small": {"n": 1}, "large": {}, "small": {"n": 2}},
            "cells": [
                {"variant": "small", "trial": 1, "caseId": "c1", "record": "variants/small/trial-1", "costUsd": 0.5},
                {"variant": "small", "trial": 1, "caseId": "c1", "record": "variants/small/trial-1", "status": "passed"},
                {"variant": "small", "trial": 1, "caseId": "c2", "record": "variants/small/trial-1"},
                {"variant": "large", "trial": 1, "caseId": "c1", "record": "variants/large/trial-1",
                 "status": "passed", "costUsd": 0.25, "provider": "fixture", "model": "m2"},
                {"variant": "large", "trial": 2, "caseId": "c1", "record": "variants/large/trial-2", "status": "errored"},
                {"caseId": "c3", "record": "../outside", "status": "passed"},
                {"caseId": "c4", "record": 5, "status": "passed"},
                "not a cell",
            ],
            "gates": [{"nonsense": true}],
        }),
    );
    let o = agrees(d);
    assert_eq!(o.variants, ["small", "large"]);
    assert_eq!(o.cells.len(), 8);
    assert_eq!(o.header.kind, "experiment");
    assert_eq!(o.header.passed, Some(true));
    assert_eq!(o.cells[0].status, "failed");
    assert_eq!(o.cells[0].cost_usd, Some(0.5));
    // Merged (its groups' records not beside it): the cells alone.
    std::fs::remove_dir_all(d.join("variants")).unwrap();
    agrees(d);
}
