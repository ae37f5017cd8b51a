//! A suite too large for the checking pass to keep until the run (its
//! preset plans set aside on disk in the run's directory): every case runs
//! with its own input and is recorded in case order, through the fixture
//! backend on the worker threads and through an API with calls in flight.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::concurrency::{command, echo_server};
use crate::support::{cautilus, output, read_json, statuses, validate_and_test};

/// Cases of this size are past what the checking pass keeps in its second
/// batch of 64 (its first is kept, then both are set aside, then the third
/// as it comes).
const CASES: usize = 150;

/// The input of case `i`: its marker among 60 kB of its own filler.
fn input(i: usize) -> String {
    let filler = char::from(b'a' + (i % 26) as u8).to_string().repeat(60_000);
    format!("echo {i} <case-{i}> {filler}")
}

/// An app/prompt suite whose case `i` passes when the answer holds its
/// marker.
fn large_suite(dir: &Path, provider: &str) -> PathBuf {
    let cases: Vec<Value> = (0..CASES)
        .map(|i| {
            json!({"caseId": format!("case-{i:03}"), "input": input(i),
                   "expected": {"finalText": format!("<case-{i}>")}})
        })
        .collect();
    let suite = json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": "large", "provider": provider, "model": "loopback-model", "cases": cases,
    });
    let path = dir.join("large.fixture.json");
    std::fs::write(&path, suite.to_string()).unwrap();
    path
}

/// Each evaluation's case id and the start of the user's turn it records.
fn recorded(out: &Path) -> Vec<(String, String)> {
    read_json(&out.join("eval-observed.json"))["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let turn = e["observed"]["messages"][0]["content"].as_str().unwrap();
            (
                e["caseId"].as_str().unwrap().to_string(),
                turn.chars().take(20).collect(),
            )
        })
        .collect()
}

fn expected_turns() -> Vec<(String, String)> {
    (0..CASES)
        .map(|i| (format!("case-{i:03}"), input(i).chars().take(20).collect()))
        .collect()
}

#[test]
fn a_suite_too_large_to_keep_runs_each_case_with_its_own_plan_inline() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = large_suite(dir.path(), "fixture");
    // Every third case answers without its marker.
    let canned: serde_json::Map<String, Value> = (0..CASES)
        .map(|i| {
            let answer = if i % 3 == 0 {
                "no".into()
            } else {
                format!("yes <case-{i}>")
            };
            (format!("case-{i:03}"), json!({"finalText": answer}))
        })
        .collect();
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, Value::Object(canned).to_string()).unwrap();
    for jobs in ["1", "2"] {
        let out = dir.path().join(format!("run-{jobs}"));
        let (code, stdout, stderr) = output(
            cautilus()
                .args(["eval", "test", "--quiet", "--jobs", jobs, "--fixture"])
                .arg(&fixture)
                .arg("--fixture-results")
                .arg(&answers)
                .arg("--output-dir")
                .arg(&out)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 1, "{stdout}\n{stderr}");
        assert_eq!(recorded(&out), expected_turns(), "--jobs {jobs}");
        let summary = read_json(&out.join("eval-summary.json"));
        let statuses = statuses(&summary);
        let want: Vec<&str> = (0..CASES)
            .map(|i| {
                if i.is_multiple_of(3) {
                    "failed"
                } else {
                    "passed"
                }
            })
            .collect();
        assert_eq!(statuses, want, "--jobs {jobs}");
    }
}

#[test]
fn a_suite_too_large_to_keep_runs_each_case_with_its_own_plan_with_calls_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = large_suite(dir.path(), "openai");
    // Earlier cases answer later, so answers arrive out of case order.
    let (server, _) = echo_server(|i| Duration::from_millis(((CASES - i) % 7 * 5) as u64));
    let out = dir.path().join("run");
    let (code, stdout, stderr) = output(command(&server, &fixture, &out, "4").output().unwrap());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(server.requests().len(), CASES, "one call per case");
    assert_eq!(recorded(&out), expected_turns());
    let summary = read_json(&out.join("eval-summary.json"));
    assert_eq!(summary["evaluationCounts"]["passed"], CASES, "{summary}");
}

/// A JSONL suite of `count` cases whose ids are `case-{i}`, with case
/// `later` reusing the id of case `first` for each pair.
fn suite_with_duplicates(dir: &Path, count: usize, pairs: &[(usize, usize)]) -> PathBuf {
    let lines: Vec<String> = (0..count)
        .map(|i| {
            let id = pairs
                .iter()
                .find(|(_, later)| *later == i)
                .map_or(i, |(first, _)| *first);
            json!({"caseId": format!("case-{id}"), "input": format!("question {i}")}).to_string()
        })
        .collect();
    std::fs::write(dir.join("cases.jsonl"), lines.join("\n") + "\n").unwrap();
    let suite = json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": "dups", "provider": "fixture", "model": "m", "cases": "./cases.jsonl",
    });
    let path = dir.join("dups.fixture.json");
    std::fs::write(&path, suite.to_string()).unwrap();
    path
}

#[test]
fn duplicate_case_ids_among_many_are_refused_naming_both_cases() {
    // Near and far apart, in one batch and across batches, at the ends.
    let families: [&[(usize, usize)]; 4] = [
        &[(0, 1)],
        &[(7, 19_999)],
        &[(1_499, 1_500), (3, 12_345)],
        &[(0, 19_999), (64, 128), (10_000, 10_001)],
    ];
    for pairs in families {
        let dir = tempfile::tempdir().unwrap();
        let fixture = suite_with_duplicates(dir.path(), 20_000, pairs);
        for (command, (code, stdout, stderr)) in
            validate_and_test(&fixture, &dir.path().join("out"))
        {
            assert_eq!(code, 2, "{pairs:?} {command}: {stdout}{stderr}");
            for (first, later) in pairs {
                let said = format!(
                    "cases[{later}].caseId: duplicate caseId `case-{first}` (also cases[{first}]); case ids must be unique"
                );
                assert!(
                    stderr.contains(&said),
                    "{pairs:?} {command}: no `{said}` in {stderr}"
                );
            }
            assert_eq!(
                stderr.matches("duplicate caseId").count(),
                pairs.len(),
                "{pairs:?} {command}: {stderr}"
            );
            // Nothing ran.
            assert!(!dir.path().join("out/cells.jsonl").exists(), "{pairs:?}");
        }
    }
}
