//! Run directories through the binary (issue 33, points 5, 6 and 11): a
//! directory another run holds is refused naming its holder, a stale lock
//! from a killed run blocks nothing, an output directory that holds the
//! fixture's inputs or files no run wrote is refused with nothing written,
//! and `--resume` refuses a journal that disagrees with the suite, naming
//! the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{cautilus, output, read_json, repo};

/// An app/prompt suite of `n` cases (`case-00000` …) in `dir`, each
/// answered "fine" by the canned results, with `suite`'s fields over the
/// defaults; returns (fixture, canned answers).
fn suite(dir: &Path, n: usize, suite: Value) -> (PathBuf, PathBuf) {
    let mut fixture = json!({
        "schemaVersion": "cautilus.evaluation_input.v1",
        "surface": "app", "preset": "prompt", "suiteId": "run-dirs",
        "provider": "anthropic", "model": "claude-sonnet-4-6",
    });
    let cases: Vec<Value> = (0..n)
        .map(|i| json!({"caseId": format!("case-{i:05}"), "input": "q", "expected": {"finalText": "fine"}}))
        .collect();
    fixture["cases"] = json!(cases);
    for (key, value) in suite.as_object().unwrap() {
        fixture[key] = value.clone();
    }
    let canned: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("case-{i:05}"), json!("fine")))
        .collect();
    let fixture_path = dir.join("suite.fixture.json");
    std::fs::write(&fixture_path, fixture.to_string()).unwrap();
    let canned_path = dir.join("canned.json");
    std::fs::write(&canned_path, Value::Object(canned).to_string()).unwrap();
    (fixture_path, canned_path)
}

/// A suite whose every case is graded by a program that waits until
/// `gate` exists: a run of it holds its directory until the test opens
/// the gate, with no timing involved.
fn gated_suite(dir: &Path, n: usize, gate: &Path) -> (PathBuf, PathBuf) {
    // The grader says it is waiting (see `start_holding`), then waits.
    let wait = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        waiting(gate).display(),
        gate.display()
    );
    suite(
        dir,
        n,
        json!({"assertions": [{"type": "code-grader", "command": ["sh", "-c", wait]}]}),
    )
}

/// `cautilus eval test` of `fixture` with its canned answers into `out`.
fn eval_command(fixture: &Path, canned: &Path, out: &Path) -> Command {
    let mut command = cautilus();
    command
        .args(["eval", "test", "--provider", "fixture", "--fixture"])
        .arg(fixture)
        .arg("--fixture-results")
        .arg(canned)
        .arg("--workspace")
        .arg(fixture.parent().unwrap())
        .arg("--output-dir")
        .arg(out);
    command
}

fn eval_test(fixture: &Path, canned: &Path, out: &Path) -> (i32, String, String) {
    output(eval_command(fixture, canned, out).output().unwrap())
}

fn resume(out: &Path) -> (i32, String, String) {
    output(
        cautilus()
            .args(["eval", "test", "--resume"])
            .arg(out)
            .output()
            .unwrap(),
    )
}

/// A child process killed when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The file a gated suite's grader makes once it waits at `gate`.
fn waiting(gate: &Path) -> PathBuf {
    gate.with_extension("waiting")
}

/// Starts a run of a gated suite and returns once it holds `out` and waits
/// at `gate` in its first case's grader: everything it writes before its
/// first case is done is written by then.
fn start_holding(fixture: &Path, canned: &Path, out: &Path, gate: &Path) -> Running {
    let child = eval_command(fixture, canned, out)
        .args(["--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let started = Instant::now();
    loop {
        if out.join("run.json").is_file() && waiting(gate).is_file() {
            return running;
        }
        assert!(
            running.0.try_wait().unwrap().is_none(),
            "the run ended before it held its directory"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the run did not start within 120 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every entry under `dir` with its bytes (a directory: empty).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.insert(path.clone(), Vec::new());
            out.extend(snapshot(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    out
}

/// Fails naming the entries that differ between two [`snapshot`]s.
fn assert_unchanged(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
    what: &str,
) {
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect();
    assert!(changed.is_empty(), "{what}: changed {changed:?}");
}

fn evaluations(packet: &Value) -> Vec<String> {
    packet["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["caseId"].as_str().unwrap().to_string())
        .collect()
}

/// The run in `out` is complete: each of its `n` cases once, in order, in
/// valid packets, its journal a line per case, run.json completed.
fn assert_complete(out: &Path, n: usize) {
    let expected: Vec<String> = (0..n).map(|i| format!("case-{i:05}")).collect();
    for packet in ["eval-summary.json", "eval-observed.json"] {
        assert_eq!(
            evaluations(&read_json(&out.join(packet))),
            expected,
            "{packet}"
        );
    }
    assert_eq!(
        read_json(&out.join("eval-cases.json"))["cases"]
            .as_array()
            .unwrap()
            .len(),
        n
    );
    let journal = std::fs::read_to_string(out.join("cells.jsonl")).unwrap();
    let mut cases: Vec<(u64, String)> = journal
        .lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            (
                line["case"].as_u64().unwrap(),
                line["caseId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    cases.sort();
    let want: Vec<(u64, String)> = expected
        .iter()
        .enumerate()
        .map(|(i, id)| (i as u64, id.clone()))
        .collect();
    assert_eq!(cases, want, "one journal line per case");
    let state = read_json(&out.join("run.json"));
    assert_eq!(state["status"], "completed", "{state}");
    assert_eq!(state["finishedCases"], n);
}

#[test]
fn a_second_run_into_a_directory_in_use_is_refused_naming_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let first_dir = dir.path().join("first");
    std::fs::create_dir(&first_dir).unwrap();
    let n = 6;
    let (fixture, canned) = gated_suite(&first_dir, n, &gate);
    let out = dir.path().join("run");
    let mut first = start_holding(&fixture, &canned, &out, &gate);
    let holder = format!("in use by cautilus pid {}", first.0.id());

    // Another suite, one that would finish at once, into the same directory.
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).unwrap();
    let (other, other_canned) = suite(&other_dir, 3, json!({}));
    let before = snapshot(&out);
    let (code, stdout, stderr) = eval_test(&other, &other_canned, &out);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(&holder) && stderr.contains("--output-dir"),
        "names the holder and what to do: {stderr}"
    );
    // `--resume` of it, an experiment into it, and a run into a directory
    // inside it are refused the same way.
    let (code, _, stderr) = resume(&out);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&holder), "{stderr}");
    let (code, _, stderr) = output(
        eval_command(&other, &other_canned, &out)
            .args(["--trials", "2"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&holder), "{stderr}");
    let inner = out.join("variants/x/trial-1");
    let (code, _, stderr) = eval_test(&other, &other_canned, &inner);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("inside run directory") && stderr.contains(&holder),
        "{stderr}"
    );
    assert!(!out.join("variants").exists(), "nothing written");
    assert_unchanged(&before, &snapshot(&out), "the refused runs wrote nothing");

    let lock = std::fs::read_to_string(out.join("run.lock")).unwrap_or_default();
    assert!(
        lock.contains(&format!("\"pid\":{}", first.0.id())),
        "the lock file names its holder: {lock:?}"
    );
    std::fs::write(&gate, "").unwrap();
    let status = first.0.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_complete(&out, n);
    // Released: the directory takes a run again.
    let (code, stdout, stderr) = eval_test(&fixture, &canned, &out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_complete(&out, n);
}

#[test]
fn a_killed_runs_lock_file_blocks_neither_resume_nor_a_new_run() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let n = 4;
    let (fixture, canned) = gated_suite(dir.path(), n, &gate);
    let out = dir.path().join("run");
    let mut killed = start_holding(&fixture, &canned, &out, &gate);
    let pid = killed.0.id();
    killed.0.kill().unwrap(); // SIGKILL
    killed.0.wait().unwrap();
    let text = std::fs::read_to_string(out.join("run.lock")).unwrap();
    assert!(
        text.contains(&format!("\"pid\":{pid}")),
        "the text stays: {text}"
    );
    std::fs::write(&gate, "").unwrap();
    let (code, stdout, stderr) = resume(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_complete(&out, n);
    let text = std::fs::read_to_string(out.join("run.lock")).unwrap();
    assert!(!text.contains(&format!("\"pid\":{pid},")), "{text}");

    // Junk, an empty file, or another process's text in the lock file of
    // a directory nobody holds: none blocks.
    for junk in [
        "",
        "not json at all \u{202e}\n",
        "{\"schemaVersion\":\"cautilus.run_lock.v1\",\"pid\":1}",
    ] {
        std::fs::write(out.join("run.lock"), junk).unwrap();
        let (code, stdout, stderr) = eval_test(&fixture, &canned, &out);
        assert_eq!(code, 0, "{junk:?}: {stdout}{stderr}");
        assert_complete(&out, n);
    }
}

/// Runs `eval test --output-dir .` in `dir` on `fixture` (relative to it).
fn run_here(dir: &Path, args: &[&str]) -> (i32, String, String) {
    output(
        cautilus()
            .current_dir(dir)
            .args(["eval", "test", "--provider", "fixture"])
            .args(args)
            .output()
            .unwrap(),
    )
}

#[test]
fn an_output_directory_holding_a_case_file_named_like_a_record_is_refused() {
    for name in [
        "cells.jsonl",
        "eval-cases.json",
        "eval-summary.json",
        "run.json",
        "experiment.json",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let line = |i: usize| {
            json!({"caseId": format!("case-{i:05}"), "input": "q", "expected": {"finalText": "fine"}})
                .to_string()
        };
        let cases = if name.ends_with(".jsonl") {
            (0..3).map(|i| line(i) + "\n").collect::<String>()
        } else {
            format!("[{}]", (0..3).map(line).collect::<Vec<_>>().join(","))
        };
        std::fs::write(d.join(name), &cases).unwrap();
        let (fixture, canned) = suite(d, 0, json!({"cases": format!("./{name}")}));
        // The canned answers for the cases in the file.
        std::fs::write(
            &canned,
            json!({"case-00000": "fine", "case-00001": "fine", "case-00002": "fine"}).to_string(),
        )
        .unwrap();
        let before = snapshot(d);
        let (code, stdout, stderr) = run_here(
            d,
            &[
                "--fixture",
                fixture.file_name().unwrap().to_str().unwrap(),
                "--fixture-results",
                "canned.json",
                "--output-dir",
                ".",
            ],
        );
        assert_eq!(code, 2, "{name}: {stdout}{stderr}");
        assert!(
            stderr.contains("which this run reads") && stderr.contains("choose a directory"),
            "{name}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join(name)).unwrap(),
            cases,
            "{name} unchanged"
        );
        assert_unchanged(&before, &snapshot(d), &format!("{name}: nothing written"));
    }
}

#[test]
fn an_output_directory_holding_any_input_of_the_fixture_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["evals/golden", "base", "cases/one", "step", "answers"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    let write = |path: &str, value: Value| std::fs::write(d.join(path), value.to_string()).unwrap();
    // A fixture extending a base in another directory, whose cases are a
    // case directory; a steps fixture whose step is a `$ref`; a golden file.
    write(
        "base/base.json",
        json!({"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app",
               "preset": "prompt", "suiteId": "extended", "provider": "fixture",
               "model": "m", "cases": "../cases"}),
    );
    std::fs::write(
        d.join("cases/one/case.yaml"),
        "input: q\nexpected: { finalText: fine }\n",
    )
    .unwrap();
    write(
        "evals/extends.json",
        json!({"extends": "../base/base.json"}),
    );
    write(
        "step/one.json",
        json!({"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app",
               "preset": "prompt", "suiteId": "s1", "provider": "fixture", "model": "m",
               "cases": [{"caseId": "a", "input": "q", "expected": {"finalText": "fine"}}]}),
    );
    write(
        "evals/steps.json",
        json!({"schemaVersion": "cautilus.evaluation_input.v1", "suiteId": "steps",
               "steps": [{"$ref": "../step/one.json"}]}),
    );
    std::fs::write(d.join("evals/golden/a.txt"), "fine").unwrap();
    write(
        "evals/golden.json",
        json!({"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app",
               "preset": "prompt", "suiteId": "golden", "provider": "fixture", "model": "m",
               "cases": [{"caseId": "a", "input": "q",
                          "expected": {"snapshot": "golden/a.txt"}}]}),
    );
    write("answers/canned.json", json!({"a": "fine", "one": "fine"}));
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("evals"), d.join("link")).unwrap();

    let before = snapshot(d);
    let refused = |fixture: &str, out: &str, extra: &[&str], names: &str| {
        // The files lie beside the fixtures' directory: `--path-root .` lets
        // them name each other with `../`.
        let mut args = vec![
            "--fixture",
            fixture,
            "--output-dir",
            out,
            "--path-root",
            ".",
        ];
        args.extend(extra);
        let (code, stdout, stderr) = run_here(d, &args);
        assert_eq!(code, 2, "{fixture} into {out}: {stdout}{stderr}");
        assert!(
            stderr.contains(names) && stderr.contains("which this run reads"),
            "{fixture} into {out}: {stderr}"
        );
    };
    // The fixture itself, beneath the output directory at any depth.
    refused("evals/extends.json", ".", &[], "extends.json");
    refused("evals/extends.json", "evals", &[], "extends.json");
    #[cfg(unix)]
    refused("evals/extends.json", "link", &[], "extends.json");
    // Its `extends` base, its case directory, and a case's own directory.
    refused("evals/extends.json", "base", &[], "base.json");
    refused("evals/extends.json", "cases", &[], "cases");
    refused("evals/extends.json", "cases/one/run", &[], "case directory");
    // A step's `$ref`.
    refused("evals/steps.json", "step", &[], "one.json");
    // A golden file.
    refused("evals/golden.json", "evals/golden", &[], "a.txt");
    // The canned answers.
    refused(
        "evals/extends.json",
        "answers",
        &["--fixture-results", "answers/canned.json"],
        "canned.json",
    );
    assert_unchanged(&before, &snapshot(d), "nothing written, nothing changed");

    // Beside the inputs, not among them: allowed.
    for (fixture, out) in [
        ("evals/extends.json", "runs/a"),
        ("evals/steps.json", "runs/b"),
        ("evals/golden.json", "runs/c"),
    ] {
        let (code, stdout, stderr) = run_here(
            d,
            &[
                "--fixture",
                fixture,
                "--output-dir",
                out,
                "--path-root",
                ".",
            ],
        );
        assert!(code == 0 || code == 1, "{fixture}: {stdout}{stderr}");
        assert!(d.join(out).join("run.lock").is_file());
    }
}

#[test]
fn an_output_directory_with_files_no_run_wrote_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, canned) = suite(dir.path(), 2, json!({}));
    let out = dir.path().join("out");
    for (entry, foreign) in [
        ("eval-summary.json", Some("{\"mine\": true}")),
        ("cells.jsonl", Some("my notes\n")),
        ("run.json", Some("{\"schemaVersion\": \"someone.else.v1\"}")),
        ("transcripts", None),
    ] {
        std::fs::create_dir_all(&out).unwrap();
        match foreign {
            Some(text) => std::fs::write(out.join(entry), text).unwrap(),
            None => std::fs::create_dir(out.join(entry)).unwrap(),
        }
        let before = snapshot(&out);
        let (code, stdout, stderr) = eval_test(&fixture, &canned, &out);
        assert_eq!(code, 2, "{entry}: {stdout}{stderr}");
        assert!(
            stderr.contains(entry) && stderr.contains("not a cautilus run directory"),
            "{entry}: {stderr}"
        );
        assert_unchanged(
            &before,
            &snapshot(&out),
            &format!("{entry}: nothing written"),
        );
        std::fs::remove_dir_all(&out).unwrap();
    }

    // A record planted as a link in what looks like a run directory.
    #[cfg(unix)]
    for name in [
        "cells.jsonl",
        "eval-summary.json.partial",
        "run.lock",
        "transcripts",
    ] {
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(
            out.join("run.json"),
            "{\"schemaVersion\": \"cautilus.run.v1\"}",
        )
        .unwrap();
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
        let (code, stdout, stderr) = eval_test(&fixture, &canned, &out);
        assert_eq!(code, 2, "{name}: {stdout}{stderr}");
        assert!(stderr.contains("symbolic link"), "{name}: {stderr}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        std::fs::remove_dir_all(&out).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn a_run_directory_whose_group_directory_is_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, canned) = suite(dir.path(), 2, json!({}));
    let out = dir.path().join("run");
    let experiment = || {
        output(
            eval_command(&fixture, &canned, &out)
                .args(["--trials", "2"])
                .output()
                .unwrap(),
        )
    };
    let (code, stdout, stderr) = experiment();
    assert_eq!(code, 0, "{stdout}{stderr}");
    // A run directory someone else prepared: a group leads elsewhere.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let group = out.join("variants/default");
    std::fs::remove_dir_all(&group).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &group).unwrap();
    let (code, stdout, stderr) = experiment();
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("symbolic link inside run directory"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written through the link"
    );
}

#[test]
fn runs_go_again_into_their_own_directories() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3;
    let (fixture, canned) = suite(dir.path(), n, json!({}));
    let out = dir.path().join("run");
    for _ in 0..2 {
        let (code, stdout, stderr) = eval_test(&fixture, &canned, &out);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_complete(&out, n);
    }
    // A run directory of a cautilus from before the lock file.
    std::fs::remove_file(out.join("run.lock")).unwrap();
    let (code, stdout, stderr) = eval_test(&fixture, &canned, &out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_complete(&out, n);

    // Experiments (groups in their own directories, or one group in the
    // root itself) and steps claim nested directories of their own run.
    let experiment = dir.path().join("experiment");
    for extra in [&["--trials", "2"][..], &["--case", "case-00001"][..]] {
        for _ in 0..2 {
            let (code, stdout, stderr) = output(
                eval_command(&fixture, &canned, &experiment)
                    .args(extra)
                    .output()
                    .unwrap(),
            );
            assert_eq!(code, 0, "{extra:?}: {stdout}{stderr}");
            assert!(experiment.join("experiment.json").is_file());
        }
    }
    let steps = repo().join("fixtures/eval/compose/steps/two-step.fixture.yaml");
    let steps_out = dir.path().join("steps");
    for _ in 0..2 {
        let (code, stdout, stderr) = output(
            cautilus()
                .args(["eval", "test", "--provider", "fixture", "--fixture"])
                .arg(&steps)
                .arg("--output-dir")
                .arg(&steps_out)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(steps_out.join("steps/step-1/run.lock").is_file());
    }
}

/// A finished run of `n` cases in `out`, made resumable (its run.json
/// says it was interrupted), with its journal lines (in case order).
fn resumable(dir: &Path, n: usize) -> (PathBuf, Vec<Value>) {
    let (fixture, canned) = suite(dir, n, json!({}));
    let out = dir.join("run");
    let (code, stdout, stderr) = eval_test(&fixture, &canned, &out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    interrupted(&out);
    let mut lines: Vec<Value> = std::fs::read_to_string(out.join("cells.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.sort_by_key(|l| l["case"].as_u64());
    (out, lines)
}

/// Marks the run in `out` interrupted, so `--resume` takes it.
fn interrupted(out: &Path) {
    let mut state = read_json(&out.join("run.json"));
    state["status"] = json!("interrupted");
    std::fs::write(out.join("run.json"), state.to_string()).unwrap();
}

fn write_journal(out: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(out.join("cells.jsonl"), text).unwrap();
}

#[test]
fn resume_refuses_a_journal_that_disagrees_with_the_suite_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let n = 4;
    let (out, lines) = resumable(dir.path(), n);
    let edited = |edit: &dyn Fn(&mut Vec<Value>)| {
        let mut lines = lines.clone();
        edit(&mut lines);
        lines
    };
    let cases: Vec<(&str, Vec<Value>, usize, &str)> = vec![
        (
            // Case 1's result journaled as case 3 (case 3's line gone):
            // the summary would hold case-00001 twice and no case-00003.
            "wrong index",
            edited(&|l| {
                l[1]["case"] = json!(3);
                l.truncate(3);
            }),
            2,
            "is the suite's case 1",
        ),
        (
            "duplicate index",
            edited(&|l| {
                let again = l[0].clone();
                l.push(again);
            }),
            5,
            "journaled on an earlier line",
        ),
        (
            "out of range",
            edited(&|l| l[2]["case"] = json!(1500)),
            3,
            "past the run's 4 cases",
        ),
        (
            "mismatched caseId",
            edited(&|l| l[3]["caseId"] = json!("case-\u{202e}zzz")),
            4,
            "is no case of the suite",
        ),
    ];
    for (what, journal, line, why) in cases {
        write_journal(&out, &journal);
        // Only the lock file's holder text is new (this resume held it).
        let records = |out: &Path| {
            let mut records = snapshot(out);
            records.remove(&out.join("run.lock"));
            records
        };
        let before = records(&out);
        let (code, stdout, stderr) = resume(&out);
        assert_eq!(code, 2, "{what}: {stdout}{stderr}");
        assert!(
            stderr.contains("cells.jsonl")
                && stderr.contains(&format!("line {line}"))
                && stderr.contains(why),
            "{what}: {stderr}"
        );
        assert_unchanged(&before, &records(&out), &format!("{what}: nothing changed"));
    }

    // A journal that agrees resumes, its torn last line cut off.
    let mut text: String = lines[..2].iter().map(|l| format!("{l}\n")).collect();
    text.push_str("{\"case\":2,\"caseId\":\"case-0");
    std::fs::write(out.join("cells.jsonl"), text).unwrap();
    let (code, stdout, stderr) = resume(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("2 of 4 cases finished earlier"), "{stderr}");
    assert_complete(&out, n);
}

#[test]
fn resuming_an_experiment_checks_its_groups_journals() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, canned) = suite(dir.path(), 3, json!({}));
    let out = dir.path().join("run");
    let (code, stdout, stderr) = output(
        eval_command(&fixture, &canned, &out)
            .args(["--trials", "2"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Trial 2 stopped early, as far as the records say.
    let group = out.join("variants/default/trial-2");
    assert!(group.join("cells.jsonl").is_file(), "{group:?}");
    interrupted(&group);
    let record = std::fs::read_to_string(out.join("experiment.json")).unwrap();
    std::fs::write(
        out.join("experiment.json"),
        record.replace(
            "\n  \"status\": \"completed\"",
            "\n  \"status\": \"interrupted\"",
        ),
    )
    .unwrap();
    let mut lines: Vec<Value> = std::fs::read_to_string(group.join("cells.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.sort_by_key(|l| l["case"].as_u64());
    lines[0]["caseId"] = json!("case-00002");
    lines.truncate(1);
    write_journal(&group, &lines);
    let (code, stdout, stderr) = resume(&out);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("trial-2") && stderr.contains("line 1") && stderr.contains("case 2"),
        "{stderr}"
    );
}

#[test]
fn a_project_run_into_a_directory_holding_a_suites_inputs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("cautilus.toml"),
        "include = [\"evals/*.fixture.json\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.join("evals/cases/one")).unwrap();
    std::fs::write(
        d.join("evals/cases/one/case.yaml"),
        "input: q\nexpected: { finalText: fine }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("evals/s.fixture.json"),
        json!({"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app",
               "preset": "prompt", "suiteId": "s", "provider": "fixture", "model": "m",
               "cases": "./cases/"})
        .to_string(),
    )
    .unwrap();
    let before = snapshot(d);
    // The project's claim knows only the suites' fixtures; each suite's
    // own claim knows its case directory.
    for (out, names) in [
        ("evals/cases", "which this run reads"),
        ("evals/cases/one/out", "case directory"),
    ] {
        let (code, stdout, stderr) = output(
            cautilus()
                .current_dir(d)
                .args(["eval", "test", "--output-dir", out])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{out}: {stdout}{stderr}");
        let text = format!("{stdout}{stderr}");
        assert!(text.contains(names), "{out}: {text}");
    }
    assert_unchanged(&before, &snapshot(d), "nothing written, nothing changed");
    // Beside the inputs: the project runs.
    let (code, stdout, stderr) = output(
        cautilus()
            .current_dir(d)
            .args(["eval", "test", "--output-dir", "runs/p"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
}
