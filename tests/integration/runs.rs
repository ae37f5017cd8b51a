//! Runs under load and interruption, through the real binary: per-case
//! assertion configs at scale never change a verdict, a broken check makes
//! a case `errored` (not `failed`), and an interrupted or killed run keeps
//! every finished case and resumes with the rest only.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{cautilus, component, output, read_json};

/// Writes an app/prompt suite of `n` cases to `dir` (case `i` answers
/// `answer(i)` through the fixture backend's canned results) and returns
/// (fixture, canned results).
fn prompt_suite(
    dir: &Path,
    n: usize,
    suite: Value,
    case: impl Fn(usize) -> Value,
    answer: impl Fn(usize) -> String,
) -> (PathBuf, PathBuf) {
    let mut fixture = json!({
        "schemaVersion": "cautilus.evaluation_input.v1",
        "surface": "app",
        "preset": "prompt",
        "suiteId": "runs",
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
    });
    for (key, value) in suite.as_object().unwrap() {
        fixture[key] = value.clone();
    }
    fixture["cases"] = (0..n).map(&case).collect();
    let canned: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("case-{i:05}"), json!(answer(i))))
        .collect();
    let fixture_path = dir.join("suite.fixture.json");
    std::fs::write(&fixture_path, fixture.to_string()).unwrap();
    let canned_path = dir.join("canned.json");
    std::fs::write(&canned_path, Value::Object(canned).to_string()).unwrap();
    (fixture_path, canned_path)
}

/// `cautilus eval test` on `fixture` with its canned answers, writing to `out`.
fn eval_command(
    fixture: &Path,
    canned: &Path,
    out: &Path,
    extra: &[&str],
) -> std::process::Command {
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--fixture-results")
        .arg(canned)
        .arg("--workspace")
        .arg(fixture.parent().unwrap())
        .arg("--output-dir")
        .arg(out)
        .args(extra);
    command
}

fn eval_test(fixture: &Path, canned: &Path, out: &Path, extra: &[&str]) -> (i32, String, String) {
    output(eval_command(fixture, canned, out, extra).output().unwrap())
}

fn evaluations(summary: &Value) -> &Vec<Value> {
    summary["evaluations"].as_array().unwrap()
}

#[test]
fn per_case_assertion_configs_at_scale_keep_every_verdict() {
    // Every case has its own five assertion values, the way suites are
    // written; two workers with full batches once needed more than the
    // engine's 1,000 instances and reported passing assertions as failed.
    let dir = tempfile::tempdir().unwrap();
    let n = 3000;
    let text = |i: usize| format!("item {i}: the answer is {}", i * 7);
    let (fixture, canned) = prompt_suite(
        dir.path(),
        n,
        json!({}),
        |i| {
            json!({
                "caseId": format!("case-{i:05}"),
                "input": format!("question {i}"),
                "expected": {"finalText": format!("item {i}:")},
                "assertions": [
                    {"type": "equals", "value": text(i)},
                    {"type": "contains", "value": format!("is {}", i * 7)},
                    {"type": "regex", "value": format!("^item {i}: ")},
                    {"type": "levenshtein", "value": format!("item {i}: the answer is"), "max_distance": 12},
                    {"type": "is-json", "negate": true},
                ],
            })
        },
        text,
    );
    let out = dir.path().join("run");
    let (code, stdout, stderr) = eval_test(&fixture, &canned, &out, &["--jobs", "2", "--json"]);
    assert_eq!(code, 0, "{stderr}\n{}", &stdout[..stdout.len().min(2000)]);
    let summary = read_json(&out.join("eval-summary.json"));
    assert_eq!(summary["evaluationCounts"]["total"], n);
    assert_eq!(summary["evaluationCounts"]["passed"], n);
    for evaluation in evaluations(&summary) {
        for assertion in evaluation["assertions"].as_array().unwrap() {
            assert_eq!(assertion["status"], "passed", "{evaluation}");
        }
    }
}

/// A suite whose one assertion is the hostile test scorer (copied beside
/// the fixture: a fixture names components inside its root), which
/// misbehaves as the answer says.
fn hostile_suite(dir: &Path, answers: &[&str]) -> (PathBuf, PathBuf) {
    std::fs::copy(component("hostile"), dir.join("hostile.wasm")).unwrap();
    let hostile = "./hostile.wasm";
    let answers: Vec<String> = answers.iter().map(|a| a.to_string()).collect();
    prompt_suite(
        dir,
        answers.len(),
        json!({"assertions": [{"type": hostile, "name": "hostile"}]}),
        |i| json!({"caseId": format!("case-{i:05}"), "input": "q", "expected": {"finalText": answers[i]}}),
        |i| answers[i].clone(),
    )
}

#[test]
fn a_broken_check_makes_the_case_errored_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, canned) = hostile_suite(dir.path(), &["ok", "panic", "bomb", "fail", "ok"]);
    let out = dir.path().join("run");
    let (code, stdout, stderr) = eval_test(&fixture, &canned, &out, &[]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let summary = read_json(&out.join("eval-summary.json"));
    let counts = &summary["evaluationCounts"];
    assert_eq!(counts["passed"], 2, "{counts}");
    assert_eq!(
        counts["errored"], 3,
        "panic, memory limit and a guest error judged nothing: {counts}"
    );
    assert_eq!(counts["failed"], 0, "{counts}");
    assert_eq!(summary["recommendation"], "reject");
    let by_id = |id: &str| {
        evaluations(&summary)
            .iter()
            .find(|e| e["caseId"] == id)
            .unwrap()
            .clone()
    };
    let panicked = by_id("case-00001");
    assert_eq!(panicked["status"], "errored");
    assert_eq!(panicked["assertions"][0]["status"], "errored");
    let detail = panicked["assertions"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("panicked") && detail.contains("boom"),
        "{detail}"
    );
    let bombed = by_id("case-00002");
    assert!(
        bombed["assertions"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("memory limit"),
        "{bombed}"
    );
    // The case after a trap is scored by a fresh instance.
    assert_eq!(by_id("case-00004")["status"], "passed");
    assert!(stdout.contains("ERROR case-00001"), "{stdout}");
}

/// Starts `eval test` on a suite whose every case runs a 50 ms code
/// grader, so the run takes seconds and can be interrupted midway.
fn slow_run(dir: &Path, n: usize) -> (PathBuf, PathBuf, PathBuf) {
    let (fixture, canned) = prompt_suite(
        dir,
        n,
        json!({"assertions": [{"type": "code-grader", "command": ["sleep", "0.05"]}]}),
        |i| json!({"caseId": format!("case-{i:05}"), "input": "q", "expected": {"finalText": "fine"}}),
        |_| "fine".to_string(),
    );
    (fixture, canned, dir.join("run"))
}

fn spawn(fixture: &Path, canned: &Path, out: &Path) -> Child {
    eval_command(fixture, canned, out, &["--jobs", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the run's journal holds at least `lines` finished cases.
fn wait_for_journal(out: &Path, lines: usize, child: &mut Child) {
    let started = Instant::now();
    loop {
        let done = std::fs::read_to_string(out.join("cells.jsonl"))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if done >= lines {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be interrupted"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no case finished within 120 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, signal: i32) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

fn leftovers(out: &Path) -> Vec<String> {
    std::fs::read_dir(out)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".partial") || name.starts_with(".tmp"))
        .collect()
}

/// The case ids of a complete run, in order, each once; each case ran
/// once (a case run again would have a second journal line).
fn assert_complete(out: &Path, n: usize) {
    let journal = std::fs::read_to_string(out.join("cells.jsonl")).unwrap();
    let mut cases: Vec<u64> = journal
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["case"]
                .as_u64()
                .unwrap()
        })
        .collect();
    cases.sort_unstable();
    assert_eq!(
        cases,
        (0..n as u64).collect::<Vec<_>>(),
        "each case ran once"
    );
    let summary = read_json(&out.join("eval-summary.json"));
    let observed = read_json(&out.join("eval-observed.json"));
    let expected: Vec<String> = (0..n).map(|i| format!("case-{i:05}")).collect();
    for packet in [&summary, &observed] {
        let ids: Vec<&str> = evaluations(packet)
            .iter()
            .map(|e| e["caseId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, expected, "every case once, in order");
    }
    assert_eq!(summary["evaluationCounts"]["total"], n);
    assert_eq!(summary["evaluationCounts"]["passed"], n);
    assert_eq!(summary["recommendation"], "accept-now");
    assert!(summary.get("interrupted").is_none());
    let state = read_json(&out.join("run.json"));
    assert_eq!(state["status"], "completed");
    assert_eq!(state["finishedCases"], n);
    assert_eq!(leftovers(out), Vec::<String>::new());
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

#[test]
fn sigint_keeps_finished_cases_and_resume_runs_only_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let n = 200;
    let (fixture, canned, out) = slow_run(dir.path(), n);
    let mut child = spawn(&fixture, &canned, &out);
    wait_for_journal(&out, 10, &mut child);
    signal(&child, libc::SIGINT);
    let (code, stdout, stderr) = output(child.wait_with_output().unwrap());
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert!(
        stderr.contains("--resume"),
        "says how to continue: {stderr}"
    );

    let state = read_json(&out.join("run.json"));
    assert_eq!(state["status"], "interrupted", "{state}");
    assert_eq!(state["interruptedBy"], "SIGINT");
    let finished = state["finishedCases"].as_u64().unwrap() as usize;
    assert!((10..n).contains(&finished), "{state}");
    let summary = read_json(&out.join("eval-summary.json"));
    assert_eq!(evaluations(&summary).len(), finished);
    assert_eq!(summary["interrupted"]["finishedCases"], finished);
    assert_eq!(summary["interrupted"]["totalCases"], n);
    assert_ne!(summary["recommendation"], "accept-now");
    assert_eq!(
        evaluations(&read_json(&out.join("eval-observed.json"))).len(),
        finished
    );
    assert_eq!(leftovers(&out), Vec::<String>::new(), "no temp files");

    let (code, stdout, stderr) = resume(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("{finished} of {n} cases finished earlier")),
        "{stderr}"
    );
    assert_eq!(
        stdout.matches("PASS ").count(),
        n,
        "every case's line: {stdout}"
    );
    assert_complete(&out, n);
    assert_eq!(read_json(&out.join("run.json"))["resumed"], 1);

    let (code, _, stderr) = resume(&out);
    assert_eq!(code, 2, "a completed run has nothing to resume: {stderr}");
}

#[test]
fn a_killed_run_resumes_from_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let n = 120;
    let (fixture, canned, out) = slow_run(dir.path(), n);
    let mut child = spawn(&fixture, &canned, &out);
    wait_for_journal(&out, 10, &mut child);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let state = read_json(&out.join("run.json"));
    assert_eq!(
        state["status"], "running",
        "a killed run could not say more"
    );
    let journaled = std::fs::read_to_string(out.join("cells.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(journaled >= 10, "{journaled}");

    let (code, stdout, stderr) = resume(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("{journaled} of {n} cases finished earlier")),
        "{stderr}"
    );
    assert_complete(&out, n);
}

#[test]
fn resume_refuses_a_changed_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, canned, out) = slow_run(dir.path(), 40);
    let mut child = spawn(&fixture, &canned, &out);
    wait_for_journal(&out, 2, &mut child);
    signal(&child, libc::SIGTERM);
    let (code, _, stderr) = output(child.wait_with_output().unwrap());
    assert_eq!(code, 143, "{stderr}");
    assert_eq!(read_json(&out.join("run.json"))["interruptedBy"], "SIGTERM");
    let mut suite = read_json(&fixture);
    suite["cases"][39]["input"] = json!("a different question");
    std::fs::write(&fixture, suite.to_string()).unwrap();
    let (code, _, stderr) = resume(&out);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the fixture changed since this run started"),
        "{stderr}"
    );
}

#[test]
fn one_scorer_instance_serves_any_number_of_configs_within_its_bound() {
    use cautilus::plugin::scorer_instance::MAX_GRADERS;
    use cautilus::plugin::{GraderSpec, Limits, ScorerInstance};

    let (plugin, _) = crate::support::registry()
        .resolve_scorer("contains")
        .unwrap();
    let mut instance =
        ScorerInstance::new(plugin.clone(), Limits::default(), Default::default()).unwrap();
    for i in 0..(MAX_GRADERS * 2 + 7) {
        for scorer in ["contains", "equals"] {
            let spec =
                GraderSpec::new(&plugin, scorer, &json!({"value": format!("n{i}")})).unwrap();
            let hit = crate::support::input(&format!("n{i}"), None);
            let score = instance.score(&spec, &hit).unwrap();
            assert_eq!(score.passed, Some(true), "{scorer} {i}");
            assert!(instance.prepared() <= MAX_GRADERS);
        }
    }
    let bad = GraderSpec::new(&plugin, "regex", &json!({"value": "("}));
    let error = match bad {
        Ok(spec) => instance.prepare(&spec).unwrap_err(),
        Err(error) => error,
    };
    assert!(error.is_definition_error(), "{error}");
}

#[test]
fn more_scorer_plugins_than_live_instances_keep_their_verdicts() {
    // Seventeen distinct scorer components (the hostile test scorer, each
    // copy made distinct by a custom section) in one suite: past the
    // worker's bound of live instances the least recently used is dropped
    // and made again when needed, and no verdict changes.
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read(component("hostile")).unwrap();
    let assertions: Vec<Value> = (0..17u8)
        .map(|k| {
            // A custom section: id 0, size, name length, name, payload.
            let name = format!("copy-{k:02}");
            let mut bytes = original.clone();
            bytes.extend([0u8, (1 + name.len()) as u8, name.len() as u8]);
            bytes.extend(name.as_bytes());
            let file = format!("hostile-{k:02}.wasm");
            std::fs::write(dir.path().join(&file), bytes).unwrap();
            json!({"type": format!("./{file}"), "name": name})
        })
        .collect();
    let (fixture, canned) = prompt_suite(
        dir.path(),
        40,
        json!({"assertions": assertions}),
        |i| json!({"caseId": format!("case-{i:05}"), "input": "q", "expected": {"finalText": "ok"}}),
        |_| "ok".to_string(),
    );
    let out = dir.path().join("run");
    let (code, stdout, stderr) = eval_test(&fixture, &canned, &out, &["--jobs", "1"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary = read_json(&out.join("eval-summary.json"));
    for evaluation in evaluations(&summary) {
        assert_eq!(evaluation["assertions"].as_array().unwrap().len(), 17);
        assert_eq!(evaluation["status"], "passed", "{evaluation}");
    }
}

/// Runs `eval test` on `fixture` and returns (exit code, peak RSS in KiB)
/// of that process alone.
fn peak_rss_kib(fixture: &Path, out: &Path) -> (i32, i64) {
    let mut command = cautilus();
    command
        .args([
            "eval",
            "test",
            "--provider",
            "fixture",
            "--json",
            "--fixture",
        ])
        .arg(fixture)
        .arg("--workspace")
        .arg(fixture.parent().unwrap())
        .arg("--output-dir")
        .arg(out);
    crate::support::peak_rss_kib(&command, &out.with_extension("log"))
}

#[test]
fn memory_stays_flat_as_a_streamed_suite_grows() {
    // A suite of one-line JSONL cases: three times the cases must not need
    // noticeably more memory (the run streams them; it used to hold every
    // case, plan and record body, about 2 KiB a case). Both sizes are past
    // what the checking pass may keep for the run (a fixed budget).
    let dir = tempfile::tempdir().unwrap();
    let suite = |n: usize| {
        let cases = dir.path().join(format!("cases-{n}.jsonl"));
        let lines: String = (0..n)
            .map(|i| {
                format!(
                    "{{\"caseId\":\"case-{i:06}\",\"input\":\"Question {i}: describe item {i}.\",\"expected\":{{\"finalText\":\"item {i}\"}}}}\n"
                )
            })
            .collect();
        std::fs::write(&cases, lines).unwrap();
        let fixture = dir.path().join(format!("suite-{n}.fixture.json"));
        let body = json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "flat",
            "provider": "anthropic", "model": "claude-sonnet-4-6",
            "cases": format!("./cases-{n}.jsonl"),
        });
        std::fs::write(&fixture, body.to_string()).unwrap();
        fixture
    };
    let (small, large) = (40_000, 120_000);
    let (code, small_kib) = peak_rss_kib(&suite(small), &dir.path().join("small"));
    assert_eq!(code, 0);
    let (code, large_kib) = peak_rss_kib(&suite(large), &dir.path().join("large"));
    assert_eq!(code, 0);
    let summary = read_json(&dir.path().join("large/eval-summary.json"));
    assert_eq!(summary["evaluationCounts"]["passed"], large);
    // Held whole, the extra 80,000 cases cost about 160 MiB; streamed, a
    // hash and an index per case (~3 MiB) plus allocator noise.
    let grown_kib = large_kib - small_kib;
    assert!(
        grown_kib < 48 * 1024,
        "{small} cases: {small_kib} KiB, {large} cases: {large_kib} KiB (+{grown_kib} KiB)"
    );
}
