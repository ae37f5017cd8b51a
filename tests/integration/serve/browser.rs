//! The app in headless Chromium (playwright-core, as the report's test;
//! "skipping: …" without it): a suite's history, a comparison, a failing
//! cell's source line; the live view of a slow run as it goes.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{MARKUP, Server, checked, history, ids};
use crate::reports::{artifact, chromium, node_modules};
use crate::support::{cautilus, output, repo};

/// Runs the browser check `mode` with `args`; `None` (and "skipping: …")
/// when headless Chromium or playwright-core is missing.
fn browse(mode: &str, args: Value) -> Option<Value> {
    let (Some(chromium), Some(modules)) = (chromium(), node_modules()) else {
        eprintln!(
            "skipping: headless Chromium is not available (apt-get install chromium; npm install playwright-core, found through CAUTILUS_NODE_MODULES; .ci/run installs both)"
        );
        return None;
    };
    let out = Command::new("node")
        .arg(repo().join("tests/browser/serve-check.cjs"))
        .arg(mode)
        .arg(args.to_string())
        .env("NODE_PATH", modules)
        .env("CHROMIUM", chromium)
        .output()
        .expect("run node");
    let (code, stdout, stderr) = output(out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    Some(serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}")))
}

/// What a page may never do: fail, fetch elsewhere, run a record's script.
fn clean(seen: &Value) {
    assert_eq!(seen["consoleErrors"], json!([]), "{seen}");
    assert_eq!(seen["pageErrors"], json!([]), "{seen}");
    assert_eq!(
        seen["foreignRequests"],
        json!([]),
        "nothing may be fetched elsewhere: {seen}"
    );
    assert_eq!(seen["dialogs"], json!([]), "a record's script ran: {seen}");
    assert_eq!(seen["pwned"], false, "a record's script ran: {seen}");
}

#[test]
fn serve_in_headless_chromium_shows_history_comparison_and_a_cells_source_line() {
    if chromium().is_none() || node_modules().is_none() {
        eprintln!(
            "skipping: headless Chromium is not available (apt-get install chromium; npm install playwright-core, found through CAUTILUS_NODE_MODULES; .ci/run installs both)"
        );
        return;
    }
    let dir = history();
    let server = Server::start(dir.path());
    let page = server.json("/api/runs?suite=support&limit=2");
    let (newest, previous) = (ids(&page)[0].clone(), ids(&page)[1].clone());
    let shots = artifact("serve-history.png")
        .parent()
        .unwrap()
        .to_path_buf();
    let seen = browse(
        "history",
        json!({"url": server.url, "suite": "support", "a": previous, "b": newest, "run": newest, "shots": shots}),
    )
    .unwrap();
    eprintln!("screenshots: {}", shots.display());
    clean(&seen);
    assert_eq!(seen["suites"], json!(["models", "support"]));
    assert_eq!(seen["historyHash"], "#/suite/support");

    // The four trend charts, each with its series and the baseline dashed.
    let charts = seen["charts"].as_array().unwrap();
    let names: Vec<&str> = charts.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "chart-passRate",
            "chart-meanScore",
            "chart-costUsd",
            "chart-p95LatencyMs"
        ]
    );
    for chart in charts {
        let series = chart["series"][0].as_str().unwrap();
        assert_eq!(series.matches(['M', 'L']).count(), 12, "{chart}");
        assert_eq!(chart["dots"], 12, "{chart}");
        assert_eq!(chart["baseline"].as_array().unwrap().len(), 1, "{chart}");
    }
    assert!(
        seen["baselineLegend"]
            .as_str()
            .unwrap()
            .contains("variant default")
    );
    assert_eq!(seen["runRows"].as_array().unwrap().len(), 12);

    // The comparison: the changed verdict first, its outputs in two
    // columns with their line diff; the markup shown as text.
    assert_eq!(
        seen["compareHash"],
        format!("#/compare/{previous}/{newest}")
    );
    assert!(
        seen["tally"]
            .as_str()
            .unwrap()
            .starts_with("1 regressed, 0 fixed"),
        "{seen}"
    );
    assert_eq!(seen["sections"][0], "Changed verdicts");
    let changed = &seen["changed"][0];
    assert_eq!(changed["caseId"], "refund");
    assert_eq!(changed["change"], "regressed");
    assert_eq!(changed["columns"], 2);
    assert_eq!(changed["a"], "You can get a refund in 30 days.");
    assert!(changed["b"].as_str().unwrap().starts_with(MARKUP));
    let diff = changed["diff"].as_str().unwrap();
    assert!(
        diff.contains("- You can get a refund in 30 days."),
        "{diff}"
    );
    assert!(diff.contains(&format!("+ {MARKUP}")), "{diff}");
    assert_eq!(seen["compareInjected"], 0, "markup became elements");

    // The failing case opened from its run's page: its source line marked.
    assert_eq!(seen["failedRows"], json!(["refund:failed"]));
    assert!(
        seen["cellHash"]
            .as_str()
            .unwrap()
            .starts_with(&format!("#/cell/{newest}/refund"))
    );
    assert_eq!(seen["cellStatus"], "failed");
    assert!(seen["output"].as_str().unwrap().starts_with(MARKUP));
    assert_eq!(seen["cellInjected"], 0, "markup became elements");
    let ledger = seen["ledger"].as_array().unwrap();
    assert!(
        ledger[0]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c.as_str().unwrap().contains("is below the 0.70 floor")),
        "{ledger:?}"
    );
    assert!(
        seen["repro"]
            .as_str()
            .unwrap()
            .starts_with("cautilus eval test --fixture evals/support.fixture.yaml --case refund")
    );
    assert!(
        seen["baseline"]
            .as_str()
            .unwrap()
            .contains("the verdict changed")
    );
    let failing = &seen["sources"][0];
    assert_eq!(failing["status"], "failed");
    assert!(
        failing["head"]
            .as_str()
            .unwrap()
            .contains("evals/support.fixture.yaml:13"),
        "{failing}"
    );
    let marked = &failing["marked"][0];
    assert_eq!(marked["line"], "13");
    assert!(
        marked["text"].as_str().unwrap().contains(
            "type: levenshtein, value: \"You can get a refund in 30 days.\", threshold: 0.7"
        ),
        "{marked}"
    );
    assert!(marked["cls"].as_str().unwrap().contains("marked"));
    assert_eq!(failing["lines"], 7);
    assert!(
        std::fs::metadata(shots.join("serve-cell.png"))
            .unwrap()
            .len()
            > 10_000
    );
}

const SLOW: &str = r#"schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: slow
provider: exec
model: slow-bot
exec:
  command: [./slow.sh]
cases:
  - { caseId: one, input: "1", assertions: [{ type: contains, value: "answer" }] }
  - { caseId: two, input: "2", assertions: [{ type: contains, value: "answer" }] }
  - { caseId: three, input: "3", assertions: [{ type: contains, value: "nope" }] }
  - { caseId: four, input: "4", assertions: [{ type: contains, value: "answer" }] }
"#;

#[test]
fn serve_live_view_shows_cases_finishing_while_a_slow_run_goes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("cautilus.toml"), "dir = \"records\"\n").unwrap();
    std::fs::create_dir_all(root.join("evals")).unwrap();
    std::fs::write(root.join("evals/slow.fixture.yaml"), SLOW).unwrap();
    let program = root.join("evals/slow.sh");
    // The last case waits (at most a minute) until the test has seen the
    // run going: the view is checked while the run is surely in progress.
    let release = root.join("release");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n*'\"four\"'*) i=0; while [ ! -e '{}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done;;\n*) sleep 1;;\nesac\necho answer\n",
            release.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let server = Server::start(root);
    let mut run = cautilus()
        .current_dir(root)
        .args([
            "eval",
            "test",
            "--fixture",
            "evals/slow.fixture.yaml",
            "--concurrency",
            "1",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    struct Kill<'a>(&'a mut Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let guard = Kill(&mut run);

    // The API: the run in progress with a finished case, before its end.
    let deadline = Instant::now() + Duration::from_secs(120);
    let id = loop {
        assert!(Instant::now() < deadline, "no case finished in time");
        if let Some(status) = guard.0.try_wait().unwrap() {
            let mut stderr = String::new();
            guard
                .0
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            panic!("the run ended ({status}) before a finished case was seen: {stderr}");
        }
        let live = server.json("/api/live");
        if let Some(r) = live["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["finishedCases"].as_u64() >= Some(1))
        {
            checked("cautilus.serve.live.v1", live.clone());
            assert_eq!(r["finished"], false, "{r}");
            assert_eq!(r["status"], "running");
            assert_eq!(r["totalCases"], 4);
            assert_eq!(r["fixture"], "evals/slow.fixture.yaml");
            assert!(r["finishedCases"].as_u64().unwrap() < 4, "{r}");
            break r["id"].as_str().unwrap().to_string();
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // A run in progress is no finished run yet.
    assert_eq!(server.get(&format!("/api/run?run={id}")).status, 404);

    // The live view, as the run goes (polling every 2 s) and at its end.
    if let Some(seen) = browse(
        "live",
        json!({"url": server.url, "run": id, "shots": artifact("serve-live.png").parent().unwrap(), "release": release}),
    ) {
        clean(&seen);
        let first = &seen["first"];
        assert_eq!(first["status"], "running", "{seen}");
        assert!(!first["cases"].as_array().unwrap().is_empty(), "{seen}");
        assert!(
            !first["progress"].as_str().unwrap().contains("4 of 4"),
            "{seen}"
        );
        assert_eq!(seen["end"]["status"], "completed", "{seen}");
        assert!(
            seen["end"]["progress"].as_str().unwrap().contains("4 of 4"),
            "{seen}"
        );
    }
    // (Without a browser, the run is let go here.)
    std::fs::write(&release, "").unwrap();
    let status = guard.0.wait().unwrap();
    assert_eq!(status.code(), Some(1), "case `three` fails");
    drop(guard);
    let done = server.json(&format!("/api/live?run={id}"));
    assert_eq!(done["runs"][0]["finished"], true);
    assert_eq!(done["runs"][0]["counts"], json!({"passed": 3, "failed": 1}));
    assert_eq!(
        server.json(&format!("/api/run?run={id}"))["run"]["counts"]["total"],
        4
    );
}
