//! `cautilus eval test|evaluate|validate` through the real binary: proof
//! fixtures, canned results, negative fixtures and observed packets.

use serde_json::{Value, json};

use crate::support::{read_json, repo, run};

fn fixture(rel: &str) -> String {
    repo().join(rel).display().to_string()
}

#[test]
fn app_prompt_proof_fixture_writes_three_records() {
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &fixture("fixtures/eval/app/prompt/tagline.fixture.json"),
        "--workspace",
        &repo().display().to_string(),
        "--output-dir",
        &out.path().display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("PASS  one-line-behavior-eval — final text contains \"behavior\""),
        "{stdout}"
    );
    assert!(stdout.contains("recommendation: accept-now"), "{stdout}");

    let cases = read_json(&out.path().join("eval-cases.json"));
    assert_eq!(cases["schemaVersion"], "cautilus.app_prompt_test_cases.v1");
    let observed = read_json(&out.path().join("eval-observed.json"));
    assert_eq!(
        observed["schemaVersion"],
        "cautilus.app_prompt_evaluation_inputs.v1"
    );
    let summary = read_json(&out.path().join("eval-summary.json"));
    assert_eq!(
        summary["schemaVersion"],
        "cautilus.app_prompt_evaluation_summary.v1"
    );
    assert_eq!(summary["recommendation"], "accept-now");
    let first = &summary["evaluations"][0];
    // The result packet fields every evaluation records.
    for (key, want) in [
        ("surface", json!("app")),
        ("preset", json!("prompt")),
        (
            "fixtureRef",
            json!("fixtures/eval/app/prompt/tagline.fixture.json"),
        ),
        ("caseId", json!("one-line-behavior-eval")),
        ("provider", json!("anthropic")),
        ("model", json!("claude-sonnet-4-6")),
        ("harness", json!("fixture-backend")),
        ("mode", json!("messaging")),
        ("durationMs", json!(1)),
    ] {
        assert_eq!(first[key], want, "{key} in {first}");
    }
    assert_eq!(
        first["observed"]["finalText"],
        "Fixture response includes behavior."
    );
    assert_eq!(
        first["observed"]["input"],
        "Describe Cautilus in one short sentence."
    );
    assert_eq!(first["observed"]["messages"].as_array().unwrap().len(), 2);
    let text = std::fs::read_to_string(out.path().join("eval-summary.json")).unwrap();
    assert!(
        text.trim_start().starts_with("{\n  \"schemaVersion\""),
        "records keep field order"
    );
}

#[test]
fn app_chat_proof_fixture_is_multi_turn() {
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &fixture("fixtures/eval/app/chat/onboarding.fixture.yaml"),
        "--output-dir",
        &out.path().display().to_string(),
        "--json",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        summary["schemaVersion"],
        "cautilus.app_chat_evaluation_summary.v1"
    );
    let second = &summary["evaluations"][1];
    let messages = second["observed"]["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        4,
        "three turns plus the answer: {messages:?}"
    );
    assert_eq!(messages[3]["role"], "assistant");
}

#[test]
fn canned_results_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    let canned = dir.path().join("canned.json");
    std::fs::write(
        &canned,
        json!({
            "one-line-behavior-eval": "Cautilus scores LLM app behavior.",
            "mentions-plugins": {"finalText": "Teams write Lua scripts."}
        })
        .to_string(),
    )
    .unwrap();
    let out = dir.path().join("run");
    let (code, stdout, _) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &fixture("fixtures/eval/app/prompt/tagline.fixture.json"),
        "--fixture-results",
        &canned.display().to_string(),
        "--output-dir",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 1, "a failed case rejects: {stdout}");
    assert!(stdout.contains("PASS  one-line-behavior-eval"), "{stdout}");
    assert!(stdout.contains("FAIL  mentions-plugins — final text does not contain \"WebAssembly\"; got \"Teams write Lua scripts.\""), "{stdout}");
    assert!(stdout.contains("recommendation: reject"), "{stdout}");
    let summary = read_json(&out.join("eval-summary.json"));
    assert_eq!(
        summary["evaluationCounts"],
        json!({"total": 2, "passed": 1, "failed": 1, "errored": 0})
    );
}

#[test]
fn without_expected_text_the_backend_names_the_case_and_it_is_unchecked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.json");
    std::fs::write(
        &file,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
            "suiteId": "s", "provider": "openai", "model": "gpt-5.4-mini",
            "cases": [{"caseId": "no-expectation", "input": "hi"}]
        })
        .to_string(),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &file.display().to_string(),
        "--workspace",
        &dir.path().display().to_string(),
        "--json",
    ]);
    // Nothing to check is not a pass: the case is `unchecked`, the suite `defer`.
    assert_eq!(code, 1, "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        summary["evaluations"][0]["observed"]["finalText"],
        "Fixture response for no-expectation."
    );
    assert_eq!(summary["evaluations"][0]["status"], "unchecked");
    assert_eq!(summary["evaluationCounts"]["unchecked"], 1);
    assert_eq!(summary["recommendation"], "defer");
    let runs: Vec<_> = std::fs::read_dir(dir.path().join(".cautilus/runs"))
        .unwrap()
        .collect();
    assert_eq!(
        runs.len(),
        1,
        "default output dir is <workspace>/.cautilus/runs/<id>"
    );
}

#[test]
fn invalid_fixtures_are_rejected_before_anything_runs() {
    let invalid = repo().join("fixtures/eval/invalid");
    let mut checked = 0;
    for entry in std::fs::read_dir(&invalid)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
    {
        let file = ["fixture.json", "fixture.yaml"]
            .map(|name| entry.path().join(name))
            .into_iter()
            .find(|file| file.exists())
            .unwrap();
        let expected = std::fs::read_to_string(entry.path().join("expected-error.txt")).unwrap();
        // Each line is text the error must contain.
        let expected: Vec<&str> = expected.lines().filter(|l| !l.is_empty()).collect();
        let (code, _, stderr) =
            run(&["eval", "validate", "--fixture", &file.display().to_string()]);
        assert_eq!(code, 2, "{}: {stderr}", entry.path().display());
        for expected in &expected {
            assert!(
                stderr.contains(expected),
                "{}: expected {expected:?} in {stderr}",
                entry.path().display()
            );
        }
        assert!(
            stderr.contains("fixture."),
            "the error names the file: {stderr}"
        );
        // A typo is said once: not again as the field it stands for missing.
        if let Ok(absent) = std::fs::read_to_string(entry.path().join("absent-error.txt")) {
            assert!(
                !stderr.contains(absent.trim()),
                "{}: {absent:?} should not be in {stderr}",
                entry.path().display()
            );
        }

        let out = tempfile::tempdir().unwrap();
        let run_dir = out.path().join("run");
        let (code, _, stderr) = run(&[
            "eval",
            "test",
            "--provider",
            "fixture",
            "--fixture",
            &file.display().to_string(),
            "--output-dir",
            &run_dir.display().to_string(),
        ]);
        assert_eq!(code, 2, "{stderr}");
        for expected in &expected {
            assert!(stderr.contains(expected), "{expected:?} in {stderr}");
        }
        assert!(
            !run_dir.exists(),
            "nothing was run or written for {}",
            entry.path().display()
        );
        checked += 1;
    }
    assert_eq!(checked, 27);
}

#[test]
fn hostile_nesting_is_refused_quickly_with_its_position() {
    // Each took from a few to ~25 s to be refused before the depth limit
    // (the YAML scanner is quadratic in flow nesting); the position in the
    // message shows the scan stopped at level 65, before any parser ran.
    let dir = tempfile::tempdir().unwrap();
    let indented: String = (0..1_000)
        .map(|i| format!("{}k:\n", " ".repeat(i)))
        .collect();
    let hostile = [
        (
            "flow.fixture.yaml",
            "[".repeat(200_000),
            "line 1, column 65",
        ),
        (
            "object.fixture.json",
            "{\"a\":".repeat(40_000),
            "line 1, column 321",
        ),
        (
            "block.fixture.yml",
            "- ".repeat(10_000),
            "line 1, column 129",
        ),
        ("indented.fixture.yaml", indented, "line 65, column 65"),
    ];
    for (name, text, at) in hostile {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let (code, _, stderr) =
            run(&["eval", "validate", "--fixture", &file.display().to_string()]);
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{name}: nested more than 64 levels deep at {at} (the limit"
            )),
            "{stderr}"
        );
        assert!(stderr.contains("flatten"), "{stderr}");
    }
}

#[test]
fn yaml_aliases_that_multiply_are_refused_before_parsing() {
    // "Billion laughs": nine levels of ten aliases, a few hundred bytes.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..9 {
        let refs = vec![format!("*l{}", level - 1); 10].join(", ");
        text.push_str(&format!("l{level}: &l{level} [{refs}]\n"));
    }
    let file = dir.path().join("laughs.fixture.yaml");
    std::fs::write(&file, text).unwrap();
    let (code, _, stderr) = run(&["eval", "validate", "--fixture", &file.display().to_string()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "laughs.fixture.yaml: its YAML aliases expand to more than 1000000 nodes at line"
        ),
        "{stderr}"
    );
}

#[test]
fn evaluate_scores_a_hand_written_observed_packet() {
    let (code, stdout, stderr) = run(&[
        "eval",
        "evaluate",
        "--input",
        &fixture("fixtures/eval/app/prompt/observed.example.json"),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("PASS  one-line-behavior-eval"), "{stdout}");
}

#[test]
fn evaluate_makes_a_missing_must_field_an_error_naming_it() {
    let mut packet = read_json(&repo().join("fixtures/eval/app/prompt/observed.example.json"));
    packet["evaluations"][0]
        .as_object_mut()
        .unwrap()
        .remove("harness");
    let mut second = packet["evaluations"][0].clone();
    second["caseId"] = json!("empty-final-text");
    second["harness"] = json!("codex_exec");
    second["observed"]["finalText"] = json!("");
    packet["evaluations"].as_array_mut().unwrap().push(second);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("observed.json");
    std::fs::write(&input, packet.to_string()).unwrap();
    let output = dir.path().join("summary.json");
    let (code, stdout, _) = run(&[
        "eval",
        "evaluate",
        "--input",
        &input.display().to_string(),
        "--output",
        &output.display().to_string(),
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(
            "ERROR one-line-behavior-eval — evaluations[0] is missing required field `harness`"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "ERROR empty-final-text — evaluations[1] is missing required field `observed.finalText`"
        ),
        "{stdout}"
    );
    assert_eq!(read_json(&output)["recommendation"], "reject");
}

#[test]
fn evaluate_rejects_an_unknown_schema_naming_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("observed.json");
    std::fs::write(
        &input,
        json!({"schemaVersion": "cautilus.something_else.v1", "evaluations": []}).to_string(),
    )
    .unwrap();
    let (code, _, stderr) = run(&["eval", "evaluate", "--input", &input.display().to_string()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown observed packet schemaVersion `cautilus.something_else.v1`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cautilus.app_chat_evaluation_inputs.v1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cautilus.app_prompt_evaluation_inputs.v1"),
        "{stderr}"
    );
}

#[test]
fn a_preset_outside_the_taxonomy_is_refused_at_load() {
    let error = crate::support::registry()
        .load_path(&cautilus_tests::component("preset-outside"))
        .err()
        .expect("refused");
    let text = error.to_string();
    assert!(text.contains("declares `repo/chat`"), "{text}");
    assert!(text.contains("cross-axis pair"), "{text}");
    assert!(text.contains("the host refuses it"), "{text}");
    assert!(error.is_definition_error());
    let (code, _, stderr) = run(&[
        "plugin",
        "inspect",
        &crate::support::component("preset-outside"),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("valid surface/preset pairs"), "{stderr}");
}

#[test]
fn whole_repo_proof_checks_this_repos_routing_contract() {
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &fixture("fixtures/eval/repo/whole-repo/agents-routing.fixture.json"),
        "--fixture-results",
        &fixture("fixtures/eval/repo/whole-repo/fixture-results.json"),
        "--workspace",
        &repo().display().to_string(),
        "--output-dir",
        &out.path().display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("PASS  route-new-host-import — matched entryFile, instructionFiles, supportingFiles, routing, firstToolCall"), "{stdout}");
    let summary = read_json(&out.path().join("eval-summary.json"));
    assert_eq!(summary["schemaVersion"], "cautilus.evaluation_summary.v1");
    let first = &summary["evaluations"][0];
    for key in [
        "surface",
        "preset",
        "fixtureRef",
        "caseId",
        "provider",
        "harness",
        "mode",
        "durationMs",
    ] {
        assert!(!first[key].is_null(), "{key} missing in {first}");
    }
    assert_eq!(first["mode"], "workspace");
    assert_eq!(first["harness"], "fixture-backend");
    assert!(
        repo().join("AGENTS.md").is_file(),
        "the contract under test exists"
    );
}

#[test]
fn whole_repo_mismatch_fails_and_missing_observation_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let mut canned = read_json(&repo().join("fixtures/eval/repo/whole-repo/fixture-results.json"));
    canned["route-new-host-import"]["routingDecision"]["selectedSkill"] = json!("plugin-runtime");
    canned["route-new-host-import"]["loadedSupportingFiles"] = json!(["docs/ARCHITECTURE.md"]);
    canned.as_object_mut().unwrap().remove("route-question");
    let canned_path = dir.path().join("canned.json");
    std::fs::write(&canned_path, canned.to_string()).unwrap();
    let (code, stdout, _) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &fixture("fixtures/eval/repo/whole-repo/agents-routing.fixture.json"),
        "--fixture-results",
        &canned_path.display().to_string(),
        "--workspace",
        &dir.path().display().to_string(),
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("FAIL  route-new-host-import"), "{stdout}");
    assert!(
        stdout.contains("missing required [\"wit/README.md\"]"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("selectedSkill: expected `wit-contract`, observed Some(\"plugin-runtime\")"),
        "{stdout}"
    );
    assert!(
        stdout.contains("BLOCK route-question — blocked:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no canned observation for case `route-question`"),
        "{stdout}"
    );
    assert!(stdout.contains("recommendation: reject"), "{stdout}");
}

fn skill_run(canned: &Value) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let canned_path = dir.path().join("canned.json");
    std::fs::write(&canned_path, canned.to_string()).unwrap();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &fixture("fixtures/eval/repo/skill/release-notes.fixture.json"),
        "--workspace",
        &fixture("fixtures/eval/repo/skill/workspace"),
        "--fixture-results",
        &canned_path.display().to_string(),
        "--output-dir",
        &out.display().to_string(),
    ]);
    assert!(stderr.is_empty() || code != 2, "{stderr}");
    (code, stdout, read_json(&out.join("eval-summary.json")))
}

#[test]
fn skill_proof_passes_with_repeat_consensus() {
    let canned = read_json(&repo().join("fixtures/eval/repo/skill/fixture-results.json"));
    let (code, stdout, summary) = skill_run(&canned);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(
            "PASS  trigger-on-release-notes-request — invoked as expected (2/3 samples agree)"
        ),
        "{stdout}"
    );
    assert_eq!(
        summary["schemaVersion"],
        "cautilus.skill_evaluation_summary.v1"
    );
    let first = &summary["evaluations"][0];
    assert_eq!(first["sampling"]["sampleCount"], 3);
    assert_eq!(first["sampling"]["consensusCount"], 2);
    assert_eq!(first["sampling"]["stable"], true);
    assert_eq!(first["durationMs"], 3, "three fixture samples of 1 ms each");
    let execution = &summary["evaluations"][2];
    assert_eq!(
        execution["metrics"]["uncached_tokens"], 19000.0,
        "total − cache reads"
    );
}

#[test]
fn skill_without_consensus_is_unstable_and_fails() {
    let mut canned = read_json(&repo().join("fixtures/eval/repo/skill/fixture-results.json"));
    canned["trigger-on-release-notes-request"][1]["invoked"] = json!(false);
    let (code, stdout, summary) = skill_run(&canned);
    assert_eq!(code, 1);
    assert!(stdout.contains("FAIL  trigger-on-release-notes-request — expected must_invoke, no consensus: 1/3 samples matched"), "{stdout}");
    assert_eq!(summary["evaluationCounts"]["unstable"], 1);
    assert_eq!(summary["recommendation"], "reject");
}

#[test]
fn skill_threshold_overrun_degrades_and_defers() {
    let mut canned = read_json(&repo().join("fixtures/eval/repo/skill/fixture-results.json"));
    canned["execute-release-notes"]["total_tokens"] = json!(90000);
    let (code, stdout, summary) = skill_run(&canned);
    assert_eq!(code, 1, "defer is not accept-now");
    assert!(stdout.contains("DEGR  execute-release-notes — passed but over thresholds: total_tokens 90000.0 > 60000.0"), "{stdout}");
    assert_eq!(summary["recommendation"], "defer");
    assert_eq!(
        summary["evaluations"][2]["thresholdFindings"][0]["metric"],
        "total_tokens"
    );
}

#[test]
fn skill_forbidden_command_fails_the_execution() {
    let mut canned = read_json(&repo().join("fixtures/eval/repo/skill/fixture-results.json"));
    canned["execute-release-notes"]["commands"]
        .as_array_mut()
        .unwrap()
        .push(json!("git push origin main"));
    let (code, stdout, _) = skill_run(&canned);
    assert_eq!(code, 1);
    assert!(
        stdout
            .contains("FAIL  execute-release-notes — command log contains forbidden \"git push\""),
        "{stdout}"
    );
}

#[test]
fn skill_cases_are_validated_with_paths() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skill.json");
    std::fs::write(
        &file,
        json!({
            "schemaVersion": "cautilus.evaluation_input.v1", "surface": "repo", "preset": "skill", "suiteId": "s",
            "cases": [
                {"caseId": "t", "evaluationKind": "trigger", "prompt": "p"},
                {"caseId": "e", "evaluationKind": "execution", "prompt": "p", "expected": {"finalText": "x"}, "repeatCount": 2, "minConsensusCount": 3}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let (code, _, stderr) = run(&["eval", "validate", "--fixture", &file.display().to_string()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cases[0].expectedTrigger: is required for a trigger case"),
        "{stderr}"
    );
    assert!(stderr.contains("cases[1].expected: unknown case field `expected`; repo/skill cases declare `expectedTrigger` or `thresholds`"), "{stderr}");
    assert!(
        stderr.contains("cases[1].minConsensusCount: must be between 1 and repeatCount (2), got 3"),
        "{stderr}"
    );
}

#[test]
fn skill_samples_without_observations_block_instead_of_passing() {
    let mut canned = read_json(&repo().join("fixtures/eval/repo/skill/fixture-results.json"));
    canned
        .as_object_mut()
        .unwrap()
        .remove("no-trigger-on-unrelated-request");
    let (code, stdout, summary) = skill_run(&canned);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("BLOCK no-trigger-on-unrelated-request — blocked: 3 of 3 samples produced no observation"), "{stdout}");
    assert_eq!(summary["recommendation"], "defer");
}

#[test]
fn an_observed_packet_without_evaluations_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    for schema in [
        "cautilus.app_prompt_evaluation_inputs.v1",
        "cautilus.evaluation_observed.v1",
        "cautilus.skill_evaluation_inputs.v1",
    ] {
        let input = dir.path().join("observed.json");
        std::fs::write(
            &input,
            json!({"schemaVersion": schema, "evaluations": []}).to_string(),
        )
        .unwrap();
        let (code, stdout, stderr) =
            run(&["eval", "evaluate", "--input", &input.display().to_string()]);
        assert_eq!(code, 2, "{schema}: {stdout}{stderr}");
        assert!(stderr.contains("evaluations: is"), "{schema}: {stderr}");
    }
}
