//! Provider calls in flight at once (`--concurrency`): an API provider's
//! calls overlap up to the number asked for and no further, records stay in
//! case order, and an interrupted run writes every call it started and
//! resumes with the rest.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cautilus_tests::model_server::{ModelServer, Recorded, openai_echo};
use serde_json::{Value, json};

use crate::support::{cautilus, output, read_json};

/// An app/prompt suite of `n` cases, each expecting its input echoed back.
fn echo_suite(dir: &Path, n: usize) -> PathBuf {
    let cases: Vec<Value> = (0..n)
        .map(|i| {
            json!({"caseId": format!("case-{i:03}"), "input": format!("echo {i}"),
                   "expected": {"finalText": format!("echo {i}")}})
        })
        .collect();
    let suite = json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": "concurrency", "provider": "openai", "model": "loopback-model",
        "cases": cases,
    });
    let path = dir.join("suite.fixture.json");
    std::fs::write(&path, suite.to_string()).unwrap();
    path
}

/// A server that echoes the last user message after `delay(i)` for the
/// case `echo i`, counting the requests it holds at once (now, most).
pub(crate) fn echo_server(
    delay: impl Fn(usize) -> Duration + Send + Sync + 'static,
) -> (ModelServer, Arc<(AtomicUsize, AtomicUsize)>) {
    let counts = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let seen = counts.clone();
    let server = ModelServer::start(move |request: &Recorded, _| {
        let now = seen.0.fetch_add(1, Ordering::SeqCst) + 1;
        seen.1.fetch_max(now, Ordering::SeqCst);
        let case = request
            .body
            .split("echo ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|digits| digits.parse().ok())
            .unwrap_or(0);
        std::thread::sleep(delay(case));
        seen.0.fetch_sub(1, Ordering::SeqCst);
        openai_echo(request)
    });
    (server, counts)
}

pub(crate) fn command(
    server: &ModelServer,
    fixture: &Path,
    out: &Path,
    concurrency: &str,
) -> Command {
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(fixture.parent().unwrap())
        .arg("--output-dir")
        .arg(out)
        .args(["--provider", "openai", "--concurrency", concurrency])
        .env("OPENAI_BASE_URL", &server.url)
        .env_remove("OPENAI_API_KEY");
    command
}

fn case_ids(packet: &Value) -> Vec<String> {
    packet["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["caseId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn api_calls_overlap_up_to_the_concurrency_asked_for_and_no_further() {
    let dir = tempfile::tempdir().unwrap();
    let n = 12;
    let fixture = echo_suite(dir.path(), n);
    // Earlier cases answer later, so answers arrive out of case order.
    let (server, counts) = echo_server(move |i| Duration::from_millis(150 + 40 * (n - i) as u64));
    let out = dir.path().join("run");
    let (code, stdout, stderr) = output(command(&server, &fixture, &out, "4").output().unwrap());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(server.requests().len(), n, "one call per case");
    assert_eq!(
        counts.1.load(Ordering::SeqCst),
        4,
        "the server held exactly --concurrency calls at once"
    );
    let summary = read_json(&out.join("eval-summary.json"));
    assert_eq!(summary["evaluationCounts"]["passed"], n, "{summary}");
    let expected: Vec<String> = (0..n).map(|i| format!("case-{i:03}")).collect();
    assert_eq!(case_ids(&summary), expected, "records in case order");
    assert_eq!(
        case_ids(&read_json(&out.join("eval-observed.json"))),
        expected
    );
    assert_eq!(
        read_json(&out.join("run.json"))["options"]["concurrency"],
        4
    );
}

#[test]
fn one_call_at_a_time_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = echo_suite(dir.path(), 4);
    let (server, counts) = echo_server(|_| Duration::from_millis(50));
    let (code, stdout, stderr) = output(
        command(&server, &fixture, &dir.path().join("run"), "1")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(counts.1.load(Ordering::SeqCst), 1);
}

fn signal(child: &Child, signal: i32) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

#[test]
fn an_interrupted_run_writes_every_call_it_started_and_resumes_with_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40;
    let fixture = echo_suite(dir.path(), n);
    let (server, _) = echo_server(|i| Duration::from_millis(120 + 40 * (i % 3) as u64));
    let out = dir.path().join("run");
    let child = command(&server, &fixture, &out, "4")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while server.requests().len() < 8 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no calls within 120 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, libc::SIGINT);
    let (code, stdout, stderr) = output(child.wait_with_output().unwrap());
    assert_eq!(code, 130, "{stdout}{stderr}");
    let state = read_json(&out.join("run.json"));
    assert_eq!(state["status"], "interrupted", "{state}");
    let finished = state["finishedCases"].as_u64().unwrap() as usize;
    assert!((8..n).contains(&finished), "{state}");
    assert_eq!(
        server.requests().len(),
        finished,
        "every call started was waited for and written; none started after"
    );
    let summary = read_json(&out.join("eval-summary.json"));
    let prefix: Vec<String> = (0..finished).map(|i| format!("case-{i:03}")).collect();
    assert_eq!(case_ids(&summary), prefix, "calls start in case order");

    let (code, stdout, stderr) = output(
        cautilus()
            .args(["eval", "test", "--resume"])
            .arg(&out)
            .env("OPENAI_BASE_URL", &server.url)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(server.requests().len(), n, "the rest ran, each once");
    let summary = read_json(&out.join("eval-summary.json"));
    assert_eq!(summary["evaluationCounts"]["passed"], n, "{summary}");
    let all: Vec<String> = (0..n).map(|i| format!("case-{i:03}")).collect();
    assert_eq!(case_ids(&summary), all);
}

/// A project of `suites` suites of `cases` echo cases each, under `dir`.
fn echo_project(dir: &Path, suites: usize, cases: usize) {
    std::fs::write(dir.join("cautilus.toml"), "").unwrap();
    for s in 0..suites {
        let suite_dir = dir.join("evals").join(format!("s{s}"));
        std::fs::create_dir_all(&suite_dir).unwrap();
        let file = echo_suite(&suite_dir, cases);
        let mut suite = read_json(&file);
        suite["suiteId"] = json!(format!("suite-{s}"));
        std::fs::remove_file(&file).unwrap();
        std::fs::write(suite_dir.join("echo.fixture.json"), suite.to_string()).unwrap();
    }
}

fn project_run(server: &ModelServer, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut command = cautilus();
    command
        .current_dir(dir)
        .args(["eval", "test", "--provider", "openai"])
        .args(args)
        .env("OPENAI_BASE_URL", &server.url)
        .env_remove("OPENAI_API_KEY");
    output(command.output().unwrap())
}

#[test]
fn a_projects_suites_run_at_once_within_the_concurrency_budget() {
    // Three one-case suites at once: all three calls are in flight together.
    let dir = tempfile::tempdir().unwrap();
    echo_project(dir.path(), 3, 1);
    let (server, counts) = echo_server(|_| Duration::from_millis(400));
    let (code, stdout, stderr) = project_run(&server, dir.path(), &["--parallel-suites", "3"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(counts.1.load(Ordering::SeqCst), 3, "the suites overlapped");
    // One line per suite as it finishes, the summary in manifest order.
    for s in 0..3 {
        assert!(
            stdout.contains(&format!("== suite-{s} accept-now")),
            "{stdout}"
        );
    }
    let summary = stdout.split("== project:").nth(1).unwrap();
    let order: Vec<usize> = (0..3)
        .map(|s| summary.find(&format!("suite-{s} ")).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{summary}");

    // One at a time: never two calls at once, and the case lines print.
    let (server, counts) = echo_server(|_| Duration::from_millis(100));
    let (code, stdout, stderr) = project_run(&server, dir.path(), &["--parallel-suites", "1"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(counts.1.load(Ordering::SeqCst), 1);
    assert!(stdout.contains("PASS  case-000"), "{stdout}");

    // Two suites of four cases share --concurrency 2: one call each at most.
    let dir = tempfile::tempdir().unwrap();
    echo_project(dir.path(), 2, 4);
    let (server, counts) = echo_server(|_| Duration::from_millis(150));
    let (code, stdout, stderr) = project_run(
        &server,
        dir.path(),
        &["--parallel-suites", "2", "--concurrency", "2"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(server.requests().len(), 8);
    assert_eq!(
        counts.1.load(Ordering::SeqCst),
        2,
        "the budget is shared, not multiplied"
    );
}

#[test]
fn the_configs_provider_base_url_is_used_and_its_variable_wins() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = echo_suite(dir.path(), 2);
    let (configured, _) = echo_server(|_| Duration::from_millis(1));
    std::fs::write(
        dir.path().join("cautilus.toml"),
        format!("[providers.openai]\nbase_url = \"{}\"\n", configured.url),
    )
    .unwrap();
    let run = |env_url: Option<&str>| {
        let mut command = cautilus();
        command
            .current_dir(dir.path())
            .args(["eval", "test", "--provider", "openai", "--fixture"])
            .arg(&fixture)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL");
        if let Some(url) = env_url {
            command.env("OPENAI_BASE_URL", url);
        }
        output(command.output().unwrap())
    };
    let (code, stdout, stderr) = run(None);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        configured.requests().len(),
        2,
        "the config's server answered"
    );
    // The environment variable still wins over the config.
    let (other, _) = echo_server(|_| Duration::from_millis(1));
    let (code, stdout, stderr) = run(Some(&other.url));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(other.requests().len(), 2);
    assert_eq!(configured.requests().len(), 2);
    // A bad URL is named in the config.
    std::fs::write(
        dir.path().join("cautilus.toml"),
        "[providers.openai]\nbase_url = \"ftp://x\"\n",
    )
    .unwrap();
    let (code, _, stderr) = run(None);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`providers.openai.base_url`: `ftp://x` is not an http(s) URL"),
        "{stderr}"
    );
    std::fs::write(
        dir.path().join("cautilus.toml"),
        "[providers.openai]\nbase_uri = \"x\"\n",
    )
    .unwrap();
    let (code, _, stderr) = run(None);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown key `providers.openai.base_uri`; did you mean `base_url`?"),
        "{stderr}"
    );
}
