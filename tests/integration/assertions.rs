//! Fixture assertions through scorer plugins, through the real binary:
//! suite-level and per-case lists, required and optional, weights,
//! negation, definition errors naming the assertion's path.

use std::path::Path;

use serde_json::Value;

use crate::support::{eval_run, repo};

fn eval_test(fixture: &Path) -> (i32, String, String, Value) {
    let run = eval_run(fixture, &[]);
    let summary = run.packet("eval-summary.json");
    (run.code, run.stdout, run.stderr, summary)
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
fn a_failed_negated_assertion_says_what_matched() {
    let fixture = repo().join("fixtures/eval/assertions/negated/negated.fixture.yaml");
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let details: Vec<(String, String)> = case(&summary, "matched")["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["status"], "failed", "{a}");
            (
                a["name"].as_str().unwrap().to_string(),
                a["detail"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let want = [
        ("contains", r#"negated: found "response" at char 8"#),
        ("icontains", r#"negated: found "RESPONSE" at char 8"#),
        ("contains-any", r#"negated: found "for" at char 17"#),
        (
            "contains-all",
            r#"negated: found every one of ["Fixture", "for"]"#,
        ),
        (
            "starts-with",
            r#"negated: the output starts with "Fixture""#,
        ),
        ("ends-with", r#"negated: the output ends with "matched.""#),
        (
            "equals",
            r#"negated: the output is exactly "Fixture response for matched.""#,
        ),
        (
            "regex",
            r#"negated: /resp.nse/ matched: found "response" at char 8"#,
        ),
        (
            "literal-regex",
            r#"negated: /^Fixture/ matched: found "Fixture" at char 0"#,
        ),
        ("levenshtein", "negated: edit distance 0 (similarity 1.000)"),
    ];
    assert_eq!(details.len(), want.len(), "{details:?}");
    for ((name, detail), (want_name, want_detail)) in details.iter().zip(want) {
        assert_eq!(name, want_name);
        assert!(detail.starts_with(want_detail), "{name}: {detail}");
    }
    // The case line says it too, never a bare `negated`.
    assert!(
        stdout.contains(r#"assertion `contains` failed: negated: found "response" at char 8"#),
        "{stdout}"
    );
    assert!(!stdout.contains("failed: negated;"), "{stdout}");
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

/// Each optional assertion of `host-checks.fixture.yaml`: (name, passed,
/// text its detail contains).
const HOST_CHECKS: &[(&str, bool, &str)] = &[
    ("grader-json-pass", true, "found hello"),
    (
        "grader-json-fail",
        false,
        "failed: mentions goodbye; no goodbye in the output",
    ),
    ("plain-exit-0", true, ""),
    (
        "plain-crash",
        false,
        "exited with status 3; stderr: grader exploded",
    ),
    ("grader-timeout", false, "timed out after 300 ms"),
    ("duration-within", true, ""),
    (
        "tool-calls-uncaptured",
        false,
        "tool_calls uncaptured: the provider did not report it",
    ),
    ("judge-pass", true, "fixture judge: found [\"hello\"]"),
    ("judge-fail", false, "fixture judge: missing [\"goodbye\"]"),
];

#[test]
fn code_graders_metrics_and_judges_pass_and_fail() {
    let fixture = repo().join("fixtures/eval/assertions/host-checks.fixture.yaml");
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let outcomes = case(&summary, "greeting")["assertions"].as_array().unwrap();
    assert_eq!(outcomes.len(), HOST_CHECKS.len());
    for (outcome, (name, passed, detail)) in outcomes.iter().zip(HOST_CHECKS) {
        assert_eq!(outcome["name"], *name);
        assert_eq!(outcome["passed"], *passed, "{outcome}");
        let got = outcome["detail"].as_str().unwrap_or_default();
        assert!(got.contains(detail), "{name}: {got}");
    }
    // A plain string is a required criterion graded by the judge.
    let plain = &case(&summary, "plain-criteria")["assertions"][0];
    assert_eq!(plain["name"], "The answer contains \"thanks\"");
    assert_eq!(plain["passed"], true);
    assert_eq!(plain["required"], true);
}

#[test]
fn a_failed_required_host_check_fails_the_case() {
    let dir = tempfile::tempdir().unwrap();
    let base =
        std::fs::read_to_string(repo().join("fixtures/eval/assertions/host-checks.fixture.yaml"))
            .unwrap()
            .replace(
                "./graders/",
                &format!("{}/fixtures/eval/assertions/graders/", repo().display()),
            );
    for (from, to, want) in [
        (
            "'The answer contains \"thanks\"'",
            "'The answer contains \"sorry\"'",
            "assertion `The answer contains \"sorry\"` failed: fixture judge: missing",
        ),
        (
            "'The answer contains \"thanks\"'",
            "{ type: execution-metrics, max_llm_calls: 1 }",
            "llm_calls uncaptured",
        ),
        (
            "'The answer contains \"thanks\"'",
            "{ type: code-grader, command: [sh, -c, \"echo nope >&2; exit 1\"] }",
            "the code grader exited with status 1; stderr: nope",
        ),
    ] {
        let fixture = dir.path().join("required.yaml");
        std::fs::write(&fixture, base.replace(from, to)).unwrap();
        let (code, stdout, stderr, summary) = eval_test(&fixture);
        assert_eq!(code, 1, "{to}: {stdout}{stderr}");
        let failed = case(&summary, "plain-criteria");
        assert_eq!(failed["status"], "failed", "{to}");
        assert!(stdout.contains(want), "{to}: {stdout}");
    }
}

#[test]
fn host_check_and_judge_definitions_are_checked_before_running() {
    let (code, stdout, stderr, summary) =
        eval_test(&repo().join("fixtures/eval/assertions/no-judge.fixture.yaml"));
    assert_eq!(code, 2, "{stdout}");
    assert!(summary.is_null(), "nothing ran");
    assert!(
        stderr.contains("cases[0].assertions[0]: a natural-language criterion (or `type: judge`) is graded by a judge model, and this suite has none; configure a judge model at suite level, e.g. `judge: {provider:"),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let base =
        std::fs::read_to_string(repo().join("fixtures/eval/assertions/host-checks.fixture.yaml"))
            .unwrap();
    for (from, to, want) in [
        (
            "max_tool_calls: 5",
            "max_tool_callz: 5",
            "cases[0].assertions[6]: unknown execution-metrics bound `max_tool_callz`",
        ),
        (
            "command: [sh, -c, \"exit 0\"]",
            "command: []",
            "cases[0].assertions[2]: `command` is missing",
        ),
        (
            "command: [sh, ./graders/mentions.sh, hello]",
            "command: [./graders/missing.sh]",
            "cases[0].assertions[0]: program `./graders/missing.sh` not found",
        ),
        (
            "judge: { provider: fixture, model: fixture-judge }",
            "judge: { provider: fixture }",
            "judge.model: is missing or empty",
        ),
    ] {
        let fixture = dir.path().join("bad.yaml");
        std::fs::write(&fixture, base.replace(from, to)).unwrap();
        let (code, stdout, stderr, summary) = eval_test(&fixture);
        assert_eq!(code, 2, "{to}: {stdout}{stderr}");
        assert!(summary.is_null(), "nothing ran");
        assert!(stderr.contains(want), "{to}: {stderr}");
    }
}

#[test]
fn every_scorer_that_requests_a_model_gets_the_suite_judge() {
    // Your own judge-like scorer (it requests `model` and asks it to repeat
    // the output): granted the suite's judge, refused without one.
    let dir = tempfile::tempdir().unwrap();
    // Beside the fixture: a fixture names components inside its root.
    std::fs::copy(
        crate::support::component("judge-probe"),
        dir.path().join("probe.wasm"),
    )
    .unwrap();
    let probe = "./probe.wasm";
    let fixture = dir.path().join("own-judge.yaml");
    let suite = |judge: &str| {
        format!(
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: own-judge\nprovider: fixture\nmodel: m\n{judge}cases:\n  - caseId: a\n    input: Say hello.\n    expected: {{ finalText: Fixture }}\n    assertions:\n      - {{ type: '{probe}', required: false }}\n"
        )
    };
    std::fs::write(&fixture, suite("judge: { provider: fixture, model: j }\n")).unwrap();
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let detail = case(&summary, "a")["assertions"][0]["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The call reached the judge provider (which wants the judge scorer's
    // JSON message), so it was granted, not denied.
    assert!(detail.contains("fixture judge needs"), "{detail}");
    assert!(!detail.contains("Denied"), "{detail}");

    std::fs::write(&fixture, suite("")).unwrap();
    let (code, _, stderr, summary) = eval_test(&fixture);
    assert_eq!(code, 2, "{stderr}");
    assert!(summary.is_null());
    assert!(
        stderr.contains(
            "scorer `ask-model` calls a model, and this suite has none; configure a judge model"
        ),
        "{stderr}"
    );
}

#[test]
fn a_scorer_path_with_a_scorer_id_resolves_against_the_fixture() {
    // `type: probe.wasm#ask-model` (no `/`) names a file beside the fixture,
    // whatever the current directory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        crate::support::component("judge-probe"),
        dir.path().join("probe.wasm"),
    )
    .unwrap();
    let fixture = dir.path().join("suite.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: beside\nprovider: fixture\nmodel: m\njudge: { provider: fixture, model: j }\ncases:\n  - caseId: a\n    input: Say hello.\n    expected: { finalText: Fixture }\n    assertions:\n      - { type: 'probe.wasm#ask-model', required: false }\n",
    )
    .unwrap();
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let assertion = &case(&summary, "a")["assertions"][0];
    assert_eq!(assertion["name"], "probe.wasm#ask-model");
    assert!(
        assertion["detail"]
            .as_str()
            .is_some_and(|d| d.contains("fixture judge needs")),
        "{assertion}"
    );
}

#[test]
fn tool_trajectory_assertions_pass_fail_and_refuse_uncaptured_calls() {
    let dir = repo().join("fixtures/eval/assertions/tool-trajectory");
    let results = dir.join("fixture-results.json");
    let run = eval_run(
        &dir.join("tool-trajectory.fixture.yaml"),
        &["--fixture-results", results.to_str().unwrap()],
    );
    let summary = run.packet("eval-summary.json");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);

    let told = case(&summary, "routed-as-told");
    assert_eq!(told["status"], "passed", "{told}");
    let assertions = told["assertions"].as_array().unwrap();
    assert_eq!(assertions.len(), 9);
    assert!(assertions.iter().all(|a| a["status"] == "passed"), "{told}");

    // Every optional check fails on the stray trace, each saying why; the
    // required `tools-succeeded` fails the case.
    let strayed = case(&summary, "strayed");
    assert_eq!(strayed["status"], "failed", "{strayed}");
    let details: Vec<(&str, &str)> = strayed["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["status"], "failed", "{a}");
            (a["name"].as_str().unwrap(), a["detail"].as_str().unwrap())
        })
        .collect();
    let expected = [
        (
            "tool-called",
            "`Read` with {\"file_path\":\"AGENTS.md\"} was not called; calls: Bash, Write",
        ),
        ("tool-not-called", "`Write` was called 1 time(s)"),
        (
            "tool-trajectory",
            "call 1 should be `Read`, was `Bash`; calls: Bash, Write",
        ),
        (
            "tool-trajectory",
            "not called: `Read`; not in `tools`: `Write` (call 2); calls: Bash, Write",
        ),
        (
            "tool-trajectory",
            "not in `tools`: `Write` (call 2); calls: Bash, Write",
        ),
        ("tool-trajectory", "not called: `Read`; calls: Bash, Write"),
        ("tool-order", "`Read` never called; calls: Bash, Write"),
        ("tool-count", "2 tool calls, expected at most 1"),
        ("tools-succeeded", "failed: `Bash` (call 1)"),
    ];
    assert_eq!(details.len(), expected.len());
    for ((name, detail), (want_name, want)) in details.iter().zip(expected) {
        assert_eq!(*name, want_name);
        assert!(detail.ends_with(want), "{name}: {detail} (want …{want})");
    }

    // No tool calls captured: never a vacuous pass, negated or not.
    let blind = case(&summary, "not-captured");
    assert_eq!(blind["status"], "failed", "{blind}");
    for assertion in blind["assertions"].as_array().unwrap() {
        assert_eq!(assertion["status"], "uncaptured", "{assertion}");
        assert_eq!(assertion["passed"], false);
        let detail = assertion["detail"].as_str().unwrap();
        assert!(
            detail.contains("harness `fixture-backend`) did not capture tool calls")
                && detail.contains("`claude-code`"),
            "{detail}"
        );
    }
}

#[test]
fn retrieval_scorers_compare_retrieved_sources_with_the_expected_ones() {
    let fixture = repo().join("fixtures/eval/assertions/retrieval/retrieval.fixture.yaml");
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(code, 1, "one case misses in its top 3: {stdout}{stderr}");
    let scores = |id: &str| -> Vec<(String, f64, bool)> {
        case(&summary, id)["assertions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["name"].as_str().unwrap().to_string(),
                    (a["score"].as_f64().unwrap_or(0.0) * 1000.0).round() / 1000.0,
                    a["passed"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    let s = |n: &str, v: f64, p: bool| (n.to_string(), v, p);
    // Relevant at ranks 1 and 3 of 3 (a chunk-matched source and a whole one).
    assert_eq!(
        scores("refund-policy"),
        [
            s("hit-rate@k", 1.0, true),
            s("recall@k", 1.0, true),
            s("precision@k", 0.667, true),
            s("mrr", 1.0, true),
            // (1 + 1/log2 3... ) DCG 1.5 over IDCG 1 + 1/log2(3)
            s("ndcg@k", 0.92, true),
        ]
    );
    assert_eq!(scores("shipping-times")[3], s("mrr", 0.5, true));
    assert_eq!(scores("shipping-times")[4], s("ndcg@k", 0.631, true));
    // Relevant only at rank 4: outside the top 3, but mrr (no k) sees it.
    let warranty = scores("warranty");
    assert_eq!(warranty[0], s("hit-rate@k", 0.0, false));
    assert_eq!(warranty[3], s("mrr", 0.25, false));
    assert!(
        stdout.contains("expected warranty/terms.md not in the top 3 retrieved"),
        "{stdout}"
    );
}

#[test]
fn the_judge_grades_a_rubric_classifies_with_choice_scores_and_selects() {
    let fixture = repo().join("fixtures/eval/assertions/judge-modes/judge-modes.fixture.yaml");
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(
        code, 1,
        "the curt answer is classified curt: {stdout}{stderr}"
    );
    let first = |id: &str| case(&summary, id)["assertions"][0].clone();
    assert_eq!(first("rubric")["passed"], true);
    // A choice: the label's score, the label recorded.
    let warm = first("warm");
    assert_eq!(
        (warm["score"].as_f64(), warm["label"].as_str()),
        (Some(1.0), Some("warm"))
    );
    let curt = first("curt");
    assert_eq!(
        (curt["score"].as_f64(), curt["label"].as_str()),
        (Some(0.0), Some("curt"))
    );
    assert!(
        curt["detail"]
            .as_str()
            .unwrap()
            .contains("the judge chose `curt` (score 0), below the threshold 0.5"),
        "{curt}"
    );
    // `select` grades one member of a JSON answer; a pointer to nothing fails.
    let selected = &case(&summary, "selected")["assertions"];
    assert_eq!(selected[0]["passed"], true, "{selected}");
    assert_eq!(selected[1]["passed"], false);
    assert!(
        selected[1]["detail"]
            .as_str()
            .unwrap()
            .contains("nothing at `/missing`"),
        "{selected}"
    );
}

#[test]
fn embedding_similarity_compares_the_answer_with_the_reference() {
    let fixture = repo().join("fixtures/eval/assertions/embedding/embedding.fixture.yaml");
    let (code, stdout, stderr, summary) = eval_test(&fixture);
    assert_eq!(code, 1, "the far answer shares no words: {stdout}{stderr}");
    let close = &case(&summary, "close")["assertions"][0];
    assert_eq!(close["passed"], true, "{close}");
    assert!(close["score"].as_f64().unwrap() > 0.8, "{close}");
    let far = &case(&summary, "far")["assertions"][0];
    assert_eq!(far["score"], 0.0);
    assert!(
        far["detail"].as_str().unwrap().contains(
            "cosine similarity 0.000 to the reference (model `fixture-embedding`) is below 0.6"
        ),
        "{far}"
    );
}
