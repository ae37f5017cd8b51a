//! Answers kept as they arrive (`answers.jsonl`): with one case whose
//! service hangs and the cases after it answered, the answers survive
//! SIGKILL and a second interrupt, and `--resume` scores them without
//! asking the service again (it asks only for the hanging case); a damaged
//! line is refused naming it, a torn last one is asked again; a key the
//! service echoes, and what the user redacts, are not kept.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cautilus_tests::model_server::{ModelServer, Recorded, Reply, openai_echo};
use serde_json::{Value, json};

use crate::support::{cautilus, output, read_json};

/// Cases of the suite: `case-00` hangs, the other 14 answer at once.
const N: usize = 15;
const KEY: &str = "sk-kept-Answers-9090";

/// Holds the first case's answer until the test opens it.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    fn wait(&self) {
        let open = self.open.lock().unwrap();
        // Bounded, so a failed test leaves no thread behind for long.
        let _ = self
            .opened
            .wait_timeout_while(open, Duration::from_secs(120), |open| !*open)
            .unwrap();
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

/// The case a request asks about (its input is `echo <i>`).
fn case_of(request: &Recorded) -> usize {
    request
        .body
        .split("echo ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .expect("an echo case")
}

/// A loopback OpenAI-compatible service: case 0 waits for the gate, every
/// other case answers at once (`answer`).
fn service(gate: &Arc<Gate>, answer: fn(&Recorded, usize) -> Reply) -> ModelServer {
    let gate = gate.clone();
    ModelServer::start(move |request, _| {
        let case = case_of(request);
        if case == 0 {
            gate.wait();
        }
        answer(request, case)
    })
}

/// Each case's input echoed back, and the key it was sent echoed as the
/// answering model.
fn echo_with_key(request: &Recorded, _: usize) -> Reply {
    let mut body: Value = serde_json::from_str(&openai_echo(request).body).unwrap();
    body["model"] = json!(request.header("authorization").unwrap_or_default());
    Reply::json(200, body.to_string())
}

/// An app/prompt suite whose case `i` expects its input `echo <i>` back.
fn suite(dir: &Path) -> PathBuf {
    let cases: Vec<Value> = (0..N)
        .map(|i| {
            json!({"caseId": format!("case-{i:02}"), "input": format!("echo {i}"),
                   "expected": {"finalText": format!("echo {i}")}})
        })
        .collect();
    let path = dir.join("suite.fixture.json");
    let suite = json!({
        "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
        "suiteId": "kept-answers", "provider": "openai", "model": "loopback-model",
        "cases": cases,
    });
    std::fs::write(&path, suite.to_string()).unwrap();
    path
}

fn with_service(command: &mut Command, server: &ModelServer) {
    command
        .env("OPENAI_BASE_URL", &server.url)
        .env("OPENAI_API_KEY", KEY);
}

/// A run under test, killed if the test fails before it ends.
struct Running(Child);

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `eval test` with every case's call in flight at once.
fn start(server: &ModelServer, dir: &Path, extra: &[&str], stderr: Stdio) -> (Running, PathBuf) {
    let fixture = suite(dir);
    let out = dir.join("run");
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(&fixture)
        .arg("--workspace")
        .arg(dir)
        .arg("--output-dir")
        .arg(&out)
        .args(["--concurrency", "16"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(stderr);
    with_service(&mut command, server);
    (Running(command.spawn().unwrap()), out)
}

/// The complete lines of the run's kept answers.
fn kept(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("answers.jsonl")).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Waits until the run kept the answers of every case but the hanging one.
fn wait_for_answers(out: &Path, child: &mut Child) {
    let started = Instant::now();
    while kept(out).len() < N - 1 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it kept the answers"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run kept {} answers in 60 s, not {}",
            kept(out).len(),
            N - 1
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &Child, signal: i32) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

/// What a run left when it was stopped with case 0 still waiting: every
/// other case asked once and kept, none journaled (they were behind it).
fn assert_answers_kept(server: &ModelServer, out: &Path) {
    let mut asked: Vec<usize> = server.requests().iter().map(case_of).collect();
    asked.sort_unstable();
    assert_eq!(asked, (0..N).collect::<Vec<_>>(), "each case asked once");
    let mut cases: Vec<u64> = kept(out)
        .iter()
        .map(|line| line["case"].as_u64().unwrap())
        .collect();
    cases.sort_unstable();
    assert_eq!(cases, (1..N as u64).collect::<Vec<_>>());
    let journal = std::fs::read_to_string(out.join("cells.jsonl")).unwrap();
    assert_eq!(journal, "", "nothing behind the waiting case was scored");
}

fn resume(server: &ModelServer, out: &Path) -> (i32, String, String) {
    let mut command = cautilus();
    command.args(["eval", "test", "--resume"]).arg(out);
    with_service(&mut command, server);
    output(command.output().unwrap())
}

/// A resume that scored every case while asking the service only for the
/// cases in `asked_again`.
fn assert_resumed(server: &ModelServer, out: &Path, asked_again: &[usize]) {
    let (code, stdout, stderr) = resume(server, out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let kept_earlier = N - asked_again.len();
    assert!(
        stderr.contains(&format!("{kept_earlier} of them were answered before")),
        "{stderr}"
    );
    let requests = server.requests();
    let mut again: Vec<usize> = requests[N..].iter().map(case_of).collect();
    again.sort_unstable();
    assert_eq!(again, asked_again, "only those cases were asked again");
    let summary = read_json(&out.join("eval-summary.json"));
    assert_eq!(summary["evaluationCounts"]["passed"], N, "{summary}");
    let ids: Vec<&str> = summary["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["caseId"].as_str().unwrap())
        .collect();
    let all: Vec<String> = (0..N).map(|i| format!("case-{i:02}")).collect();
    assert_eq!(ids, all, "every case once, in order");
    assert_eq!(read_json(&out.join("run.json"))["status"], "completed");
    assert!(
        !out.join("answers.jsonl").exists(),
        "a completed run has nothing left to resume: its kept answers are removed"
    );
}

#[test]
fn answers_behind_a_hanging_case_survive_sigkill_and_resume_asks_only_for_that_case() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let server = service(&gate, echo_with_key);
    let (mut child, out) = start(&server, dir.path(), &[], Stdio::null());
    wait_for_answers(&out, &mut child);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    assert_answers_kept(&server, &out);
    gate.open();
    assert_resumed(&server, &out, &[0]);
}

#[test]
fn a_second_interrupt_keeps_the_answers_behind_a_hanging_case() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let server = service(&gate, echo_with_key);
    let (mut child, out) = start(&server, dir.path(), &[], Stdio::piped());
    let stderr = child.stderr.take().unwrap();
    let (lines, said) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    wait_for_answers(&out, &mut child);
    signal(&child, libc::SIGINT);
    // The second signal only once the first was taken (two pending
    // signals of one kind are one).
    let announced = loop {
        let line = said
            .recv_timeout(Duration::from_secs(60))
            .expect("the first interrupt is announced");
        if line.starts_with("interrupted:") {
            break line;
        }
    };
    assert!(
        announced.contains("answers already received"),
        "{announced}"
    );
    signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "stopped at once");
    assert_answers_kept(&server, &out);
    gate.open();
    assert_resumed(&server, &out, &[0]);
}

#[test]
fn a_damaged_kept_answer_is_refused_naming_its_line_and_a_torn_last_one_is_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let server = service(&gate, echo_with_key);
    let (mut child, out) = start(&server, dir.path(), &[], Stdio::null());
    wait_for_answers(&out, &mut child);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    gate.open();
    let path = out.join("answers.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();

    let mut damaged = lines.clone();
    damaged[2] = "{\"case\": 3, \"caseId\": ";
    std::fs::write(&path, damaged.join("\n") + "\n").unwrap();
    let (code, stdout, stderr) = resume(&server, &out);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("answers.jsonl") && stderr.contains("damaged at line 3"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), N, "nothing was asked");

    // A kill while a line was written: its case is asked again.
    let torn_case = serde_json::from_str::<Value>(lines[N - 2]).unwrap()["case"]
        .as_u64()
        .unwrap() as usize;
    let last = lines[N - 2];
    let torn = format!("{}\n{}", lines[..N - 2].join("\n"), &last[..last.len() / 2]);
    std::fs::write(&path, torn).unwrap();
    let mut again = vec![0, torn_case];
    again.sort_unstable();
    assert_resumed(&server, &out, &again);
}

/// Case 1 is refused quoting the key; the others echo it as their model
/// and answer with a customer's address the user redacts.
fn echo_key_and_address(request: &Recorded, case: usize) -> Reply {
    if case == 1 {
        let header = request.header("authorization").unwrap_or_default();
        return Reply::json(
            401,
            json!({"error": {"message": format!("bad key: {header}")}}).to_string(),
        );
    }
    let mut body: Value = serde_json::from_str(&echo_with_key(request, case).body).unwrap();
    body["choices"][0]["message"]["content"] = json!(format!("echo {case} for ann@example.com"));
    Reply::json(200, body.to_string())
}

#[test]
fn a_key_the_service_echoes_and_what_the_user_redacts_are_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::default());
    let server = service(&gate, echo_key_and_address);
    let (mut child, out) = start(
        &server,
        dir.path(),
        &["--redact", "finalText"],
        Stdio::null(),
    );
    wait_for_answers(&out, &mut child);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    gate.open();
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}"))),
        "the key was sent (the service had it to echo)"
    );
    let text = std::fs::read_to_string(out.join("answers.jsonl")).unwrap();
    assert!(
        !text
            .to_ascii_lowercase()
            .contains(&KEY.to_ascii_lowercase()),
        "{text}"
    );
    assert!(!text.contains("ann@example.com"), "{text}");
    let lines = kept(&out);
    let line = |case: u64| lines.iter().find(|l| l["case"] == case).unwrap();
    let error = line(1)["samples"][0]["error"].as_str().unwrap();
    assert!(error.contains("bad key: Bearer [redacted]"), "{error}");
    let answer = &line(2)["samples"][0]["observation"];
    assert_eq!(answer["model"], "Bearer [redacted]");
    assert_eq!(answer["finalText"], "[redacted]");
}
