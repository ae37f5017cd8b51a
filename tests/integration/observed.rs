//! `cautilus eval evaluate` through the real binary: which preset scores an
//! observed packet (its `schemaVersion` and its declared `surface`/`preset`
//! must agree), the app surface's MUST-be-present fields, and cases with
//! nothing to check (`unchecked`, never a plain pass).

use serde_json::{Value, json};

use crate::support::{read_json, repo, run};

/// The reproduction: an upstream app/chat packet that carries
/// repo/whole-repo's schema id and four production chat captures without
/// provider/model/harness.
const UPSTREAM: &str = "fixtures/eval/observed/upstream-app-chat.observed.json";

fn upstream() -> Value {
    read_json(&repo().join(UPSTREAM))
}

/// Writes `packet` and runs `eval evaluate` on it with `--output`:
/// (exit code, stdout, stderr, the summary if one was written).
fn evaluate(packet: &Value) -> (i32, String, String, Option<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("observed.json");
    std::fs::write(&input, serde_json::to_string_pretty(packet).unwrap()).unwrap();
    let output = dir.path().join("summary.json");
    let (code, stdout, stderr) = run(&[
        "eval",
        "evaluate",
        "--input",
        &input.display().to_string(),
        "--output",
        &output.display().to_string(),
    ]);
    let summary = output.exists().then(|| read_json(&output));
    (code, stdout, stderr, summary)
}

/// A repo/whole-repo evaluation as upstream's runner writes it.
fn whole_repo_evaluation(id: &str) -> Value {
    json!({
        "evaluationId": id,
        "prompt": "Read the repo instructions first, then route the task.",
        "observationStatus": "observed",
        "summary": "Started from AGENTS.md.",
        "entryFile": "AGENTS.md",
        "loadedInstructionFiles": ["AGENTS.md"],
        "instructionSurface": {"surfaceLabel": "workspace_default", "files": []}
    })
}

/// An app/chat evaluation with every MUST-be-present field.
fn app_evaluation(id: &str) -> Value {
    json!({
        "caseId": id,
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "harness": "claude_code",
        "mode": "messaging",
        "durationMs": 1234,
        "observed": {
            "messages": [
                {"role": "user", "content": "Say hello."},
                {"role": "assistant", "content": "Hello there."}
            ],
            "finalText": "Hello there."
        }
    })
}

#[test]
fn the_upstream_app_chat_packet_with_whole_repos_schema_is_refused_naming_both() {
    let (code, stdout, stderr, summary) = evaluate(&upstream());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "schemaVersion `cautilus.evaluation_observed.v1` is repo/whole-repo's observed packet, \
             but the packet declares app/chat"
        ),
        "{stderr}"
    );
    // …and says what the packet should carry.
    assert!(
        stderr.contains(
            "app/chat's observed packet has schemaVersion `cautilus.app_chat_evaluation_inputs.v1`"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("observed.json"), "names the file: {stderr}");
    assert!(summary.is_none(), "nothing is written for a refused packet");
    assert!(!stdout.contains("PASS"), "{stdout}");
}

#[test]
fn a_packet_whose_pair_disagrees_with_its_schema_is_refused_either_way() {
    // The other direction: an app/prompt schema on a packet that says app/chat.
    let mut packet = json!({
        "schemaVersion": "cautilus.app_prompt_evaluation_inputs.v1",
        "surface": "app",
        "preset": "chat",
        "evaluations": [app_evaluation("hello")]
    });
    let (code, _, stderr, _) = evaluate(&packet);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "schemaVersion `cautilus.app_prompt_evaluation_inputs.v1` is app/prompt's observed packet, but the packet declares app/chat"
        ),
        "{stderr}"
    );
    // Half a pair must agree too.
    packet = json!({
        "schemaVersion": "cautilus.evaluation_observed.v1",
        "surface": "app",
        "evaluations": [whole_repo_evaluation("routing")]
    });
    let (code, _, stderr, _) = evaluate(&packet);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "is repo/whole-repo's observed packet, but the packet declares surface `app`"
        ),
        "{stderr}"
    );
}

#[test]
fn a_cross_axis_or_unknown_pair_is_refused_with_the_valid_ones() {
    for (surface, preset, problem) in [
        ("repo", "chat", "`repo/chat` is a cross-axis pair"),
        ("app", "whole-repo", "`app/whole-repo` is a cross-axis pair"),
        ("dev", "repo", "unknown surface `dev`"),
        ("app", "judge", "unknown preset `judge`"),
    ] {
        let packet = json!({
            "schemaVersion": "cautilus.app_chat_evaluation_inputs.v1",
            "surface": surface,
            "preset": preset,
            "evaluations": [app_evaluation("hello")]
        });
        let (code, stdout, stderr, summary) = evaluate(&packet);
        assert_eq!(code, 2, "{surface}/{preset}: {stdout}{stderr}");
        assert!(stderr.contains(problem), "{stderr}");
        assert!(
            stderr.contains(
                "valid surface/preset pairs: repo/whole-repo, repo/skill, app/chat, app/prompt"
            ),
            "{stderr}"
        );
        assert!(summary.is_none());
    }
}

#[test]
fn an_unknown_schema_names_the_declared_pairs_schema() {
    let packet = json!({
        "schemaVersion": "cautilus.chat_observed.v9",
        "surface": "app",
        "preset": "chat",
        "evaluations": [app_evaluation("hello")]
    });
    let (code, _, stderr, _) = evaluate(&packet);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("unknown observed packet schemaVersion `cautilus.chat_observed.v9`; the packet declares app/chat, whose observed packet has schemaVersion `cautilus.app_chat_evaluation_inputs.v1`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cautilus.evaluation_observed.v1 (repo/whole-repo)"),
        "{stderr}"
    );
}

#[test]
fn an_evaluation_that_declares_another_pair_is_refused_naming_it() {
    // No pair at the packet level, but the evaluations say they are app/chat.
    let mut packet = upstream();
    let object = packet.as_object_mut().unwrap();
    object.remove("surface");
    object.remove("preset");
    for evaluation in object["evaluations"].as_array_mut().unwrap() {
        evaluation["surface"] = json!("app");
        evaluation["preset"] = json!("chat");
    }
    let (code, stdout, stderr, summary) = evaluate(&packet);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("evaluations[0].surface: case `refund-window` declares app/chat, but the packet is repo/whole-repo (schemaVersion `cautilus.evaluation_observed.v1`)"),
        "{stderr}"
    );
    assert!(stderr.contains("evaluations[3].surface"), "{stderr}");
    assert!(summary.is_none());
}

#[test]
fn app_must_fields_are_checked_on_every_evaluation_naming_each_missing_one() {
    // The reproduction with the schema id app/chat packets carry: every case
    // lacks provider, model and harness, and each is named.
    let mut packet = upstream();
    packet["schemaVersion"] = json!("cautilus.app_chat_evaluation_inputs.v1");
    let (code, stdout, stderr, summary) = evaluate(&packet);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let ids = [
        "refund-window",
        "reset-password",
        "multi-turn-shipping",
        "out-of-scope",
    ];
    for (i, id) in ids.iter().enumerate() {
        assert!(
            stdout.contains(&format!(
                "ERROR {id} — evaluations[{i}] is missing required fields `provider`, `model`, `harness` (cross-runtime MUST-be-present set"
            )),
            "{stdout}"
        );
    }
    let summary = summary.expect("a summary");
    assert_eq!(summary["recommendation"], "reject");
    assert_eq!(summary["evaluationCounts"]["errored"], 4);
    assert_eq!(summary["evaluationCounts"]["passed"], 0);
    for evaluation in summary["evaluations"].as_array().unwrap() {
        assert_eq!(evaluation["status"], "errored", "{evaluation}");
    }
}

#[test]
fn app_prompt_must_fields_include_the_input_and_typed_values() {
    let mut evaluation = app_evaluation("one-line");
    let object = evaluation.as_object_mut().unwrap();
    object.remove("model");
    object.insert("harness".into(), json!("  "));
    object.insert("mode".into(), json!("workspace"));
    object.insert("durationMs".into(), json!("12"));
    let packet = json!({
        "schemaVersion": "cautilus.app_prompt_evaluation_inputs.v1",
        "surface": "app",
        "preset": "prompt",
        "evaluations": [evaluation]
    });
    let (code, stdout, stderr, summary) = evaluate(&packet);
    assert_eq!(code, 1, "{stdout}{stderr}");
    for part in [
        "ERROR one-line — evaluations[0] is missing required fields `model`, `harness`, `observed.input`",
        "evaluations[0].mode must be `messaging` on the app surface, got \"workspace\"",
        "evaluations[0].durationMs must be a non-negative number of milliseconds, got a string",
    ] {
        assert!(stdout.contains(part), "{part}\n{stdout}");
    }
    assert_eq!(summary.unwrap()["recommendation"], "reject");
}

#[test]
fn a_whole_repo_case_with_no_expectations_is_unchecked_not_accept_now() {
    let mut checked = whole_repo_evaluation("checked-routing");
    checked["expectedEntryFile"] = json!("AGENTS.md");
    let packet = json!({
        "schemaVersion": "cautilus.evaluation_observed.v1",
        "surface": "repo",
        "preset": "whole-repo",
        "suiteId": "routing",
        "evaluations": [checked, whole_repo_evaluation("no-expectations")]
    });
    let (code, stdout, stderr, summary) = evaluate(&packet);
    assert_eq!(code, 1, "not accept-now: {stdout}{stderr}");
    assert!(
        stdout.contains("PASS  checked-routing — matched entryFile"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "UNCHK no-expectations — observed, but nothing was checked: the evaluation declares no expectations"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("recommendation: defer"), "{stdout}");
    assert!(stdout.contains("1 unchecked"), "{stdout}");
    let summary = summary.expect("a summary");
    assert_eq!(summary["recommendation"], "defer");
    assert_eq!(summary["evaluationCounts"]["unchecked"], 1);
    assert_eq!(summary["evaluationCounts"]["passed"], 1);
    assert_eq!(summary["evaluations"][1]["status"], "unchecked");
    assert_eq!(summary["evaluations"][0]["status"], "passed");
}

#[test]
fn an_app_case_with_no_expectations_is_unchecked() {
    let mut expected = app_evaluation("greets");
    expected["expected"] = json!({"finalText": "Hello"});
    let packet = json!({
        "schemaVersion": "cautilus.app_chat_evaluation_inputs.v1",
        "surface": "app",
        "preset": "chat",
        "evaluations": [expected, app_evaluation("just-observed")]
    });
    let (code, stdout, stderr, summary) = evaluate(&packet);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("PASS  greets — final text contains \"Hello\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("UNCHK just-observed — observed, but nothing was checked"),
        "{stdout}"
    );
    let summary = summary.expect("a summary");
    assert_eq!(summary["recommendation"], "defer");
    assert_eq!(summary["evaluationCounts"]["unchecked"], 1);
    assert_eq!(summary["evaluations"][1]["status"], "unchecked");
}

#[test]
fn an_expectation_that_cannot_be_checked_is_an_error_not_a_pass() {
    let mut empty = app_evaluation("empty-want");
    empty["expected"] = json!({"finalText": ""});
    let mut no_text = app_evaluation("snapshot-without-text");
    no_text["expected"] = json!({"snapshot": "golden.txt"});
    let packet = json!({
        "schemaVersion": "cautilus.app_chat_evaluation_inputs.v1",
        "evaluations": [empty, no_text]
    });
    let (code, stdout, stderr, _) = evaluate(&packet);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "ERROR empty-want — evaluations[0].expected.finalText must be a non-empty string"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "ERROR snapshot-without-text — evaluations[1].expected.snapshot has no `snapshotText`"
        ),
        "{stdout}"
    );
}
