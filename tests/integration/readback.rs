//! Every run `eval test` writes can be read back: `cautilus report` takes
//! each kind of run directory (one fixture's run, an experiment's, a
//! project's, a suite's inside it) and `latest`; `eval compare` says which
//! cases changed verdict between two runs of any kind; and `eval evaluate
//! --fixture` on a run's own observed packet gives the run's verdicts.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{cautilus, output, read_json};

fn write(root: &Path, path: &str, text: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn run(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let mut command = cautilus();
    command.current_dir(cwd).args(args);
    output(command.output().unwrap())
}

/// The directory a run printed after `records:`.
fn records(stdout: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("records: "))
        .unwrap_or_else(|| panic!("no records line: {stdout}"));
    PathBuf::from(line.trim())
}

/// A project: `plain` (one run of three cases) and `tones` (two variants,
/// two trials, each variant with its own canned answers).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "cautilus.toml", "dir = \"records\"\n");
    let case = |id: &str, want: &str| json!({"caseId": id, "input": format!("say {id}"), "assertions": [{"type": "contains", "value": want}]});
    let plain = json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": "plain", "provider": "fixture", "model": "m", "fixtureResults": "plain-answers.json",
        "cases": [case("one", "1"), case("two", "2"), case("three", "3")],
    });
    write(root, "evals/plain.fixture.json", &plain.to_string());
    write(
        root,
        "evals/plain-answers.json",
        &json!({"one": {"finalText": "1"}, "two": {"finalText": "2"}, "three": {"finalText": "no"}})
            .to_string(),
    );
    let tones = json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": "tones", "provider": "fixture", "model": "m", "trials": 2,
        "variants": {"calm": {"fixtureResults": "calm.json"}, "warm": {"fixtureResults": "warm.json"}},
        "baseline": "calm",
        "cases": [case("hi", "hello"), case("bye", "goodbye")],
    });
    write(root, "evals/tones.fixture.json", &tones.to_string());
    let answers = json!({"hi": {"finalText": "hello"}, "bye": {"finalText": "goodbye"}});
    write(root, "evals/calm.json", &answers.to_string());
    write(root, "evals/warm.json", &answers.to_string());
    dir
}

#[test]
fn every_kind_of_run_directory_and_latest_makes_every_report() {
    let dir = project();
    let root = dir.path();
    // A project run, then one fixture's run, then an experiment's.
    let (code, stdout, stderr) = run(root, &["eval", "test"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let project_run = records(&stdout);
    let (_, stdout, _) = run(
        root,
        &["eval", "test", "--fixture", "evals/plain.fixture.json"],
    );
    let plain_run = records(&stdout);
    let experiment_run = root.join("experiment-run");
    let (code, stdout, stderr) = run(
        root,
        &[
            "eval",
            "test",
            "--fixture",
            "evals/tones.fixture.json",
            "--output-dir",
            experiment_run.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let suite_runs: Vec<PathBuf> = ["plain", "tones"]
        .iter()
        .map(|id| {
            let summary = read_json(&project_run.join("project-summary.json"));
            let suite = summary["suites"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["id"] == *id)
                .unwrap()
                .clone();
            project_run.join(suite["runDir"].as_str().unwrap())
        })
        .collect();

    let mut runs: Vec<(PathBuf, Vec<&str>)> = vec![
        (project_run.clone(), vec!["plain", "tones"]),
        (plain_run.clone(), vec!["plain"]),
        (experiment_run.clone(), vec!["tones"]),
        (suite_runs[0].clone(), vec!["plain"]),
        (suite_runs[1].clone(), vec!["tones"]),
    ];
    runs.push((PathBuf::from("latest"), vec!["plain"]));
    for (run_dir, suites) in &runs {
        let arg = run_dir.to_str().unwrap();
        for format in ["markdown", "junit"] {
            let (code, stdout, stderr) = run(root, &["report", format, arg]);
            assert_eq!(code, 0, "{format} {arg}: {stderr}");
            for suite in suites {
                assert!(stdout.contains(suite), "{format} {arg}: {stdout}");
            }
            let file = root.join(format!("report.{format}"));
            let (code, _, stderr) =
                run(root, &["report", format, arg, "-o", file.to_str().unwrap()]);
            assert_eq!(code, 0, "{stderr}");
            assert!(std::fs::read_to_string(&file).unwrap().contains(suites[0]));
        }
        let pages = root.join("pages");
        let _ = std::fs::remove_dir_all(&pages);
        let target = if *run_dir == project_run {
            pages.clone()
        } else {
            std::fs::create_dir_all(&pages).unwrap();
            pages.join("one.html")
        };
        let (code, _, stderr) = run(
            root,
            &["report", "html", arg, "-o", target.to_str().unwrap()],
        );
        assert_eq!(code, 0, "html {arg}: {stderr}");
        let written: Vec<_> = std::fs::read_dir(&pages).unwrap().collect();
        assert_eq!(written.len(), suites.len(), "html {arg}");
    }
    // The project's JUnit has a testsuite per suite; its Markdown a row.
    let (_, junit, _) = run(root, &["report", "junit", project_run.to_str().unwrap()]);
    for suite in ["plain", "tones"] {
        assert!(
            junit.contains(&format!("<testsuite name=\"{suite}\"")),
            "{junit}"
        );
    }
    // A project's HTML is a page per suite: it needs a directory.
    let (code, _, stderr) = run(root, &["report", "html", project_run.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("-o DIR"), "{stderr}");

    // `latest` is the newest finished run: a newer run still going (or
    // killed) and an empty directory are passed over.
    let runs_dir = root.join("records/runs");
    for (name, text) in [
        ("29991231T000000000Z-0001", Some(r#"{"status": "running"}"#)),
        ("29991231T000000000Z-0002", None),
    ] {
        std::fs::create_dir_all(runs_dir.join(name)).unwrap();
        if let Some(text) = text {
            std::fs::write(runs_dir.join(name).join("run.json"), text).unwrap();
        }
    }
    let (code, stdout, stderr) = run(root, &["report", "markdown", "latest"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("plain"), "{stdout}");
    // Another project's runs: no runs there.
    let elsewhere = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(elsewhere.path(), &["report", "markdown", "latest"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no runs here for `latest`"), "{stderr}");
}

#[test]
fn eval_compare_lists_the_cases_that_changed_verdict_in_runs_of_any_kind() {
    let dir = project();
    let root = dir.path();
    let experiment = |name: &str| {
        let out = root.join(name);
        let (code, stdout, stderr) = run(
            root,
            &[
                "eval",
                "test",
                "--fixture",
                "evals/tones.fixture.json",
                "--output-dir",
                out.to_str().unwrap(),
            ],
        );
        assert!(code <= 1, "{stdout}{stderr}");
        out
    };
    let before = experiment("before");
    let again = experiment("again");
    // The same answers: nothing changed, exit 0.
    let (code, stdout, stderr) = run(
        root,
        &[
            "eval",
            "compare",
            before.to_str().unwrap(),
            again.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("0 changed"), "{stdout}");
    assert!(stdout.contains("no case regressed"), "{stdout}");
    // Variant `warm` now fails `hi` and passes nothing new.
    write(
        root,
        "evals/warm.json",
        &json!({"hi": {"finalText": "hey"}, "bye": {"finalText": "goodbye"}}).to_string(),
    );
    let after = experiment("after");
    let compare = |a: &Path, b: &Path| {
        let (code, stdout, stderr) = run(
            root,
            &[
                "eval",
                "compare",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "--json",
            ],
        );
        assert!(code < 2, "{stderr}");
        (code, serde_json::from_str::<Value>(&stdout).unwrap())
    };
    let (code, report) = compare(&before, &after);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["regressions"], 1);
    assert_eq!(
        report["verdicts"]["changed"],
        json!([{"suite": "tones", "variant": "warm", "caseId": "hi", "change": "regressed",
                "before": "passed", "after": "failed", "beforePassed": "2/2", "afterPassed": "0/2"}])
    );
    assert_eq!(report["verdicts"]["unchanged"], 3);
    // Every group's packets were checked for parity (2 variants × 2 trials).
    assert_eq!(report["parity"]["checked"], 4, "{report}");
    assert_eq!(report["parity"]["holds"], true);
    // The other way round it is fixed, and nothing regressed.
    let (code, report) = compare(&after, &before);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["verdicts"]["changed"][0]["change"], "fixed");
    let (_, text, _) = run(
        root,
        &[
            "eval",
            "compare",
            before.to_str().unwrap(),
            after.to_str().unwrap(),
        ],
    );
    assert!(
        text.contains("REGRESSED  tones hi [warm]: passed (2/2) → failed (0/2)"),
        "{text}"
    );

    // Project runs: a case added to a suite is new, a removed one removed.
    let (_, stdout, _) = run(root, &["eval", "test"]);
    let first = records(&stdout);
    let mut plain = read_json(&root.join("evals/plain.fixture.json"));
    let cases = plain["cases"].as_array_mut().unwrap();
    cases.remove(0);
    cases.push(json!({"caseId": "four", "input": "say four", "assertions": [{"type": "contains", "value": "4"}]}));
    write(root, "evals/plain.fixture.json", &plain.to_string());
    write(
        root,
        "evals/plain-answers.json",
        &json!({"two": {"finalText": "2"}, "three": {"finalText": "3"}, "four": {"finalText": "4"}})
            .to_string(),
    );
    let (_, _, _) = run(root, &["eval", "test"]);
    let (code, stdout, stderr) = run(
        root,
        &[
            "eval",
            "compare",
            first.to_str().unwrap(),
            "latest",
            "--json",
        ],
    );
    // `warm` failed `hi` in both: unchanged; `three` was fixed.
    assert_eq!(code, 0, "nothing regressed: {stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["a"]["kind"], "project");
    assert_eq!(
        report["verdicts"]["new"],
        json!([{"suite": "plain", "caseId": "four", "after": "passed"}])
    );
    assert_eq!(
        report["verdicts"]["removed"],
        json!([{"suite": "plain", "caseId": "one", "before": "passed"}])
    );
    let changed: Vec<(&str, &str)> = report["verdicts"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["caseId"].as_str().unwrap(), c["change"].as_str().unwrap()))
        .collect();
    assert_eq!(changed, [("three", "fixed")], "{report}");
    // A run that cannot be read: exit 2.
    let (code, _, _) = run(
        root,
        &[
            "eval",
            "compare",
            first.to_str().unwrap(),
            "/nonexistent-run",
        ],
    );
    assert_eq!(code, 2);
}

#[test]
fn eval_evaluate_with_the_fixture_gives_the_runs_own_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A family of assertion kinds, passing and failing, required and not,
    // negated, case- and suite-level, beside a preset expectation.
    let cases = json!([
        {"caseId": "expected-only", "input": "a", "expected": {"finalText": "hello"}},
        {"caseId": "contains", "input": "a", "assertions": [{"type": "contains", "value": "world"}]},
        {"caseId": "contains-fails", "input": "a", "assertions": [{"type": "contains", "value": "nope"}]},
        {"caseId": "icontains", "input": "a", "assertions": [{"type": "icontains", "value": "WORLD"}]},
        {"caseId": "starts-ends", "input": "a", "assertions": [{"type": "starts-with", "value": "hello"}, {"type": "ends-with", "value": "!"}]},
        {"caseId": "regex", "input": "a", "assertions": [{"type": "regex", "value": "^hello\\s+w"}]},
        {"caseId": "equals-fails", "input": "a", "assertions": [{"type": "equals", "value": "exactly this"}]},
        {"caseId": "negated", "input": "a", "assertions": [{"type": "contains", "value": "world", "negate": true}]},
        {"caseId": "optional", "input": "a", "assertions": [{"type": "equals", "value": "zzz", "required": false}]},
        {"caseId": "json", "input": "a", "assertions": [{"type": "is-json"}]},
        {"caseId": "any-all", "input": "a", "assertions": [{"type": "contains-any", "value": ["x", "world"]}, {"type": "contains-all", "value": ["hello", "world"]}]},
        {"caseId": "levenshtein", "input": "a", "assertions": [{"type": "levenshtein", "value": "hello world", "max_distance": 2}]},
        {"caseId": "both", "input": "a", "expected": {"finalText": "hello"}, "assertions": [{"type": "contains", "value": "absent"}]},
    ]);
    let answers: serde_json::Map<String, Value> = cases
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = c["caseId"].as_str().unwrap();
            let text = if id == "json" {
                "{\"hello\": \"world\"}"
            } else {
                "hello world!"
            };
            (id.to_string(), json!({"finalText": text}))
        })
        .collect();
    write(root, "answers.json", &Value::Object(answers).to_string());
    let fixture = json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": "family", "provider": "fixture", "model": "m", "fixtureResults": "answers.json",
        "assertions": [{"type": "icontains", "value": "hello"}],
        "cases": cases,
    });
    write(root, "family.fixture.json", &fixture.to_string());
    let out = root.join("run");
    let (code, stdout, stderr) = run(
        root,
        &[
            "eval",
            "test",
            "--fixture",
            "family.fixture.json",
            "--output-dir",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let summary = read_json(&out.join("eval-summary.json"));
    let statuses = crate::support::statuses(&summary);
    assert!(
        statuses.contains(&"passed") && statuses.contains(&"failed"),
        "{statuses:?}"
    );

    let observed = out.join("eval-observed.json");
    let rescored = root.join("rescored.json");
    let (code, stdout, stderr) = run(
        root,
        &[
            "eval",
            "evaluate",
            "--input",
            observed.to_str().unwrap(),
            "--fixture",
            "family.fixture.json",
            "--output",
            rescored.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "the run's exit status: {stdout}{stderr}");
    let again = read_json(&rescored);
    let strip = |mut packet: Value| {
        packet.as_object_mut().unwrap().remove("evaluatedAt");
        packet
    };
    assert_eq!(
        strip(again),
        strip(summary.clone()),
        "the run's own verdicts"
    );
    assert!(stdout.contains("FAIL  contains-fails"), "{stdout}");

    // Without the fixture the packet's assertions are not there to check:
    // said on stderr, naming the fixture to give.
    let (_, _, stderr) = run(
        root,
        &["eval", "evaluate", "--input", observed.to_str().unwrap()],
    );
    assert!(
        stderr.contains("unchecked") && stderr.contains("--fixture family.fixture.json"),
        "{stderr}"
    );
    // A case the packet has no answer for fails, saying so.
    let mut short = read_json(&observed);
    short["evaluations"].as_array_mut().unwrap().remove(1);
    write(root, "short.json", &short.to_string());
    let (code, stdout, stderr) = run(
        root,
        &[
            "eval",
            "evaluate",
            "--input",
            "short.json",
            "--fixture",
            "family.fixture.json",
            "--json",
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    let packet: Value = serde_json::from_str(&stdout).unwrap();
    let contains = packet["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["caseId"] == "contains")
        .unwrap();
    assert_ne!(contains["status"], "passed", "{contains}");
}
