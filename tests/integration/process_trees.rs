//! A code grader's processes end with it (Linux): whatever the grader does
//! (background jobs holding its stdout, `setsid`, double forks, fifty
//! children, a subreaper of its own, stopping or killing its supervisor),
//! cautilus returns the verdict without waiting for them, ends the run at
//! the grader's timeout, and leaves no process behind, even when cautilus
//! itself is killed with SIGKILL. Each grader's sleepers carry a unique
//! argument (`sleep 31337.NN`) by which the test finds them in `/proc`.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{cautilus, repo};

/// Generous: only proves that nothing waited for a 31337 s sleeper (a run
/// of the whole suite beside a model server on 2 cores once took 15.03 s
/// here, against 3 s alone).
const DID_NOT_HANG: Duration = Duration::from_secs(60);

/// Pids of the processes whose argv is exactly `sleep <marker>`.
fn sleepers(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let argv: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if argv.len() >= 2 && argv[0].ends_with(b"sleep") && argv[1] == marker.as_bytes() {
            found.push(pid);
        }
    }
    found
}

/// Waits until no sleeper with `marker` is left (or `bound` passes) and
/// returns those left.
fn sleepers_after(marker: &str, bound: Duration) -> Vec<i32> {
    let started = Instant::now();
    loop {
        let left = sleepers(marker);
        if left.is_empty() || started.elapsed() >= bound {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills what a failing test left behind.
struct Cleanup(&'static str);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in sleepers(self.0) {
            // SAFETY: kill(2) touches no memory of ours.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// A suite of one case whose one assertion runs `script` (a file beside
/// the fixture, run by `sh`).
fn suite(dir: &Path, script: &str, timeout_ms: Option<u64>) -> PathBuf {
    std::fs::write(dir.join("grade.sh"), script).unwrap();
    let timeout = timeout_ms
        .map(|ms| format!(", timeout_ms: {ms}"))
        .unwrap_or_default();
    let fixture = dir.join("suite.yaml");
    std::fs::write(
        &fixture,
        format!(
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: trees\nprovider: fixture\nmodel: m\ncases:\n  - caseId: a\n    input: Say hello.\n    expected: {{ finalText: hello }}\n    assertions:\n      - {{ type: code-grader, name: grader, command: [sh, ./grade.sh]{timeout} }}\n"
        ),
    )
    .unwrap();
    fixture
}

/// `cautilus eval test` on `fixture`, output to files (nothing waits on a
/// pipe a leaked process could hold).
fn start(fixture: &Path, dir: &Path) -> Child {
    cautilus()
        .args(["eval", "test", "--provider", "fixture", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(repo())
        .arg("--output-dir")
        .arg(dir.join("out"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap()
}

struct Ran {
    code: Option<i32>,
    elapsed: Duration,
    output: String,
    summary: Value,
}

impl Ran {
    fn grader(&self) -> &Value {
        &self.summary["evaluations"][0]["assertions"][0]
    }
}

/// Compiles the components a suite needs into the shared cache once, so
/// the bounded runs time graders, not compilation.
fn warm_cache() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let dir = tempfile::tempdir().unwrap();
        let fixture = suite(dir.path(), "exit 0\n", None);
        let run = crate::support::eval_run(&fixture, &[]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    });
}

/// Runs cautilus on a suite of `script` and waits for it, killing it
/// (and failing) past [`DID_NOT_HANG`].
fn eval(script: &str, timeout_ms: Option<u64>) -> Ran {
    warm_cache();
    let dir = tempfile::tempdir().unwrap();
    let fixture = suite(dir.path(), script, timeout_ms);
    let started = Instant::now();
    let mut child = start(&fixture, dir.path());
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > DID_NOT_HANG {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
    let output = format!("{}{}", read("stdout"), read("stderr"));
    let summary = std::fs::read_to_string(dir.path().join("out/eval-summary.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    Ran {
        code,
        elapsed,
        output,
        summary,
    }
}

/// The grader's verdict came back at once, passing, and `marker`'s
/// sleepers are gone.
fn assert_passed_quickly_and_clean(ran: &Ran, marker: &str) {
    assert!(
        ran.elapsed < DID_NOT_HANG,
        "took {:?}: {}",
        ran.elapsed,
        ran.output
    );
    assert_eq!(ran.code, Some(0), "{}", ran.output);
    assert_eq!(ran.grader()["passed"], true, "{}", ran.summary);
    let left = sleepers_after(marker, Duration::from_secs(2));
    assert!(left.is_empty(), "left running: {left:?}");
}

/// The grader timed out: the case is errored (not failed), quickly, and
/// `marker`'s sleepers are gone.
fn assert_timed_out_and_clean(ran: &Ran, marker: &str) {
    assert!(
        ran.elapsed < DID_NOT_HANG,
        "took {:?}: {}",
        ran.elapsed,
        ran.output
    );
    let evaluation = &ran.summary["evaluations"][0];
    assert_eq!(evaluation["status"], "errored", "{}", ran.summary);
    let detail = ran.grader()["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("timed out after"), "{detail}");
    let left = sleepers_after(marker, Duration::from_secs(2));
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn a_background_job_holding_stdout_does_not_delay_the_verdict() {
    // The example: `sleep 20 &` kept cautilus waiting 20 s for the
    // inherited stdout. Variants: the same with `setsid`, and a double
    // fork in a subshell.
    for (marker, script) in [
        ("31337.01", "sleep 31337.01 &\necho '{\"passed\": true}'\n"),
        (
            "31337.02",
            "setsid sleep 31337.02 &\necho '{\"passed\": true}'\n",
        ),
        (
            "31337.03",
            "(sleep 31337.03 &)\necho '{\"passed\": true}'\n",
        ),
        (
            "31337.04",
            "(setsid sleep 31337.04 &) ; (exec sh -c 'sleep 31337.04 & exit 0' &)\necho '{\"passed\": true}'\n",
        ),
    ] {
        let _cleanup = Cleanup(marker);
        let ran = eval(script, None);
        assert_passed_quickly_and_clean(&ran, marker);
    }
}

#[test]
fn no_descendant_outlives_a_grader_that_exits() {
    // Fifty background sleepers that hold no pipe of cautilus (cautilus
    // returned at once before, and left them all running), a `setsid` one,
    // a double-forked one, and a nested tree.
    let marker = "31337.11";
    let _cleanup = Cleanup(marker);
    let script = "for i in $(seq 50); do sleep 31337.11 >/dev/null 2>&1 & done\n\
        setsid sleep 31337.11 >/dev/null 2>&1 &\n\
        (sleep 31337.11 >/dev/null 2>&1 &)\n\
        sh -c 'sh -c \"sleep 31337.11 >/dev/null 2>&1 &\" &' \n\
        exit 0\n";
    let ran = eval(script, None);
    assert_passed_quickly_and_clean(&ran, marker);
}

#[test]
fn a_grader_still_forking_when_it_exits_is_ended() {
    // A background loop keeps starting sleepers (double-forked ones too)
    // while the supervisor kills: each round kills every process it sees,
    // and a killed process can fork no more. (Bounded at 500, so a failure
    // does not leave a fork loop running.)
    let marker = "31337.12";
    let _cleanup = Cleanup(marker);
    let script = "i=0; while [ $i -lt 500 ]; do sleep 31337.12 >/dev/null 2>&1 & (sleep 31337.12 >/dev/null 2>&1 &); i=$((i+1)); done >/dev/null 2>&1 &\n\
        sleep 0.2\n\
        exit 0\n";
    let ran = eval(script, None);
    assert_passed_quickly_and_clean(&ran, marker);
}

#[test]
fn a_grader_that_never_ends_is_errored_at_its_timeout() {
    // In the foreground: `sleep` in the grader's group; a `setsid` one
    // holding stdout (the group kill missed it, and cautilus waited for the
    // pipe); and both with background company.
    for (marker, script) in [
        ("31337.21", "sleep 31337.21\n"),
        ("31337.22", "setsid sleep 31337.22\n"),
        (
            "31337.23",
            "sleep 31337.23 &\nsetsid sleep 31337.23 &\n(sleep 31337.23 &)\nsleep 31337.23\n",
        ),
    ] {
        let _cleanup = Cleanup(marker);
        let ran = eval(script, Some(700));
        assert_timed_out_and_clean(&ran, marker);
    }
}

#[test]
fn a_grader_that_stops_or_kills_its_parent_still_leaves_nothing() {
    // The grader's parent is its supervisor. Stopped, it cannot end the
    // tree: cautilus kills it at the timeout and ends what it adopts.
    let marker = "31337.31";
    let _cleanup = Cleanup(marker);
    let script = "setsid sleep 31337.31 >/dev/null 2>&1 &\nkill -STOP $PPID\nsleep 31337.31\n";
    let ran = eval(script, Some(700));
    assert_timed_out_and_clean(&ran, marker);

    // Killed, it ends nothing: cautilus adopts the orphans at once, and
    // the grader judged nothing (it was killed).
    let marker = "31337.32";
    let _cleanup = Cleanup(marker);
    let script = "setsid sleep 31337.32 >/dev/null 2>&1 &\n(sleep 31337.32 &)\nkill -9 $PPID\nsleep 31337.32\n";
    let ran = eval(script, None);
    assert!(
        ran.elapsed < DID_NOT_HANG,
        "took {:?}: {}",
        ran.elapsed,
        ran.output
    );
    assert_eq!(
        ran.summary["evaluations"][0]["status"], "errored",
        "{}",
        ran.summary
    );
    let detail = ran.grader()["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("killed by a signal"), "{detail}");
    let left = sleepers_after(marker, Duration::from_secs(2));
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn a_grader_that_is_its_own_subreaper_is_still_ended() {
    // Orphans of a subreaper grader are re-parented to the grader, not to
    // the supervisor; they are its descendants all the same.
    if std::process::Command::new("python3")
        .arg("-c")
        .arg("import ctypes")
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
    {
        eprintln!("skipped: no python3 with ctypes");
        return;
    }
    let marker = "31337.41";
    let _cleanup = Cleanup(marker);
    let script = "exec python3 -c '\n\
import ctypes, os, subprocess\n\
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)\n\
subprocess.Popen([\"sh\", \"-c\", \"setsid sleep 31337.41 >/dev/null 2>&1 & sleep 31337.41 >/dev/null 2>&1 &\"]).wait()\n\
print(\"{\\\"passed\\\": true}\")\n\
'\n";
    let ran = eval(script, None);
    assert_passed_quickly_and_clean(&ran, marker);
}

#[test]
fn killing_cautilus_mid_grader_leaves_no_descendant() {
    let marker = "31337.51";
    let _cleanup = Cleanup(marker);
    let dir = tempfile::tempdir().unwrap();
    warm_cache();
    let fixture = suite(
        dir.path(),
        "sleep 31337.51 &\nsetsid sleep 31337.51 &\n(sleep 31337.51 &)\nsleep 31337.51\n",
        None,
    );
    let mut child = start(&fixture, dir.path());
    let started = Instant::now();
    while sleepers(marker).len() < 4 {
        assert!(
            started.elapsed() < DID_NOT_HANG,
            "the grader's sleepers never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left = sleepers_after(marker, Duration::from_secs(3));
    assert!(left.is_empty(), "left running: {left:?}");
}
