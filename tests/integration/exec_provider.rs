//! The `exec` provider: the user's own program (the FAQ bot of
//! `fixtures/eval/apps/faq-bot/`, a Python script) answers each case, as
//! text or JSON; what it gets (the case, the settings, the granted secret,
//! an empty directory, nothing else of the environment); a program that
//! fails errors its case naming it (`fixtures/eval/apps/exec-errors/*`);
//! a fixture cannot make it run a program outside its root or from `PATH`
//! unless the user grants it; its processes end at its timeout; its calls
//! are recorded and replayed with the program gone, variants included.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{all_text, cautilus, output, read_json, repo};

/// A finished run: (exit code, stdout, stderr, output directory's summary).
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    out: PathBuf,
}

impl Run {
    fn summary(&self) -> Value {
        read_json(&self.out.join("eval-summary.json"))
    }

    /// The summary's evaluation of `case_id`.
    fn case(&self, case_id: &str) -> Value {
        let summary = self.summary();
        summary["evaluations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["caseId"] == case_id)
            .cloned()
            .unwrap_or_else(|| panic!("no case {case_id}: {summary}"))
    }

    fn observed(&self, case_id: &str) -> Value {
        let observed = read_json(&self.out.join("eval-observed.json"));
        observed["evaluations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["caseId"] == case_id)
            .cloned()
            .unwrap_or_else(|| panic!("no case {case_id}: {observed}"))
    }
}

/// `cautilus eval test --fixture <fixture>` in `workspace`, its records in
/// a new directory under it, with `args` and `env` (nothing else of the
/// test's environment but `PATH`).
fn exec_run(workspace: &Path, fixture: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(workspace)
        .unwrap()
        .keep();
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(workspace)
        .arg("--output-dir")
        .arg(&out)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("CAUTILUS_CACHE_DIR", crate::support::shared_cache_dir());
    for (k, v) in env {
        command.env(k, v);
    }
    let (code, stdout, stderr) = output(command.output().unwrap());
    Run {
        code,
        stdout,
        stderr,
        out,
    }
}

/// A copy of the FAQ bot's directory (its app and fixtures) in a new
/// directory, so records and cassettes land there.
fn faq_bot_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = repo().join("fixtures/eval/apps/faq-bot");
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    // An empty project: its root is here, its records under .cautilus/.
    std::fs::write(dir.path().join("cautilus.toml"), "").unwrap();
    dir
}

#[test]
fn the_faq_bot_answers_through_exec_as_text() {
    let dir = faq_bot_copy();
    let run = exec_run(
        dir.path(),
        &dir.path().join("faq.fixture.yaml"),
        &["--concurrency", "3"],
        &[],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for case in ["refund", "hours", "unknown"] {
        assert_eq!(run.case(case)["status"], "passed", "{}", run.case(case));
        assert_eq!(run.observed(case)["harness"], "exec");
    }
    assert_eq!(
        run.observed("refund")["observed"]["finalText"],
        "Refunds are issued within 14 days of a return. Keep your receipt."
    );
    // The judge read the program's answer.
    let judged = run.case("refund").to_string();
    assert!(judged.contains("fixture judge"), "{judged}");
}

#[test]
fn a_base_fixtures_program_is_found_beside_the_base_not_the_child() {
    // The FAQ bot's fixture as a shared base, extended from another
    // directory: `./app.py` is the base's file.
    let dir = faq_bot_copy();
    let child_dir = dir.path().join("evals/smoke");
    std::fs::create_dir_all(&child_dir).unwrap();
    let child = child_dir.join("smoke.fixture.yaml");
    std::fs::write(
        &child,
        "extends: ../../faq.fixture.yaml\nsuiteId: faq-smoke\ncases:\n  - caseId: refund\n    messages:\n      - { role: user, content: How do refunds work? }\n    assertions:\n      - { type: contains, value: \"14 days\" }\n",
    )
    .unwrap();
    let run = exec_run(dir.path(), &child, &[], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.case("refund")["status"],
        "passed",
        "{}",
        run.case("refund")
    );
}

#[test]
fn the_faq_bot_answers_json_with_usage_cost_tool_calls_and_the_settings_it_got() {
    let dir = faq_bot_copy();
    let run = exec_run(
        dir.path(),
        &dir.path().join("faq-json.fixture.yaml"),
        &[],
        &[
            ("FAQ_BOT_TOKEN", "not-granted-1234"),
            ("HOME", "/home/exec-test"),
            ("EXEC_TEST_HOST_VARIABLE", "1"),
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let observed = run.observed("shipping");
    assert_eq!(
        observed["observed"]["finalText"],
        "Standard shipping takes 3 to 5 business days. Express takes 1 day."
    );
    assert_eq!(observed["model"], "faq-bot-1");
    assert_eq!(observed["costUsd"], 0.0001);
    let text = observed.to_string();
    assert!(text.contains("\"outputTokens\":12"), "{text}");
    // Its tool calls and cost were captured: the bounds and the tool
    // assertion were checked against them (an uncaptured one fails).
    let case = run.case("shipping");
    assert_eq!(case["status"], "passed", "{case}");
    assert_eq!(case["assertions"].as_array().unwrap().len(), 3, "{case}");
    let structured: Value = match &observed["observed"]["structured"] {
        Value::String(s) => serde_json::from_str(s).unwrap(),
        other => other.clone(),
    };
    // Every setting reached it; nothing of cautilus's environment but PATH
    // (the host's FAQ_BOT_TOKEN was not granted; what the interpreter and
    // its launcher set themselves, such as PWD, may be there); an empty
    // directory.
    assert_eq!(
        structured["settings"],
        serde_json::json!({"temperature": 0.2, "maxTokens": 64}),
        "{text}"
    );
    let env: Vec<&str> = structured["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(env.contains(&"PATH"), "{text}");
    for host in [
        "FAQ_BOT_TOKEN",
        "HOME",
        "EXEC_TEST_HOST_VARIABLE",
        "CAUTILUS_CACHE_DIR",
    ] {
        assert!(!env.contains(&host), "{host} reached the program: {text}");
    }
    assert_eq!(structured["cwd"], serde_json::json!([]), "{text}");
    let state = read_json(&run.out.join("run.json"));
    assert!(state.get("settingsNotApplied").is_none(), "{state}");
}

/// The expected-error lines of a negative fixture.
fn expected_error(name: &str) -> (PathBuf, Vec<String>) {
    let dir = repo().join("fixtures/eval/apps/exec-errors").join(name);
    let text = std::fs::read_to_string(dir.join("expected-error.txt")).unwrap();
    (
        dir.join("fixture.yaml"),
        text.lines().map(str::to_string).collect(),
    )
}

#[test]
fn a_program_that_fails_errors_its_case_naming_it() {
    for name in ["crash", "bad-json", "no-final-text", "timeout"] {
        let (fixture, expected) = expected_error(name);
        let workspace = tempfile::tempdir().unwrap();
        let run = exec_run(workspace.path(), &fixture, &[], &[]);
        assert_ne!(run.code, 0, "{name}: {}", run.stdout);
        let case = run.case("a");
        assert_eq!(case["status"], "errored", "{name}: {case}");
        let said = case.to_string();
        for line in &expected {
            let line = serde_json::to_string(line).unwrap();
            let line = &line[1..line.len() - 1];
            assert!(said.contains(line), "{name}: {line}\nnot in {said}");
        }
        // The terminal gets it escaped.
        assert!(!run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'));
    }
}

#[test]
fn a_fixture_runs_no_program_outside_its_root_or_from_path_unless_granted() {
    for (name, path_root) in [
        ("escape-dotdot", true),
        ("escape-symlink", true),
        ("absolute-path", false),
        ("bare-name", false),
    ] {
        let (fixture, expected) = expected_error(name);
        let workspace = tempfile::tempdir().unwrap();
        let root = fixture.parent().unwrap().display().to_string();
        let args: Vec<&str> = if path_root {
            vec!["--path-root", &root]
        } else {
            Vec::new()
        };
        let run = exec_run(workspace.path(), &fixture, &args, &[]);
        assert_eq!(run.code, 2, "{name}: {}\n{}", run.stdout, run.stderr);
        for line in &expected {
            assert!(
                run.stderr.contains(line.as_str()),
                "{name}: {line}\nnot in {}",
                run.stderr
            );
        }
        assert!(
            !run.out.join("eval-summary.json").exists(),
            "{name}: nothing ran"
        );
    }
    // Granted, a program from PATH runs (its script a file beside the fixture).
    let dir = faq_bot_copy();
    let fixture = dir.path().join("faq-python.fixture.yaml");
    let text = std::fs::read_to_string(dir.path().join("faq.fixture.yaml"))
        .unwrap()
        .replace("command: [./app.py]", "command: [python3, ./app.py]");
    std::fs::write(&fixture, text).unwrap();
    let refused = exec_run(dir.path(), &fixture, &[], &[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--grant-program python3"),
        "{}",
        refused.stderr
    );
    let granted = exec_run(dir.path(), &fixture, &["--grant-program", "python3"], &[]);
    assert_eq!(granted.code, 0, "{}\n{}", granted.stdout, granted.stderr);
}

/// A fixture of one case asking the bot for its token.
fn token_fixture(dir: &Path) -> PathBuf {
    let fixture = dir.join("token.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: faq-token\nprovider: exec\nmodel: faq-bot\nexec: { command: [./app.py], timeoutMs: 20000 }\ncases:\n  - caseId: token\n    messages:\n      - { role: user, content: token? }\n    assertions:\n      - { type: contains, value: \"token: \" }\n",
    )
    .unwrap();
    fixture
}

#[test]
fn a_granted_secret_reaches_the_program_and_no_record_or_cassette() {
    const SECRET: &str = "faq-secret-value-8086";
    let dir = faq_bot_copy();
    let fixture = token_fixture(dir.path());
    // Not granted: the host's variable does not reach the program.
    let plain = exec_run(dir.path(), &fixture, &[], &[("FAQ_BOT_TOKEN", SECRET)]);
    assert_eq!(plain.code, 0, "{}\n{}", plain.stdout, plain.stderr);
    assert_eq!(
        plain.observed("token")["observed"]["finalText"],
        "token: absent"
    );
    // Granted under the program's name, from another variable.
    let granted = exec_run(
        dir.path(),
        &fixture,
        &[
            "--grant-secret",
            "FAQ_BOT_TOKEN=ACME_FAQ_TOKEN",
            "--replay",
            "record-new",
        ],
        &[("ACME_FAQ_TOKEN", SECRET)],
    );
    assert_eq!(granted.code, 0, "{}\n{}", granted.stdout, granted.stderr);
    assert_eq!(
        granted.observed("token")["observed"]["finalText"],
        "token: [redacted]",
        "the program got the value, the record holds none of it"
    );
    let cassette = dir.path().join(".cautilus/cassettes/faq-token.json");
    assert!(cassette.exists());
    let everything = all_text(dir.path());
    assert!(
        !everything.contains(SECRET),
        "a record or cassette holds the secret"
    );
    assert!(!granted.stdout.contains(SECRET) && !granted.stderr.contains(SECRET));
}

#[cfg(target_os = "linux")]
#[test]
fn the_programs_processes_end_at_its_timeout() {
    let (fixture, _) = expected_error("timeout");
    let workspace = tempfile::tempdir().unwrap();
    let run = exec_run(workspace.path(), &fixture, &[], &[]);
    assert_eq!(run.case("a")["status"], "errored");
    let started = std::time::Instant::now();
    loop {
        let left = sleepers(&["31338.5", "31338.6"]);
        if left.is_empty() {
            break;
        }
        if started.elapsed() > std::time::Duration::from_secs(5) {
            for pid in &left {
                // SAFETY: kill(2) touches no memory of ours.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            panic!("the program's processes outlived it: {left:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Pids of the processes whose argv is `sleep <one of markers>`.
#[cfg(target_os = "linux")]
fn sleepers(markers: &[&str]) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let argv: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if argv.len() >= 2
            && argv[0].ends_with(b"sleep")
            && markers.iter().any(|m| argv[1] == m.as_bytes())
        {
            found.push(pid);
        }
    }
    found
}

#[test]
fn variants_recorded_replay_with_the_program_deleted() {
    let dir = faq_bot_copy();
    let fixture = dir.path().join("faq-variants.fixture.yaml");
    let recorded = exec_run(dir.path(), &fixture, &["--replay", "record-new"], &[]);
    // Each variant's case statuses.
    let verdicts = |run: &Run| -> Vec<(String, String)> {
        let mut found = Vec::new();
        for variant in ["full", "brief"] {
            let summary = read_json(
                &run.out
                    .join(format!("variants/{variant}/trial-1/eval-summary.json")),
            );
            for e in summary["evaluations"].as_array().unwrap() {
                found.push((
                    format!("{variant}/{}", e["caseId"].as_str().unwrap()),
                    e["status"].as_str().unwrap().to_string(),
                ));
            }
        }
        found
    };
    assert_ne!(recorded.code, 2, "{}\n{}", recorded.stdout, recorded.stderr);
    let cassette = dir.path().join(".cautilus/cassettes/faq-bot-variants.json");
    let recorded_calls = std::fs::read_to_string(&cassette).unwrap();
    assert!(
        recorded_calls.contains("--style"),
        "each variant's command is in its key"
    );
    // Replayed on another machine (another directory), the program gone:
    // the key holds the command as written, not where it was.
    let elsewhere = faq_bot_copy();
    std::fs::remove_file(elsewhere.path().join("app.py")).unwrap();
    let moved = elsewhere.path().join(".cautilus/cassettes");
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::copy(&cassette, moved.join("faq-bot-variants.json")).unwrap();
    let (dir, fixture) = (
        &elsewhere,
        elsewhere.path().join("faq-variants.fixture.yaml"),
    );
    let replayed = exec_run(dir.path(), &fixture, &["--replay", "replay-strict"], &[]);
    assert_eq!(
        replayed.code, recorded.code,
        "{}\n{}",
        replayed.stdout, replayed.stderr
    );
    assert_eq!(verdicts(&replayed), verdicts(&recorded));
    // The brief deployment drops the second sentence (the receipt).
    let expected = [
        ("full/refund", "passed"),
        ("full/hours", "passed"),
        ("brief/refund", "failed"),
        ("brief/hours", "passed"),
    ];
    assert_eq!(
        verdicts(&recorded),
        expected.map(|(c, s)| (c.to_string(), s.to_string()))
    );
    // Live, the deleted program is named.
    let live = exec_run(dir.path(), &fixture, &[], &[]);
    assert_eq!(live.code, 2, "{}", live.stderr);
    assert!(
        live.stderr.contains("program `./app.py` not found"),
        "{}",
        live.stderr
    );
}

#[test]
fn a_secret_the_program_echoes_is_redacted_wherever_its_error_is_cut() {
    // The error quotes at most 400 characters of stderr: whatever the
    // padding before the echoed value, no piece of it is left where the
    // quote was cut (the host scrubs the program's output before the
    // provider sees, and cuts, it).
    const SECRET: &str = "Qz9-leak-straddle-7731-value";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cautilus.toml"), "").unwrap();
    let program = dir.path().join("leaky.py");
    std::fs::write(
        &program,
        "#!/usr/bin/env python3\nimport json, os, sys\ncase = json.load(sys.stdin)\npad = int(case['messages'][-1]['content'])\nsys.stderr.write('x' * pad + os.environ['APPVALUE'] + ' and the rest')\nsys.exit(1)\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let pads: Vec<usize> = (368..=402).collect();
    let cases: Vec<String> = pads
        .iter()
        .map(|pad| format!("  - {{caseId: pad-{pad}, messages: [{{role: user, content: \"{pad}\"}}], assertions: [{{type: contains, value: x}}]}}\n"))
        .collect();
    let fixture = dir.path().join("leaky.fixture.yaml");
    std::fs::write(
        &fixture,
        format!(
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: leaky\nprovider: exec\nmodel: m\nexec: {{ command: [./leaky.py], timeoutMs: 20000 }}\ncases:\n{}",
            cases.concat()
        ),
    )
    .unwrap();
    let html = dir.path().join("report.html").display().to_string();
    let junit = dir.path().join("report.xml").display().to_string();
    let run = exec_run(
        dir.path(),
        &fixture,
        &[
            "--grant-secret",
            "APPVALUE=HOST_APPVALUE",
            "--html",
            &html,
            "--junit",
            &junit,
            "--replay",
            "record-new",
        ],
        &[("HOST_APPVALUE", SECRET)],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    for pad in &pads {
        let case = run.case(&format!("pad-{pad}"));
        assert_eq!(case["status"], "errored", "{case}");
    }
    // The quote was cut inside the value for some paddings, after it for others.
    let summary = run.summary().to_string();
    assert!(summary.contains("[redacted]"), "{summary}");
    let everything = format!("{}{}{}", all_text(dir.path()), run.stdout, run.stderr);
    let lower = everything.to_ascii_lowercase();
    for k in 4..=SECRET.len() {
        let piece = SECRET[..k].to_ascii_lowercase();
        assert!(
            !lower.contains(&piece),
            "the first {k} characters of the secret were left: {}",
            &everything[everything
                .to_ascii_lowercase()
                .find(&piece)
                .unwrap()
                .saturating_sub(60)..][..80]
        );
    }
}

/// The program runs as the operator's user, yet cannot read cautilus's
/// environment (a key it was not granted) through `/proc`: cautilus, and
/// the supervisors it forks, are not dumpable. Root may read any process's
/// `/proc`, so as root (CI) the run is made as `nobody` through `setpriv`,
/// from a copy of the binary that user can reach.
#[cfg(target_os = "linux")]
#[test]
fn the_program_cannot_read_the_hosts_environment_through_proc() {
    use std::os::unix::fs::{PermissionsExt, chown};
    const CANARY: &str = "canary-not-granted-5e1f0b";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("cautilus.toml"), "").unwrap();
    std::fs::write(
        root.join("peek.py"),
        "#!/usr/bin/env python3\nimport os\nseen, read, pid = False, 0, os.getppid()\nwhile pid > 1:\n    try:\n        with open(f'/proc/{pid}/environ', 'rb') as f:\n            read += 1\n            seen = seen or b'CANARY_KEY=' in f.read()\n    except OSError:\n        pass\n    with open(f'/proc/{pid}/stat') as f:\n        pid = int(f.read().rsplit(')', 1)[1].split()[1])\nprint('canary: seen' if seen else f'canary: hidden ({read} ancestors readable)')\n",
    )
    .unwrap();
    std::fs::write(
        root.join("peek.fixture.yaml"),
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: peek\nprovider: exec\nmodel: m\nexec: { command: [./peek.py], timeoutMs: 20000 }\ncases:\n  - caseId: peek\n    messages: [{role: user, content: peek}]\n    assertions: [{type: contains, value: \"canary: hidden\"}]\n",
    )
    .unwrap();
    let binary = root.join("cautilus");
    let built = std::env::var_os("CAUTILUS_TEST_BINARY")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cautilus").into());
    std::fs::copy(&built, &binary).unwrap();
    for (path, mode) in [
        (root, 0o755),
        (&root.join("peek.py"), 0o755),
        (&binary, 0o755),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    // SAFETY: geteuid(2) touches no memory.
    let as_root = unsafe { libc::geteuid() } == 0;
    let mut command = if as_root {
        for entry in walk(root) {
            chown(&entry, Some(65534), Some(65534)).unwrap();
        }
        let mut command = std::process::Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        command.arg(&binary);
        command
    } else {
        std::process::Command::new(&binary)
    };
    command
        .args([
            "eval",
            "test",
            "--fixture",
            "peek.fixture.yaml",
            "--output-dir",
            "run",
        ])
        .current_dir(root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", root)
        .env("CAUTILUS_HOME", root.join("home"))
        .env("CAUTILUS_CACHE_DIR", root.join("cache"))
        .env("CANARY_KEY", CANARY);
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let observed = read_json(&root.join("run/eval-observed.json"));
    let answer = observed["evaluations"][0]["observed"]["finalText"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(answer.starts_with("canary: hidden"), "{answer}");
}

/// Every file and directory under `root`, `root` included.
#[cfg(target_os = "linux")]
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut all = vec![root.to_path_buf()];
    let mut at = 0;
    while at < all.len() {
        if all[at].is_dir() {
            let children: Vec<PathBuf> = std::fs::read_dir(&all[at])
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            all.extend(children);
        }
        at += 1;
    }
    all
}

#[test]
fn a_variant_whose_program_is_refused_stops_the_run_before_any_variant_runs() {
    let dir = faq_bot_copy();
    let fixture = dir.path().join("two.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: faq-two\nprovider: exec\nmodel: faq-bot\nexec: { command: [./app.py], timeoutMs: 20000 }\nvariants:\n  first: {}\n  second: { exec: { command: [/bin/echo, hi] } }\ncases:\n  - caseId: refund\n    messages: [{ role: user, content: How do refunds work? }]\n    assertions: [{ type: contains, value: \"14 days\" }]\n",
    )
    .unwrap();
    let run = exec_run(dir.path(), &fixture, &[], &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("exec.command[0]") && run.stderr.contains("--grant-program /bin/echo"),
        "{}",
        run.stderr
    );
    // Nothing ran: no case line, no records.
    assert!(!run.stdout.contains("PASS"), "{}", run.stdout);
    assert!(!run.out.join("eval-summary.json").exists());
}
