//! Every API route over a dozen runs, and what the server refuses.

use std::path::Path;

use serde_json::{Value, json};

use super::{MARKUP, Server, checked, cli, history, ids};

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
    // Two variants of one experiment (the same run on both sides).
    let (code, _, stderr) = cli(
        root,
        &[
            "eval",
            "test",
            "--fixture",
            "evals/models.fixture.yaml",
            "--quiet",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let models = ids(&server.json("/api/runs?suite=models"))[0].clone();
    let variants = checked(
        "cautilus.evidence_comparison.v1",
        server.json(&format!(
            "/api/compare?a={models}&b={models}&variantA=small&variantB=large"
        )),
    );
    assert_eq!(variants["unchanged"], 1);
    assert_eq!(variants["b"]["variant"], "large");
    let outputs = server.json(&format!(
        "/api/outputs?a={models}&b={models}&case=c1&variantA=small&variantB=large"
    ));
    assert_eq!(outputs["b"]["cells"][0]["variant"], "large");
    assert_eq!(outputs["b"]["cells"].as_array().unwrap().len(), 1);
    let ambiguous = server.get(&format!("/api/cell?run={models}&case=c1"));
    assert_eq!(ambiguous.status, 400);
    assert!(
        ambiguous.json()["hint"]
            .as_str()
            .unwrap()
            .contains("variant")
    );
    let unknown = server.get(&format!("/api/compare?a={models}&b={models}&variantA=nope"));
    assert_eq!(unknown.status, 400);
    assert!(
        unknown.json()["error"]
            .as_str()
            .unwrap()
            .contains("small, large")
    );
    assert_eq!(
        server.json("/api/runs")["runs"].as_array().unwrap().len(),
        13
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

/// Every route answers the same from the records alone (no index yet),
/// from the index the server saved under `records/index/`, from a damaged
/// index (ignored), and after a run's records changed (its entry made
/// again) or a run was removed (it leaves the lists).
#[test]
fn the_run_index_changes_no_answer() {
    let dir = history();
    let root = dir.path();
    let index = root.join("records/index/runs.jsonl");
    let routes = |server: &Server| -> Vec<(String, Value)> {
        let page = server.json("/api/runs?limit=200");
        let run_ids = ids(&page);
        let (newest, oldest) = (&run_ids[0], &run_ids[run_ids.len() - 1]);
        let mut paths = vec![
            "/api/runs?limit=200".to_string(),
            "/api/runs?suite=support&limit=3".into(),
            format!("/api/runs?suite=support&limit=3&before={newest}"),
            "/api/progress?suite=support".into(),
            "/api/progress?suite=support&limit=4".into(),
            "/api/progress?suite=nothing".into(),
            format!("/api/run?run={newest}"),
            format!("/api/cases?run={oldest}&status=all"),
            format!("/api/cell?run={newest}&case=refund"),
            format!("/api/compare?a={oldest}&b={newest}"),
            format!("/api/outputs?a={oldest}&b={newest}&case=refund"),
        ];
        paths.push("/api/run?run=latest".into());
        paths
            .into_iter()
            .map(|p| {
                let value = server.json(&p);
                (p, value)
            })
            .collect()
    };

    // From the records alone: no index when the server starts.
    assert!(!index.exists());
    let server = Server::start(root);
    let plain = routes(&server);
    drop(server);
    let saved = std::fs::read_to_string(&index).expect("the server saved its index");
    assert!(saved.starts_with("{\"schemaVersion\":\"cautilus.run_index.v1\""));
    assert_eq!(saved.lines().count(), 1 + 12, "{saved}");

    // From the saved index.
    let server = Server::start(root);
    assert_eq!(routes(&server), plain);
    drop(server);

    // From a damaged index: ignored, and saved again whole.
    std::fs::write(
        &index,
        saved.replace("\"suiteId\":\"support\"", "\"suiteId\":"),
    )
    .unwrap();
    let server = Server::start(root);
    assert_eq!(routes(&server), plain);
    drop(server);

    // A run's records change (the final record of one of the plain runs
    // before the promotion rewritten with another recommendation), and a
    // run is removed: the answers follow the records, as a server without
    // an index tells.
    let page = &plain[0].1;
    let run_ids = ids(page);
    assert_eq!(page["runs"][8]["kind"], "run");
    let changed = root.join("records/runs").join(&run_ids[8]);
    let summary = changed.join("eval-summary.json");
    let mut json: Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    json["recommendation"] = json!("defer");
    json["suiteDisplayName"] = json!("Support, rewritten");
    std::fs::write(&summary, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    std::fs::remove_dir_all(root.join("records/runs").join(&run_ids[9])).unwrap();
    let server = Server::start(root);
    let followed = routes(&server);
    drop(server);
    let page = &followed[0].1;
    assert_eq!(page["runs"].as_array().unwrap().len(), 11);
    assert_eq!(page["runs"][8]["recommendation"], "defer");
    assert_eq!(page["runs"][8]["title"], "Support, rewritten");
    std::fs::remove_file(&index).unwrap();
    let server = Server::start(root);
    assert_eq!(routes(&server), followed);
    drop(server);
    let saved = std::fs::read_to_string(&index).unwrap();
    assert_eq!(saved.lines().count(), 1 + 11);
    assert!(!saved.contains(&run_ids[9]));
}

/// A project with no fixture yet lists no suite and says where fixtures
/// are looked for; one whose fixtures cannot be listed (two share a suite
/// id) is still an error that says what to fix.
#[test]
fn suites_of_a_project_with_no_fixture_are_empty_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let manifest = checked("cautilus.manifest.v1", server.json("/api/suites"));
    assert_eq!(manifest["suites"], json!([]));
    let notice = manifest["notice"].as_str().unwrap();
    assert!(notice.contains("no fixture matches"), "{notice}");
    assert!(notice.contains("evals/**/*.fixture"), "{notice}");
    // It is the manifest `eval list --json` prints there (exit 2, the
    // error on stderr), which `cautilus mcp` answers too.
    let (code, stdout, stderr) = cli(dir.path(), &["eval", "list", "--json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no fixture matches"), "{stderr}");
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap(), manifest);
    // The runs route answers too (nothing recorded yet).
    assert_eq!(server.json("/api/runs")["runs"], json!([]));
    drop(server);

    let evals = dir.path().join("evals");
    std::fs::create_dir_all(&evals).unwrap();
    for name in ["a", "b"] {
        std::fs::write(
            evals.join(format!("{name}.fixture.yaml")),
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: same\nprovider: fixture\ncases:\n  - { caseId: c, input: hi }\n",
        )
        .unwrap();
    }
    let server = Server::start(dir.path());
    let answer = server.get("/api/suites");
    assert_eq!(answer.status, 500, "{}", answer.body);
    let error = answer.json();
    assert!(
        error
            .to_string()
            .contains("suite id `same` is used by two fixtures"),
        "{error}"
    );
}
