//! `cautilus serve` over a project's real records (a dozen runs of one
//! suite through the fixture backend, a promoted baseline, an answer full
//! of markup): every API route answers its read model (schema-checked);
//! a foreign Host, a POST, run ids and case ids that try to leave the
//! records and a fixture outside the project are refused without reading
//! outside; the app in headless Chromium shows a suite's history, a
//! comparison and a failing cell's source line; the live view shows cases
//! finishing while a slow `exec` run goes. The server is the installed
//! binary (`cautilus serve --port 0`), killed when each test ends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::reports::{artifact, chromium, node_modules};
use crate::support::{cautilus, output, repo};

/// An answer full of markup: it must come back as data and show as text.
const MARKUP: &str =
    "<script>window.__pwned = true;</script><img src=x onerror=\"window.__pwned = true\">";

/// A running `cautilus serve`, killed (and reaped) when dropped.
struct Server {
    child: Child,
    url: String,
    port: u16,
}

impl Server {
    fn start(root: &Path) -> Self {
        let mut child = cautilus()
            .current_dir(root)
            .args(["serve", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        let port = url
            .trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        Self { child, url, port }
    }

    /// `method path` with `Host: host` (this server's by default).
    fn request(&self, method: &str, path: &str, host: Option<&str>) -> Answer {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let host = host.map_or(format!("127.0.0.1:{}", self.port), str::to_string);
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
        .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        Answer {
            status,
            head: head.to_ascii_lowercase(),
            body: body.to_string(),
        }
    }

    fn get(&self, path: &str) -> Answer {
        self.request("GET", path, None)
    }

    /// The JSON of a `200` answer to `GET path`.
    fn json(&self, path: &str) -> Value {
        let answer = self.get(path);
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        assert!(
            answer.head.contains("content-type: application/json"),
            "{path}"
        );
        serde_json::from_str(&answer.body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// The schema-checked JSON of a read model or wrapper.
fn checked(id: &str, value: Value) -> Value {
    assert_eq!(value["schemaVersion"], id);
    crate::schemas::validates(id, &value).unwrap_or_else(|e| panic!("{id}: {e}"));
    value
}

fn cli(root: &Path, args: &[&str]) -> (i32, String, String) {
    output(cautilus().current_dir(root).args(args).output().unwrap())
}

/// One run of `support`: `good` passes both cases; otherwise `refund`
/// fails with an answer full of markup.
fn run_support(root: &Path, good: bool, step: u32) {
    let refund = if good {
        "You can get a refund in 30 days.".to_string()
    } else {
        format!("{MARKUP} Refunds take a while.")
    };
    let answers = root.join(format!("canned-{step}.json"));
    let canned = json!({
        "refund": {"finalText": refund, "costUsd": 0.01 + f64::from(step) * 0.001, "durationMs": 100 + step * 10},
        "hours": {"finalText": "We are open 9 to 5; the refund desk too.", "costUsd": 0.02, "durationMs": 300},
    });
    std::fs::write(&answers, canned.to_string()).unwrap();
    let (code, _, stderr) = cli(
        root,
        &[
            "eval",
            "test",
            "--fixture",
            "evals/support.fixture.yaml",
            "--fixture-results",
            answers.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert!(code == 0 || code == 1, "{stderr}");
}

/// A project with a dozen runs of `support` (six, the oldest promoted,
/// six more), passing and failing in turn.
fn history() -> tempfile::TempDir {
    let dir = crate::evidence::project();
    let root = dir.path();
    for step in 0..6 {
        run_support(root, step % 2 == 0, step);
    }
    let mut runs: Vec<String> = std::fs::read_dir(root.join("records/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    let oldest = format!("records/runs/{}", runs[0]);
    let (code, _, stderr) = cli(root, &["eval", "promote", &oldest]);
    assert_eq!(code, 0, "{stderr}");
    for step in 6..12 {
        run_support(root, step % 2 == 0, step);
    }
    dir
}

fn ids(page: &Value) -> Vec<String> {
    page["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn serve_answers_every_route_from_the_records_and_refuses_what_it_must() {
    let dir = history();
    let root = dir.path();
    let server = Server::start(root);
    let pid = server.child.id();

    // The page and its own files, with the security headers.
    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert!(page.body.starts_with("<!doctype html>"));
    assert!(
        page.head.contains(
            "content-security-policy: default-src 'none'; script-src 'self'; style-src 'self';"
        ),
        "{}",
        page.head
    );
    assert!(!page.head.contains("unsafe-inline"));
    assert!(page.head.contains("x-content-type-options: nosniff"));
    assert!(page.head.contains("referrer-policy: no-referrer"));
    assert_eq!(server.get("/assets/history.js").status, 200);
    for path in [
        "/assets/../Cargo.toml",
        "/assets/%2e%2e%2fCargo.toml",
        "/etc/passwd",
        "/assets/",
    ] {
        let answer = server.get(path);
        assert_eq!(answer.status, 404, "{path}");
        assert!(!answer.body.contains("[package]"), "{path}");
    }

    // The suites: the manifest.
    let suites = server.json("/api/suites");
    assert_eq!(suites["schemaVersion"], "cautilus.manifest.v1");
    let names: Vec<&str> = suites["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["models", "support"]);

    // A suite's runs, a page at a time, newest first.
    let first = checked(
        "cautilus.serve.run_page.v1",
        server.json("/api/runs?suite=support&limit=5"),
    );
    assert_eq!(first["runs"].as_array().unwrap().len(), 5);
    assert!(
        first["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["suiteId"] == "support")
    );
    assert!(
        server
            .get("/api/runs?suite=support")
            .head
            .contains("cache-control: no-store")
    );
    let mut all = ids(&first);
    let mut next = first["next"].as_str().map(str::to_string);
    while let Some(before) = next {
        let page = checked(
            "cautilus.serve.run_page.v1",
            server.json(&format!("/api/runs?suite=support&limit=5&before={before}")),
        );
        all.extend(ids(&page));
        next = page["next"].as_str().map(str::to_string);
    }
    assert_eq!(all.len(), 12, "{all:?}");
    let mut sorted = all.clone();
    sorted.sort();
    sorted.reverse();
    assert_eq!(all, sorted, "newest first");
    let (newest, previous) = (all[0].clone(), all[1].clone());

    // The suite's progress, with the promoted baseline.
    let progress = checked(
        "cautilus.suite_progress.v1",
        server.json("/api/progress?suite=support"),
    );
    assert_eq!(progress["runs"].as_array().unwrap().len(), 12);
    assert_eq!(progress["baseline"]["stats"]["passRate"], 1.0);
    assert_eq!(progress["truncated"], false);
    let window = server.json("/api/progress?suite=support&limit=3");
    assert_eq!(window["runs"].as_array().unwrap().len(), 3);
    assert_eq!(window["truncated"], true);

    // One run, its cases, one cell, its source lines.
    let detail = checked(
        "cautilus.run_detail.v1",
        server.json(&format!("/api/run?run={newest}")),
    );
    assert_eq!(detail["notPassed"][0]["caseId"], "refund");
    let cases = checked(
        "cautilus.serve.run_cases.v1",
        server.json(&format!("/api/cases?run={newest}&status=failed")),
    );
    assert_eq!(cases["total"], 1);
    assert_eq!(cases["cases"][0]["caseId"], "refund");
    assert_eq!(cases["counts"]["total"], 2);
    let cell = checked(
        "cautilus.cell_evidence.v1",
        server.json(&format!("/api/cell?run={newest}&case=refund")),
    );
    assert_eq!(cell["status"], "failed");
    // The markup is data in a JSON string, never markup in the answer.
    assert!(
        cell["observed"]["finalText"]
            .as_str()
            .unwrap()
            .starts_with(MARKUP)
    );
    let source = checked(
        "cautilus.serve.source_lines.v1",
        server.json(&format!("/api/source?run={newest}&case=refund&context=2")),
    );
    let levenshtein = &source["assertions"][0];
    assert_eq!(levenshtein["name"], "levenshtein");
    assert_eq!(levenshtein["source"]["line"], 13);
    let marked: Vec<&Value> = levenshtein["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["marked"] == true)
        .collect();
    assert_eq!(marked.len(), 1);
    assert_eq!(marked[0]["number"], 13);
    assert!(
        marked[0]["text"]
            .as_str()
            .unwrap()
            .contains("type: levenshtein"),
        "{marked:?}"
    );
    assert_eq!(levenshtein["lines"].as_array().unwrap().len(), 5);
    assert_eq!(source["assertions"][1]["source"]["line"], 8);

    // Two runs compared, and one case's outputs on both sides.
    let comparison = checked(
        "cautilus.evidence_comparison.v1",
        server.json(&format!("/api/compare?a={previous}&b={newest}")),
    );
    assert_eq!(comparison["changed"][0]["caseId"], "refund");
    assert_eq!(comparison["changed"][0]["change"], "regressed");
    let outputs = checked(
        "cautilus.serve.case_outputs.v1",
        server.json(&format!("/api/outputs?a={previous}&b={newest}&case=refund")),
    );
    assert_eq!(
        outputs["a"]["cells"][0]["finalText"],
        "You can get a refund in 30 days."
    );
    assert_eq!(outputs["a"]["cells"][0]["status"], "passed");
    assert!(
        outputs["b"]["cells"][0]["finalText"]
            .as_str()
            .unwrap()
            .contains("<img src=x")
    );
    // Nothing is in progress.
    let live = checked("cautilus.serve.live.v1", server.json("/api/live"));
    assert_eq!(live["runs"], json!([]));
    let finished = checked(
        "cautilus.serve.live.v1",
        server.json(&format!("/api/live?run={newest}")),
    );
    assert_eq!(finished["runs"][0]["finished"], true);
    assert_eq!(finished["runs"][0]["finishedCases"], 2);

    // Another Host (DNS rebinding), another method: refused before any route.
    for host in ["evil.example", "127.0.0.1.nip.io:1", "localhost:1"] {
        let answer = server.request("GET", "/api/suites", Some(host));
        assert_eq!(answer.status, 421, "{host}");
        assert!(
            answer.json()["error"]
                .as_str()
                .unwrap()
                .contains("is not this server")
        );
        assert!(!answer.body.contains("support"));
    }
    assert_eq!(
        server
            .request(
                "GET",
                "/api/suites",
                Some(&format!("localhost:{}", server.port))
            )
            .status,
        200
    );
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let answer = server.request(method, "/api/runs", None);
        assert_eq!(answer.status, 405, "{method}");
        assert!(answer.head.contains("allow: get, head"));
        assert!(
            answer.json()["error"]
                .as_str()
                .unwrap()
                .contains("read-only")
        );
    }
    assert_eq!(server.request("HEAD", "/api/suites", None).status, 200);

    // Run ids that try to leave the records: refused, naming the id.
    for bad in [
        "..",
        "..%2F..%2Fetc",
        "%2Fetc%2Fpasswd",
        "a%2F..%2F..%2Fx",
        "%252E%252E%252Fx",
        "records%5C..%5Cx",
        "x%00y",
    ] {
        let answer = server.get(&format!("/api/run?run={bad}"));
        assert_eq!(answer.status, 400, "{bad}: {}", answer.body);
        let error = answer.json();
        assert_eq!(error["schemaVersion"], "cautilus.serve.error.v1");
        assert!(error["hint"].as_str().is_some_and(|h| !h.is_empty()));
        crate::schemas::validates("cautilus.serve.error.v1", &error).unwrap();
    }
    assert_eq!(
        server.get("/api/run?run=20200101T000000000Z-0000").status,
        404
    );
    // Case ids and variants are only compared with the records.
    for bad in [
        "..%2F..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "refund%2F..",
    ] {
        let answer = server.get(&format!("/api/cell?run={newest}&case={bad}"));
        assert_eq!(answer.status, 404, "{bad}");
        assert!(!answer.body.contains("root:"), "{bad}");
    }
    assert_eq!(
        server
            .get(&format!("/api/cell?run={newest}&case=refund&variant=.."))
            .status,
        404
    );
    // A closed set of parameters; a route that does not exist.
    assert_eq!(
        server
            .get(&format!("/api/run?run={newest}&path=/etc/passwd"))
            .status,
        400
    );
    assert_eq!(server.get("/api/files?path=/etc/passwd").status, 404);
    assert_eq!(server.get("/api/runs?limit=x").status, 400);

    // A run whose record names a fixture outside the project: its places
    // are not given and no line of that file is read.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("support.fixture.yaml");
    let text = std::fs::read_to_string(root.join("evals/support.fixture.yaml")).unwrap();
    std::fs::write(&secret, format!("{text}# OUTSIDE-THE-PROJECT\n")).unwrap();
    let run_json = root.join("records/runs").join(&newest).join("run.json");
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    record["options"]["fixture"] = json!(secret);
    std::fs::write(&run_json, record.to_string()).unwrap();
    let answer = server.get(&format!("/api/source?run={newest}&case=refund"));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(!answer.body.contains("OUTSIDE-THE-PROJECT"));
    assert!(!answer.body.contains("type: levenshtein"));
    let source = answer.json();
    assert!(
        source["assertions"][0]["lines"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        source["assertions"][0]["unavailable"]
            .as_str()
            .unwrap()
            .contains("outside the project")
    );

    // The server ends with the test: killed, reaped, no process left.
    drop(server);
    assert!(!Path::new(&format!("/proc/{pid}")).exists() || !cfg!(target_os = "linux"));
}

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
    // The last case takes long: the run is still going while the first
    // cases show.
    std::fs::write(
        &program,
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *'\"four\"'*) sleep 12;; *) sleep 1;; esac\necho answer\n",
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
        json!({"url": server.url, "run": id, "shots": artifact("serve-live.png").parent().unwrap()}),
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
