//! The quality engine through the binary: a two-variant suite with trials
//! on the fixture backend and on cassette replay, its statistics, the
//! comparison with the baseline, gates and the exit code, filtered runs,
//! errored cells, and the experiment record.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{cautilus, output, read_json, repo};

const FIXTURE: &str = "fixtures/eval/experiments/greeting-variants.fixture.yaml";

/// A copy of the example experiment in `dir` (with its canned answers),
/// its text edited by `edit`.
fn experiment(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let source = repo().join("fixtures/eval/experiments");
    for name in ["answers-current.json", "answers-candidate.json"] {
        std::fs::copy(source.join(name), dir.join(name)).unwrap();
    }
    let text = std::fs::read_to_string(repo().join(FIXTURE)).unwrap();
    let path = dir.join("greeting-variants.fixture.yaml");
    std::fs::write(&path, edit(text)).unwrap();
    path
}

/// `eval test` of `fixture` with `dir` as workspace; (exit code, stdout,
/// stderr, the experiment record or null).
fn run(dir: &Path, fixture: &Path, name: &str, args: &[&str]) -> (i32, String, String, Value) {
    let out = dir.join(name);
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(dir)
        .arg("--output-dir")
        .arg(&out)
        .args(args)
        .env("PATH", "/usr/bin:/bin");
    let (code, stdout, stderr) = output(command.output().unwrap());
    let record = out.join("experiment.json");
    let record = if record.exists() {
        read_json(&record)
    } else {
        Value::Null
    };
    (code, stdout, stderr, record)
}

fn gate<'a>(record: &'a Value, variant: &str, name: &str) -> &'a Value {
    record["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["variant"] == variant && g["gate"] == name)
        .unwrap_or_else(|| panic!("no gate {variant} {name} in {}", record["gates"]))
}

#[test]
fn two_variants_with_trials_are_compared_and_gated() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = experiment(dir.path(), |t| t);
    let (code, stdout, stderr, record) = run(dir.path(), &fixture, "run", &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(record["schemaVersion"], "cautilus.experiment.v1");
    assert_eq!(record["status"], "completed");
    assert_eq!(record["passed"], true);
    assert_eq!(record["baseline"], "current");
    // 3 cases run (one skipped): two with 3 trials, one with 1, per variant.
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 14);
    assert_eq!(
        record["skipped"],
        serde_json::json!([{"caseIndex": 3, "caseId": "greet-legacy", "reason": "the old portal is being retired"}])
    );
    let ada = cells
        .iter()
        .find(|c| c["caseId"] == "greet-ada" && c["variant"] == "current" && c["trial"] == 2)
        .unwrap();
    assert_eq!(ada["status"], "failed");
    assert_eq!(ada["output"], "Hi there.");
    assert_eq!(ada["tags"], serde_json::json!(["returning"]));
    assert_eq!(ada["model"], "small-v1");
    assert_eq!(ada["record"], "variants/current/trial-2");
    assert_eq!(ada["scores"]["contains"], 0.0);
    assert_eq!(ada["assertions"][0]["status"], "failed");
    // Each group is an ordinary run with its packets.
    assert!(
        dir.path()
            .join("run/variants/candidate/trial-3/eval-summary.json")
            .exists()
    );

    let current = &record["aggregates"]["current"];
    assert_eq!(current["cells"], 7);
    assert!((current["passRate"].as_f64().unwrap() - 4.0 / 7.0).abs() < 1e-9);
    // greet-bo passes 1 of 3 trials: pass@3 = 1, pass^3 = 0.
    assert_eq!(current["passAtK"]["3"], 1.0);
    assert_eq!(current["passHatK"]["3"], 0.0);
    let candidate = &record["aggregates"]["candidate"];
    assert!((candidate["passRate"].as_f64().unwrap() - 6.0 / 7.0).abs() < 1e-9);
    assert_eq!(candidate["scores"]["similar"]["n"], 7);

    let comparison = &record["comparison"][0];
    assert_eq!(comparison["candidate"], "candidate");
    assert_eq!(comparison["pairs"], 7);
    assert_eq!(comparison["mcnemar"]["improvements"], 2);
    assert_eq!(comparison["mcnemar"]["regressions"], 0);
    assert!(
        comparison["scores"]["similar"]["meanDelta"]
            .as_f64()
            .unwrap()
            > 0.3
    );
    assert_eq!(comparison["scores"]["similar"]["ciMethod"], "bootstrap");

    let pass_rate = gate(&record, "candidate", "passRate.min");
    assert_eq!(pass_rate["passed"], true);
    assert_eq!(pass_rate["threshold"], 0.8);
    // The baseline is not gated (only the errored rule applies to it).
    assert!(
        record["gates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["variant"] == "current")
            .all(|g| g["gate"] == "errored")
    );
    assert!(
        stdout.contains("PASS  candidate passRate.min — pass rate 0.8571 meets the 0.8 floor"),
        "{stdout}"
    );
    assert!(
        stdout.contains("candidate vs current (7 paired cells)"),
        "{stdout}"
    );
    assert!(stdout.contains("SKIP  greet-legacy — the old portal is being retired"));
    assert!(stdout.contains("experiment passed"), "{stdout}");
    assert!(record["fingerprints"]["config"].as_str().unwrap().len() == 64);

    // The same cells with a stricter gate: exit 1, the gate says why.
    let strict = experiment(dir.path(), |t| t.replace("min: 0.8", "min: 0.9"));
    let (code, stdout, _, record) = run(dir.path(), &strict, "strict", &[]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(record["passed"], false);
    assert!(
        stdout.contains("FAIL  candidate passRate.min — pass rate 0.8571 is below the 0.9 floor"),
        "{stdout}"
    );
    assert!(stdout.contains("experiment failed"), "{stdout}");

    // A completed experiment has nothing to resume.
    let mut command = cautilus();
    command
        .args(["eval", "test", "--resume"])
        .arg(dir.path().join("strict"));
    let (code, _, stderr) = output(command.output().unwrap());
    assert_eq!(code, 2);
    assert!(stderr.contains("this experiment completed"), "{stderr}");

    // --json prints the record itself.
    let (code, stdout, _, _) = run(dir.path(), &strict, "json", &["--json"]);
    assert_eq!(code, 1);
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["schemaVersion"], "cautilus.experiment.v1");
    assert_eq!(printed["passed"], false);
}

#[test]
fn filtered_runs_demote_gates_to_informational() {
    let dir = tempfile::tempdir().unwrap();
    let strict = experiment(dir.path(), |t| t.replace("min: 0.8", "min: 0.95"));
    // greet-bo alone fails the pass-rate floor, but a filtered run never blocks on it.
    let (code, stdout, stderr, record) = run(dir.path(), &strict, "case", &["--case", "greet-b*"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(record["filtered"], true);
    assert_eq!(record["cells"].as_array().unwrap().len(), 6);
    let pass_rate = gate(&record, "candidate", "passRate.min");
    assert_eq!(pass_rate["passed"], false);
    assert_eq!(pass_rate["informational"], true);
    assert!(stdout.contains("INFO  candidate passRate.min"), "{stdout}");
    assert!(
        stdout.contains(
            "(filtered: its declared gates are informational; an errored cell still fails it)"
        ),
        "{stdout}"
    );

    // Without the baseline there is nothing to compare: informational, never blocking.
    let (code, stdout, _, record) = run(
        dir.path(),
        &strict,
        "variant",
        &["--variant", "candidate", "--trials", "1"],
    );
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(record["comparison"], serde_json::json!([]));
    assert_eq!(record["cells"].as_array().unwrap().len(), 3, "--trials 1");
    let delta = gate(&record, "candidate", "scores.similar.minDeltaVsBaseline");
    assert_eq!(delta["informational"], true);
    assert!(
        delta["message"].as_str().unwrap().contains("no baseline"),
        "{delta}"
    );

    // A pattern that matches nothing is a usage error naming it.
    let (code, _, stderr, _) = run(dir.path(), &strict, "none", &["--case", "nobody"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--case `nobody` matches no case"),
        "{stderr}"
    );
    let (code, _, stderr, _) = run(dir.path(), &strict, "none2", &["--variant", "nightly"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--variant `nightly` matches no variant; variants: current, candidate"),
        "{stderr}"
    );
}

#[test]
fn an_experiment_replays_from_its_cassette_with_one_trial() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = experiment(dir.path(), |t| t);
    let (code, stdout, stderr, recorded) =
        run(dir.path(), &fixture, "record", &["--replay", "record-new"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(recorded["cells"].as_array().unwrap().len(), 14);
    assert!(
        dir.path()
            .join(".cautilus/cassettes/greeting-variants.json")
            .exists()
    );

    // Trials collapse to 1 under replay-strict; every answer comes from the cassette.
    let (code, stdout, stderr, replayed) = run(
        dir.path(),
        &fixture,
        "replay",
        &["--replay", "replay-strict"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let cells = replayed["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6, "2 variants × 3 cases × 1 trial");
    assert!(cells.iter().all(|c| c["trial"] == 1));
    let candidate = &replayed["aggregates"]["candidate"];
    assert_eq!(candidate["passRate"], 1.0);
    let recorded_first = recorded["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["variant"] == "candidate" && c["caseId"] == "greet-bo" && c["trial"] == 1)
        .unwrap();
    let replayed_first = cells
        .iter()
        .find(|c| c["variant"] == "candidate" && c["caseId"] == "greet-bo")
        .unwrap();
    assert_eq!(replayed_first["output"], recorded_first["output"]);
    assert_eq!(gate(&replayed, "candidate", "passRate.min")["passed"], true);
    assert!(stdout.contains("experiment passed"), "{stdout}");
}

#[test]
fn errored_cells_always_fail_and_the_default_policy_gates_assertions() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("errs.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: errs
provider: openai
model: m1
trials: 2
fixtureResults: answers.json
assertions:
  - { type: contains, value: Hi }
gates:
  passRate: { min: 0.1 }
cases:
  - { caseId: ok, input: Hi, expected: { finalText: Hi } }
  - { caseId: broken, input: Hi, expected: { finalText: Hi } }
",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("answers.json"),
        r#"{"ok": "Hi there", "broken": 42}"#,
    )
    .unwrap();
    let (code, stdout, _, record) = run(dir.path(), &fixture, "errs", &[]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(gate(&record, "default", "passRate.min")["passed"], true);
    let errored = gate(&record, "default", "errored");
    assert_eq!(errored["passed"], false);
    assert!(
        stdout.contains("FAIL  default errored — 2 of 4 cells errored"),
        "{stdout}"
    );
    // The errored case was never answered: its assertions were not evaluated.
    let broken = record["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["caseId"] == "broken")
        .unwrap();
    assert_eq!(
        broken["assertions"][0]["status"], "not-evaluated",
        "{broken}"
    );
    assert_eq!(broken["scores"], serde_json::json!({}));
    // Errored cells' durations stay out of the latency.
    assert_eq!(record["aggregates"]["default"]["latency"]["n"], 2);

    // No gates: assertions gate. A failing case fails the run; with a
    // baseline, only the candidates are gated.
    let text = std::fs::read_to_string(repo().join(FIXTURE)).unwrap();
    let no_gates =
        text[..text.find("gates:").unwrap()].to_string() + &text[text.find("cases:").unwrap()..];
    let fixture = experiment(dir.path(), |_| no_gates.clone());
    let (code, stdout, _, record) = run(dir.path(), &fixture, "default", &[]);
    assert_eq!(code, 1, "candidate's greet-bo fails a trial: {stdout}");
    assert!(
        stdout.contains("FAIL  candidate assertions — 1 of 7 cells did not pass (1 failed)"),
        "{stdout}"
    );
    assert!(
        record["gates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["variant"] != "current" || g["gate"] == "errored"),
        "the baseline's failures inform only"
    );
}

#[test]
fn a_promoted_baseline_is_compared_with_later_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("suite.fixture.yaml"),
        "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: promoted
provider: openai
model: m1
fixtureResults: answers.json
assertions:
  - { type: levenshtein, name: similar, value: \"Hello Ada, welcome back!\", threshold: 0.0 }
gates:
  scores:
    similar: { minDeltaVsBaseline: 0.0 }
cases:
  - { caseId: a, input: Hi, expected: { finalText: Ada } }
  - { caseId: b, input: Hi, expected: { finalText: Ada } }
",
    )
    .unwrap();
    let answers = |a: &str, b: &str| {
        std::fs::write(
            root.join("answers.json"),
            serde_json::json!({"a": a, "b": b}).to_string(),
        )
        .unwrap();
    };
    let test = || {
        let mut command = cautilus();
        command
            .current_dir(root)
            .args(["eval", "test", "--fixture", "suite.fixture.yaml"]);
        output(command.output().unwrap())
    };
    let promote = |args: &[&str]| {
        let mut command = cautilus();
        command
            .current_dir(root)
            .args(["eval", "promote"])
            .args(args);
        output(command.output().unwrap())
    };

    answers("Hello Ada.", "Hello Ada, welcome!");
    let (code, stdout, _) = test();
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("no baseline to compare with yet"),
        "{stdout}"
    );
    let (code, stdout, stderr) = promote(&["latest"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("as the baseline of `promoted`"), "{stdout}");
    let baseline = read_json(&root.join(".cautilus/baselines/promoted.json"));
    assert_eq!(baseline["schemaVersion"], "cautilus.baseline.v1");
    assert_eq!(baseline["cells"].as_array().unwrap().len(), 2);

    // Worse answers: the delta gate against the committed baseline fails.
    answers("Ada?", "Ada?");
    let (code, stdout, _) = test();
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("default vs the committed baseline (`default`) (2 paired cells)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL  default scores.similar.minDeltaVsBaseline — score `similar` delta vs the baseline -0.4583 is below the 0 floor"),
        "{stdout}"
    );

    // The suite's cases changed: the comparison informs, never blocks.
    let text = std::fs::read_to_string(root.join("suite.fixture.yaml")).unwrap();
    std::fs::write(
        root.join("suite.fixture.yaml"),
        text.replace("caseId: b, input: Hi,", "caseId: b, input: Hello,"),
    )
    .unwrap();
    let mut command = cautilus();
    command
        .current_dir(root)
        .args(["eval", "test", "--fixture", "suite.fixture.yaml", "--json"]);
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("changed since the baseline"), "{stderr}");
    let record: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(record["committedBaseline"]["changedSince"], true);
    assert_eq!(record["comparison"][0]["source"], "committed");
    assert_eq!(record["comparison"][0]["informational"], true);
    assert_eq!(
        gate(&record, "default", "scores.similar.minDeltaVsBaseline")["informational"],
        true
    );

    // Filtered runs and unknown variants cannot be promoted.
    let mut command = cautilus();
    command.current_dir(root).args([
        "eval",
        "test",
        "--fixture",
        "suite.fixture.yaml",
        "--case",
        "a",
        "--output-dir",
        "filtered",
    ]);
    output(command.output().unwrap());
    let (code, _, stderr) = promote(&["filtered"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("the run was filtered"), "{stderr}");
    let (code, _, stderr) = promote(&["latest", "--variant", "nightly"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no variant `nightly`"), "{stderr}");
}

/// The example without its declared gates: the default policy judges it.
fn without_gates(text: String) -> String {
    let gates =
        "gates:\n  passRate: { min: 0.8 }\n  scores:\n    similar: { minDeltaVsBaseline: 0.0 }\n";
    assert!(text.contains(gates), "the example declares its gates so");
    text.replace(gates, "")
}

#[test]
fn a_filtered_or_sharded_run_without_gates_fails_on_a_cell_that_did_not_pass() {
    // The candidate answers greet-bo wrongly in one trial: the whole run
    // fails (no gates: assertions gate), and so does every part holding
    // that cell; a part without it passes. Never a part that says
    // "informational" and exits 1, nor one that passes what the whole fails.
    let dir = tempfile::tempdir().unwrap();
    let fixture = experiment(dir.path(), without_gates);
    let (code, stdout, _, _) = run(dir.path(), &fixture, "full", &[]);
    assert_eq!(code, 1, "{stdout}");
    let note = "(filtered: no gates declared, so a cell that ran and did not pass fails it)";
    for (name, args, want) in [
        ("bo", &["--case", "greet-bo"][..], 1),
        ("ada", &["--case", "greet-ada"][..], 0),
        ("tag", &["--tag", "returning"][..], 0),
        ("candidate", &["--variant", "candidate"][..], 1),
        ("shard-1", &["--shard", "1/3"][..], 0),
        ("shard-2", &["--shard", "2/3"][..], 1),
        ("shard-3", &["--shard", "3/3"][..], 0),
    ] {
        let (code, stdout, stderr, record) = run(dir.path(), &fixture, name, args);
        assert_eq!(code, want, "{name}: {stdout}{stderr}");
        assert!(stdout.contains(note), "{name}: {stdout}");
        assert!(
            !stdout.contains("gates are informational"),
            "{name}: {stdout}"
        );
        let assertions = gate(&record, "candidate", "assertions");
        assert_eq!(assertions["informational"], false, "{name}");
        assert_eq!(assertions["passed"], want == 0, "{name}");
        assert!(!stdout.contains("recommendation:"), "{name}: {stdout}");
    }
    // The merge of the shards is the whole run's verdict.
    let mut command = cautilus();
    command.current_dir(dir.path()).args([
        "eval",
        "merge",
        "shard-1",
        "shard-2",
        "shard-3",
        "--output-dir",
        "merged",
    ]);
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 1, "{stdout}{stderr}");
}

#[test]
fn shards_merge_to_the_unsharded_result() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = experiment(dir.path(), |t| t);
    let (code, stdout, stderr, full) = run(dir.path(), &fixture, "full", &[]);
    assert_eq!(code, 0, "{stderr}");
    // A trial's line gives its counts, never a recommendation that the
    // passing experiment would contradict (greet-bo fails a trial).
    assert!(stdout.contains("experiment passed"), "{stdout}");
    assert!(stdout.contains("  2 cases: 1 passed, 1 failed"), "{stdout}");
    assert!(!stdout.contains("recommendation:"), "{stdout}");
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let (code, stdout, stderr, record) = run(
            dir.path(),
            &fixture,
            &format!("shard-{k}"),
            &["--shard", &shard],
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_eq!(record["shard"]["index"], k);
        // A shard's gates inform only: it holds part of the cells.
        assert!(
            record["gates"]
                .as_array()
                .unwrap()
                .iter()
                .all(|g| g["gate"] == "errored" || g["informational"] == true)
        );
    }
    let merge = |dirs: &[&str], out: &str| {
        let mut command = cautilus();
        command
            .current_dir(dir.path())
            .args(["eval", "merge"])
            .args(dirs)
            .args(["--output-dir", out]);
        output(command.output().unwrap())
    };
    // In any order.
    let (code, stdout, stderr) = merge(&["shard-3", "shard-1", "shard-2"], "merged");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("experiment passed"), "{stdout}");
    let merged = read_json(&dir.path().join("merged/experiment.json"));
    for key in [
        "aggregates",
        "comparison",
        "gates",
        "passed",
        "fingerprints",
        "skipped",
    ] {
        assert_eq!(merged[key], full[key], "{key}");
    }
    let ids = |r: &Value| -> Vec<(String, String, u64)> {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["caseId"].as_str().unwrap().into(),
                    c["variant"].as_str().unwrap().into(),
                    c["trial"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(ids(&merged), ids(&full), "the cells in the unsharded order");
    assert_eq!(merged["mergedFrom"].as_array().unwrap().len(), 3);

    let (code, _, stderr) = merge(&["shard-1", "shard-2"], "partial");
    assert_eq!(code, 2);
    assert!(stderr.contains("missing shards: 3/3"), "{stderr}");
    let (code, _, stderr) = merge(&["shard-1", "shard-1", "shard-2"], "twice");
    assert_eq!(code, 2);
    assert!(stderr.contains("shard 1/3 again"), "{stderr}");
    let (code, _, stderr) = merge(&["full"], "unsharded");
    assert_eq!(code, 2);
    assert!(stderr.contains("not a shard"), "{stderr}");
    let (code, _, stderr, _) = run(dir.path(), &fixture, "bad", &["--shard", "4/3"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("1 ≤ K ≤ N"), "{stderr}");
}

#[test]
fn a_case_without_an_id_is_named_by_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("anonymous.fixture.yaml");
    let write = |order: &str| {
        std::fs::write(
            &fixture,
            format!(
                "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: anonymous
provider: openai
model: m1
cases:
{order}"
            ),
        )
        .unwrap();
    };
    write(
        "  - { input: Say hello., expected: { finalText: hello } }\n  - { input: Say bye., expected: { finalText: bye } }\n",
    );
    let summary = |name: &str, args: &[&str]| {
        let (code, stdout, stderr, _) = run(
            dir.path(),
            &fixture,
            name,
            &[&["--provider", "fixture"], args].concat(),
        );
        assert!(code == 0 || code == 1, "{stdout}{stderr}");
        let summary = read_json(&dir.path().join(name).join("eval-summary.json"));
        summary["evaluations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["caseId"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let ids = summary("first", &[]);
    assert_eq!(ids.len(), 2);
    assert!(
        ids.iter()
            .all(|id| id.len() == 12 && id.chars().all(|c| c.is_ascii_hexdigit())),
        "{ids:?}"
    );
    // Stable: the same input gets the same id wherever the case moves.
    write(
        "  - { expected: { finalText: bye }, input: Say bye. }\n  - { input: Say hello., expected: { finalText: hello } }\n",
    );
    assert_eq!(summary("moved", &[]), [ids[1].clone(), ids[0].clone()]);
    // And --case selects by it.
    let (code, stdout, stderr, record) = run(
        dir.path(),
        &fixture,
        "one",
        &["--provider", "fixture", "--case", &ids[0]],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(record["cells"][0]["caseId"], ids[0].as_str());
}

#[test]
fn an_interrupted_experiment_resumes_its_unfinished_groups_only() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = experiment(dir.path(), |t| t);
    let (code, _, stderr, full) = run(dir.path(), &fixture, "run", &[]);
    assert_eq!(code, 0, "{stderr}");
    let run_dir = dir.path().join("run");
    // As a stop during the candidate's second trial leaves it: that group
    // interrupted after one case, the third never started, the record
    // marked interrupted.
    let second = run_dir.join("variants/candidate/trial-2");
    let journal = std::fs::read_to_string(second.join("cells.jsonl")).unwrap();
    std::fs::write(
        second.join("cells.jsonl"),
        journal.lines().next().unwrap().to_string() + "\n",
    )
    .unwrap();
    let state = std::fs::read_to_string(second.join("run.json")).unwrap();
    let mut state: Value = serde_json::from_str(&state).unwrap();
    state["status"] = "interrupted".into();
    state["finishedCases"] = 1.into();
    std::fs::write(second.join("run.json"), state.to_string()).unwrap();
    std::fs::remove_dir_all(run_dir.join("variants/candidate/trial-3")).unwrap();
    let record = std::fs::read_to_string(run_dir.join("experiment.json")).unwrap();
    std::fs::write(
        run_dir.join("experiment.json"),
        record.replace("\"status\": \"completed\"", "\"status\": \"interrupted\""),
    )
    .unwrap();
    let untouched =
        std::fs::read_to_string(run_dir.join("variants/current/trial-1/cells.jsonl")).unwrap();

    let mut command = cautilus();
    command
        .args(["eval", "test", "--resume"])
        .arg(&run_dir)
        .env("PATH", "/usr/bin:/bin");
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("variant `current` (baseline), trial 1 of 3: finished earlier"),
        "{stdout}"
    );
    assert!(stderr.contains("1 of 2 cases finished earlier"), "{stderr}");
    let resumed = read_json(&run_dir.join("experiment.json"));
    assert_eq!(resumed["status"], "completed");
    for key in ["aggregates", "comparison", "gates", "passed"] {
        assert_eq!(resumed[key], full[key], "{key}");
    }
    assert_eq!(
        std::fs::read_to_string(run_dir.join("variants/current/trial-1/cells.jsonl")).unwrap(),
        untouched,
        "a completed group is not run again"
    );
}

#[test]
fn recorded_outputs_are_rescored_without_calling_the_model() {
    use cautilus_tests::model_server::{ModelServer, Reply};
    let server = ModelServer::start(|_, index| {
        let text = if index % 2 == 0 {
            "Hello Ada, welcome back!"
        } else {
            "Hi."
        };
        Reply::json(
            200,
            serde_json::json!({
                "id": "chatcmpl-1", "model": "loopback-model-1",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
            })
            .to_string(),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("greet.fixture.yaml");
    let suite = |assertion: &str| {
        format!(
            "schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: greet
provider: openai
model: loopback-model-1
trials: 2
assertions:
  - {assertion}
cases:
  - {{ caseId: ada, input: Greet Ada., expected: {{ finalText: Ada }} }}
"
        )
    };
    std::fs::write(
        &fixture,
        suite("{ type: contains, value: Ada, required: false }"),
    )
    .unwrap();
    let live = |name: &str, extra: &[&str]| {
        let mut command = cautilus();
        command
            .args(["eval", "test", "--fixture"])
            .arg(&fixture)
            .arg("--workspace")
            .arg(dir.path())
            .arg("--output-dir")
            .arg(dir.path().join(name))
            .args(["--concurrency", "1"])
            .args(extra)
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
            .env("OPENAI_API_KEY", "sk-test")
            .env("PATH", "/usr/bin:/bin");
        output(command.output().unwrap())
    };
    let (code, stdout, stderr) = live("first", &["--provider", "openai"]);
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    assert_eq!(server.requests().len(), 2, "two trials, one call each");
    let first = read_json(&dir.path().join("first/experiment.json"));

    // A stricter assertion, re-scored on the recorded answers: no call.
    std::fs::write(&fixture, suite("{ type: contains, value: welcome }")).unwrap();
    let (code, stdout, stderr) = live(
        "again",
        &[
            "--reuse-outputs",
            &dir.path().join("first").display().to_string(),
        ],
    );
    assert_eq!(
        code, 1,
        "the second trial's answer has no `welcome`: {stdout}{stderr}"
    );
    assert_eq!(
        server.requests().len(),
        2,
        "no model call when outputs are reused"
    );
    let again = read_json(&dir.path().join("again/experiment.json"));
    let outputs = |r: &Value| -> Vec<(u64, String, String)> {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["trial"].as_u64().unwrap(),
                    c["output"].as_str().unwrap().to_string(),
                    c["model"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        outputs(&again),
        outputs(&first),
        "the same answers, the same model"
    );
    let cells = again["cells"].as_array().unwrap();
    assert_eq!(
        (cells[0]["status"].as_str(), cells[1]["status"].as_str()),
        (Some("passed"), Some("failed"))
    );
    assert_eq!(cells[0]["usage"]["inputTokens"], 20, "{}", cells[0]);
    assert!(
        dir.path()
            .join("again/variants/default/trial-2/reused-outputs.json")
            .is_file()
    );

    // A case the earlier run never answered fails; it gets no made-up answer.
    std::fs::write(
        &fixture,
        suite("{ type: contains, value: welcome }").replace(
            "cases:\n",
            "cases:\n  - { caseId: new, input: Greet Bo. }\n",
        ),
    )
    .unwrap();
    let (code, stdout, _) = live(
        "third",
        &[
            "--reuse-outputs",
            &dir.path().join("first").display().to_string(),
        ],
    );
    assert_eq!(code, 1);
    assert!(
        stdout.contains("no recorded output for case `new`"),
        "{stdout}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_variant_setting_a_preset_field_against_its_schema_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    // The candidate's system prompt is not a string: the app/prompt preset
    // declares `system` with `{"type": "string"}`.
    let fixture = experiment(dir.path(), |text| {
        text.replace(
            "    system: You greet customers warmly, by name, in one short sentence.",
            "    system: 3",
        )
    });
    let (code, stdout, stderr, record) = run(dir.path(), &fixture, "out", &[]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("variants.candidate.system: 3 is not of type \"string\""),
        "{stderr}"
    );
    // Refused before the first variant ran: nothing was written.
    assert!(
        record.is_null() && !dir.path().join("out").exists(),
        "{stdout}"
    );
}

/// A case file is read for `skip`, `tags`, `trials` and `only` only when
/// one of them is spelled as a key; text that spells one inside a string
/// (`"input": "{\"skip\": …}"`) does not count, and a real key among such
/// text is still found.
#[test]
fn host_owned_case_fields_are_found_among_text_that_spells_them() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("scan.fixture.json");
    std::fs::write(
        &fixture,
        r#"{"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
 "suiteId": "scan", "provider": "anthropic", "model": "m",
 "cases": [
  {"caseId": "quoted", "input": "say {\"skip\": \"tags\"}", "expected": {"finalText": "say {\"skip"}},
  {"caseId": "retired", "input": "hi\\", "skip": "the old portal is being retired"},
  {"caseId": "tagged", "input": "hello", "tags": ["smoke"], "expected": {"finalText": "hello"}}
 ]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("canned.json"),
        r#"{"quoted": "say {\"skip\": \"tags\"}", "retired": "hi", "tagged": "hello"}"#,
    )
    .unwrap();
    let canned = dir.path().join("canned.json");
    let (code, stdout, stderr, record) = run(
        dir.path(),
        &fixture,
        "run",
        &["--fixture-results", canned.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        record["skipped"],
        serde_json::json!([{"caseIndex": 1, "caseId": "retired", "reason": "the old portal is being retired"}])
    );
    let tagged = record["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["caseId"] == "tagged")
        .unwrap();
    assert_eq!(tagged["tags"], serde_json::json!(["smoke"]));
}
