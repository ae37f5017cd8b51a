//! The evidence read models over a project's real records (a dozen runs of
//! one suite through the fixture backend, a promoted baseline, an
//! experiment with two variants), their committed schemas, the refusal of
//! run ids that leave the records; and `cautilus mcp` driven by the
//! reference MCP client (Python `mcp`, installed by .ci/run).

use std::path::{Path, PathBuf};

use cautilus::evidence::{Records, cell, compare, detail, list, progress};
use serde_json::{Value, json};

use crate::support::{cautilus, output};

const FIXTURE: &str = r#"schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: support
provider: fixture
model: m1
assertions:
  - { type: contains, value: "refund", name: mentions-refund }
cases:
  - caseId: refund
    input: "How do I get a refund?"
    assertions:
      - { type: levenshtein, value: "You can get a refund in 30 days.", threshold: 0.7 }
  - caseId: hours
    input: "When are you open?"
    assertions:
      - { type: contains, value: "9" }
"#;

/// Two models answering the same suite: an experiment of two variants.
const VARIANTS: &str = r#"schemaVersion: cautilus.evaluation_input.v1
surface: app
preset: prompt
suiteId: models
provider: fixture
model: m1
variants:
  small: { model: m1 }
  large: { model: m2 }
cases:
  - caseId: c1
    input: "Say 1."
    expected: { finalText: "1" }
"#;

/// Canned answers: `good` passes both cases, `bad` fails `refund`.
fn canned(good: bool, step: u32) -> Value {
    let refund = if good {
        "You can get a refund in 30 days."
    } else {
        "Refunds take a while."
    };
    json!({
        "refund": {"finalText": refund, "costUsd": 0.01 + f64::from(step) * 0.001, "durationMs": 100 + step * 10},
        "hours": {"finalText": "We are open 9 to 5; the refund desk too.", "costUsd": 0.02, "durationMs": 300},
    })
}

pub(crate) fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("cautilus.toml"),
        "dir = \"records\"\n\n[defaults]\nprovider = \"fixture\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("evals")).unwrap();
    std::fs::write(root.join("evals/support.fixture.yaml"), FIXTURE).unwrap();
    std::fs::write(root.join("evals/models.fixture.yaml"), VARIANTS).unwrap();
    dir
}

fn cli(root: &Path, args: &[&str]) -> (i32, String, String) {
    output(cautilus().current_dir(root).args(args).output().unwrap())
}

/// One run of `support` answering as `canned` says.
fn run_support(root: &Path, good: bool, step: u32) {
    let answers = root.join(format!("canned-{step}.json"));
    std::fs::write(&answers, canned(good, step).to_string()).unwrap();
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

/// The schema-checked JSON of a read model.
fn checked(id: &str, model: &impl serde::Serialize) -> Value {
    let value = serde_json::to_value(model).unwrap();
    assert_eq!(value["schemaVersion"], id);
    crate::schemas::validates(id, &value).unwrap_or_else(|e| panic!("{id}: {e}"));
    value
}

#[test]
fn read_models_over_a_dozen_runs_with_a_promoted_baseline() {
    let dir = project();
    let root = dir.path();
    // Six plain runs, passing and failing in turn; the first promoted;
    // six more, each compared with the baseline (experiments).
    for step in 0..6 {
        run_support(root, step % 2 == 0, step);
    }
    let records = Records::new(&root.join("records"), root);
    let oldest = records.runs().last().unwrap().id.clone();
    let (code, _, stderr) = cli(
        root,
        &["eval", "promote", &format!("records/runs/{oldest}")],
    );
    assert_eq!(code, 0, "{stderr}");
    for step in 6..12 {
        run_support(root, step % 2 == 0, step);
    }
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

    // The run list: newest first, paged, one suite's.
    let page = list::run_list(&records, Some("support"), 0, Some(5));
    let page = checked("cautilus.run_list.v1", &page);
    assert_eq!(page["total"], 12);
    assert_eq!(page["runs"].as_array().unwrap().len(), 5);
    assert_eq!(page["nextOffset"], 5);
    let newest = &page["runs"][0];
    assert_eq!(newest["kind"], "experiment");
    assert_eq!(newest["passed"], false);
    assert_eq!(newest["stats"]["passRate"], 0.5);
    assert!((newest["stats"]["costUsd"].as_f64().unwrap() - 0.041).abs() < 1e-9);
    assert!(newest["stats"]["p95Latency"].is_null());
    assert!(newest["stats"]["p95LatencyMs"].as_f64().unwrap() > 200.0);
    let last = list::run_list(&records, Some("support"), 10, Some(5));
    assert_eq!(last.runs.len(), 2);
    assert_eq!(last.next_offset, None);
    assert_eq!(last.runs[1].id, oldest);
    assert_eq!(last.runs[1].kind, "run");
    assert_eq!(last.runs[1].recommendation.as_deref(), Some("accept-now"));
    assert_eq!(list::run_list(&records, None, 0, None).total, 13);
    let ids: Vec<String> = list::run_list(&records, Some("support"), 0, Some(12))
        .runs
        .into_iter()
        .map(|r| r.id)
        .collect();
    let (newest_id, previous_id) = (ids[0].clone(), ids[1].clone());

    // The detail of the newest (failing) run.
    let detail = checked(
        "cautilus.run_detail.v1",
        &detail::run_detail(&records, &newest_id).unwrap(),
    );
    assert_eq!(detail["notPassed"][0]["caseId"], "refund");
    assert_eq!(
        detail["notPassed"][0]["failedAssertions"],
        json!(["levenshtein", "mentions-refund"])
    );
    assert!(!detail["gates"].as_array().unwrap().is_empty());
    assert_eq!(detail["variants"][0]["name"], "default");

    // One cell's evidence: the ledger in order, checks, sources, output,
    // the baseline, the repro command.
    let evidence = cell::cell_evidence(&records, &newest_id, "refund", None, None).unwrap();
    let evidence = checked("cautilus.cell_evidence.v1", &evidence);
    assert_eq!(evidence["status"], "failed");
    let ledger = evidence["assertions"].as_array().unwrap();
    assert_eq!(ledger.len(), 2);
    assert_eq!(ledger[0]["name"], "levenshtein");
    assert_eq!(ledger[0]["threshold"], 0.7);
    assert_eq!(ledger[0]["weight"], 1.0);
    assert_eq!(ledger[0]["required"], true);
    assert_eq!(
        ledger[0]["check"]["message"],
        "0.2188 is below the 0.70 floor"
    );
    assert_eq!(
        ledger[0]["source"],
        json!({"file": "evals/support.fixture.yaml", "path": "cases[0].assertions[0]", "entry": null, "line": 13, "column": 9})
    );
    assert_eq!(ledger[1]["name"], "mentions-refund");
    assert!(ledger[1]["check"].is_null());
    assert_eq!(ledger[1]["source"]["path"], "assertions[0]");
    assert_eq!(ledger[1]["source"]["line"], 8);
    assert_eq!(evidence["observed"]["finalText"], "Refunds take a while.");
    assert_eq!(evidence["observed"]["provider"], "fixture");
    assert_eq!(evidence["observed"]["durationMs"], 210.0);
    assert_eq!(evidence["baseline"]["status"], "passed");
    assert_eq!(evidence["baseline"]["verdictChanged"], true);
    assert!(
        evidence["baseline"]["scoreDeltas"]["levenshtein"]
            .as_f64()
            .unwrap()
            < -0.7
    );
    let argv: Vec<&str> = evidence["repro"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        &argv[..7],
        [
            "cautilus",
            "eval",
            "test",
            "--fixture",
            "evals/support.fixture.yaml",
            "--case",
            "refund"
        ]
    );
    assert!(argv.contains(&"--fixture-results"), "{argv:?}");
    assert!(argv.contains(&"canned-11.json"), "{argv:?}");
    // Two runs compared: the regression first, with each side's numbers.
    let comparison = compare::compare_runs(&records, &previous_id, None, &newest_id, None).unwrap();
    let comparison = checked("cautilus.evidence_comparison.v1", &comparison);
    assert_eq!(comparison["changed"][0]["caseId"], "refund");
    assert_eq!(comparison["changed"][0]["change"], "regressed");
    assert_eq!(comparison["regressed"], 1);
    assert_eq!(
        comparison["passRate"],
        json!({"a": 1.0, "b": 0.5, "delta": -0.5})
    );
    assert!((comparison["costUsd"]["delta"].as_f64().unwrap() - 0.001).abs() < 1e-9);
    assert_eq!(comparison["a"]["targets"][0]["harness"], "fixture-backend");
    let levenshtein = comparison["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "levenshtein")
        .unwrap();
    assert!(levenshtein["delta"].as_f64().unwrap() < -0.7);

    // Two variants of one experiment.
    let models = list::run_list(&records, Some("models"), 0, None).runs[0]
        .id
        .clone();
    let variants =
        compare::compare_runs(&records, &models, Some("small"), &models, Some("large")).unwrap();
    assert_eq!(variants.unchanged, 1);
    assert_eq!(variants.b.targets[0].model.as_deref(), Some("m2"));
    assert!(compare::compare_runs(&records, &models, Some("nope"), &models, None).is_err());
    let cell = cell::cell_evidence(&records, &models, "c1", Some("large"), Some(1)).unwrap();
    assert_eq!(cell.variant.as_deref(), Some("large"));
    assert!(cell.repro.argv.contains(&"large".to_string()));
    let ambiguous = cell::cell_evidence(&records, &models, "c1", None, None).unwrap_err();
    assert!(ambiguous.to_string().contains("variant"), "{ambiguous}");

    // The suite over time, with the baseline to overlay.
    let progress = checked(
        "cautilus.suite_progress.v1",
        &progress::suite_progress(&records, "support"),
    );
    let points = progress["runs"].as_array().unwrap();
    assert_eq!(points.len(), 12);
    assert_eq!(points[0]["run"], oldest.as_str());
    let rates: Vec<f64> = points
        .iter()
        .map(|p| p["stats"]["passRate"].as_f64().unwrap())
        .collect();
    assert_eq!(rates[..4], [1.0, 0.5, 1.0, 0.5]);
    assert!(points[1]["stats"]["meanScore"]["sem"].as_f64().is_some());
    assert_eq!(progress["baseline"]["stats"]["passRate"], 1.0);
    assert_eq!(progress["baseline"]["variant"], "default");

    // Ids from a client stay beneath the runs directory.
    for id in ["../records", "/etc", "..", "x/../../y"] {
        let error = detail::run_detail(&records, id).unwrap_err();
        assert!(error.to_string().contains("not a run id"), "{id}: {error}");
    }
    assert!(
        detail::run_detail(&records, "20200101T000000000Z-0000")
            .unwrap_err()
            .to_string()
            .contains("no finished run")
    );
    // The repro command reruns that case alone (the last: it adds a run).
    let (code, stdout, stderr) = cli(root, &argv[1..]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let rerun = &list::run_list(&records, Some("support"), 0, Some(1)).runs[0];
    assert_eq!(rerun.counts["total"], 1);
    assert_eq!(rerun.counts["failed"], 1);

    // A project run's suites are runs of their own: `<run>/suites/<suite>`.
    let (code, _, stderr) = cli(root, &["eval", "test", "--suite", "models", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let nested = &list::run_list(&records, Some("models"), 0, None).runs[0];
    assert!(nested.id.contains("/suites/"), "{}", nested.id);
    let nested = detail::run_detail(&records, &nested.id).unwrap();
    assert_eq!(nested.run.suite_id, "models");
    assert_eq!(nested.variants.len(), 2);
}

/// Every directory under `dir` holding a run's final record (runs, a
/// project run's suites, an experiment's group directories).
fn record_dirs(dir: &Path, found: &mut Vec<PathBuf>) {
    if dir.join("eval-summary.json").is_file() || dir.join("experiment.json").is_file() {
        found.push(dir.to_path_buf());
    }
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_type().unwrap().is_dir() {
            record_dirs(&entry.path(), found);
        }
    }
}

#[test]
fn every_kind_of_run_outlines_as_its_report_reads() {
    use cautilus::report::{Outline, load, outline, typed_outline};
    let dir = project();
    let root = dir.path();
    let test = |args: &[&str]| {
        let mut argv = vec!["eval", "test", "--quiet"];
        argv.extend_from_slice(args);
        let (code, stdout, stderr) = cli(root, &argv);
        assert!(code == 0 || code == 1, "{args:?}: {stdout}{stderr}");
    };
    // A plain run, passing and failing.
    run_support(root, true, 0);
    run_support(root, false, 1);
    // A case errored (its canned answer is not one).
    let partial = root.join("partial.json");
    std::fs::write(
        &partial,
        json!({"refund": canned(true, 2)["refund"], "hours": 42}).to_string(),
    )
    .unwrap();
    let partial = partial.to_str().unwrap();
    let support = ["--fixture", "evals/support.fixture.yaml"];
    test(&[&support[..], &["--fixture-results", partial]].concat());
    // Filtered by case, and sharded.
    let answers = root.join("canned-0.json");
    let answers = answers.to_str().unwrap();
    test(
        &[
            &support[..],
            &["--fixture-results", answers, "--case", "refund"],
        ]
        .concat(),
    );
    test(
        &[
            &support[..],
            &["--fixture-results", answers, "--shard", "1/2"],
        ]
        .concat(),
    );
    test(
        &[
            &support[..],
            &["--fixture-results", answers, "--shard", "2/2"],
        ]
        .concat(),
    );
    // An experiment of two variants, two trials each, and one variant of it.
    let models = ["--fixture", "evals/models.fixture.yaml"];
    test(&[&models[..], &["--trials", "2"]].concat());
    test(&[&models[..], &["--variant", "large"]].concat());
    // A project run (its suites are runs of their own).
    test(&[]);
    // The shards merged.
    let records = Records::new(&root.join("records"), root);
    let shards: Vec<PathBuf> = records
        .runs()
        .into_iter()
        .filter(|r| {
            std::fs::read_to_string(r.dir.join("experiment.json")).is_ok_and(|t| {
                serde_json::from_str::<Value>(&t).is_ok_and(|v| v["shard"].is_object())
            })
        })
        .map(|r| r.dir)
        .collect();
    assert_eq!(shards.len(), 2);
    let mut merge = cautilus();
    merge
        .current_dir(root)
        .args(["eval", "merge"])
        .args(&shards)
        .args(["--output-dir", "merged"]);
    let (code, stdout, stderr) = output(merge.output().unwrap());
    assert!(code == 0 || code == 1, "{stdout}{stderr}");

    let mut dirs = Vec::new();
    record_dirs(&root.join("records/runs"), &mut dirs);
    record_dirs(&root.join("merged"), &mut dirs);
    assert!(dirs.len() > 12, "{dirs:?}");
    let mut kinds = std::collections::BTreeSet::new();
    for dir in &dirs {
        let whole = Outline::of(&load(dir).unwrap());
        let typed = typed_outline(dir).unwrap_or_else(|| panic!("{}", dir.display()));
        assert_eq!(typed, whole, "{}", dir.display());
        assert_eq!(outline(dir).unwrap(), whole);
        kinds.insert((whole.header.kind, whole.header.status.clone()));
        for cell in &whole.cells {
            kinds.insert(("cell", cell.status.clone()));
        }
    }
    for kind in [
        ("run", "completed"),
        ("experiment", "completed"),
        ("cell", "passed"),
        ("cell", "failed"),
        ("cell", "errored"),
    ] {
        assert!(
            kinds.contains(&(kind.0, kind.1.to_string())),
            "{kind:?}: {kinds:?}"
        );
    }
    // And the run list's summaries are the ones the reports give.
    for run in records.runs() {
        let direct = cautilus::evidence::summary::RunSummary::of(&run, &load(&run.dir).unwrap());
        assert_eq!(
            serde_json::to_string(&records.summary(&run).unwrap()).unwrap(),
            serde_json::to_string(&direct).unwrap()
        );
    }
}

/// The Python with the reference MCP client (`mcp` from PyPI): .ci/run
/// installs it and names it in `CAUTILUS_MCP_PYTHON`.
fn mcp_python() -> Option<PathBuf> {
    let python = PathBuf::from(std::env::var_os("CAUTILUS_MCP_PYTHON")?);
    let works = std::process::Command::new(&python)
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success());
    works.then_some(python)
}

#[test]
fn the_reference_mcp_client_drives_cautilus_mcp() {
    let Some(python) = mcp_python() else {
        eprintln!(
            "skipping: the reference MCP client is not installed (set CAUTILUS_MCP_PYTHON to a Python with `mcp`; .ci/run installs it)"
        );
        return;
    };
    let dir = project();
    let root = dir.path();
    let script = crate::support::repo().join("tests/integration/mcp_client.py");
    let binary = std::env::var_os("CAUTILUS_TEST_BINARY")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cautilus").into());
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(&binary)
        .current_dir(root)
        .env("CAUTILUS_CACHE_DIR", crate::support::shared_cache_dir())
        .output()
        .unwrap();
    let (code, stdout, stderr) = output(out);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let seen: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in [
        "list_suites",
        "validate",
        "run",
        "list_runs",
        "run_summary",
        "cell_evidence",
        "compare_runs",
        "suite_progress",
    ] {
        assert!(tools.contains(&tool), "{tool}: {tools:?}");
    }
    let suites: Vec<&str> = seen["suites"]["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(suites.len(), 2, "{suites:?}");
    assert!(suites.contains(&"support"));
    assert_eq!(seen["validate"]["valid"], true);
    // The fixture backend answers without canned results: `refund` fails
    // its similarity floor, the run is recorded all the same.
    assert_eq!(seen["run"]["exitCode"], 1);
    assert_eq!(seen["run"]["run"]["suiteId"], "support");
    assert_eq!(seen["runOne"]["run"]["counts"]["total"], 1);
    assert_eq!(seen["runs"]["total"], 2);
    assert_eq!(seen["cell"]["schemaVersion"], "cautilus.cell_evidence.v1");
    assert_eq!(seen["cell"]["caseId"], "refund");
    assert_eq!(seen["cell"]["assertions"][0]["source"]["line"], 13);
    assert_eq!(
        seen["comparison"]["schemaVersion"],
        "cautilus.evidence_comparison.v1"
    );
    assert_eq!(seen["comparison"]["removed"][0]["caseId"], "hours");
    // Errors are tool errors naming what to do; the server goes on.
    let bad_run = seen["badRun"].as_str().unwrap();
    assert!(bad_run.contains("not a run id"), "{bad_run}");
    let bad_suite = seen["badSuite"].as_str().unwrap();
    assert!(bad_suite.contains("list_suites"), "{bad_suite}");
    let extra = seen["extraArgument"].as_str().unwrap();
    assert!(extra.contains("provider"), "{extra}");
    assert_eq!(seen["after"]["total"], 2, "the server still answers");
    // What the tools may not do: the run used the config's provider only.
    assert_eq!(
        seen["summary"]["run"]["targets"][0],
        "fixture / m1 / fixture-backend"
    );
}
