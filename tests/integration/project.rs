//! A project's evaluations: `cautilus.toml` (found upward, or `--config`),
//! discovery of its fixtures, unique suite ids, `eval list`, and the
//! config's defaults and records root in `eval test`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{cautilus, output};

fn suite(id: &str, cases: usize) -> String {
    json!({
        "schemaVersion": "cautilus.evaluation_input.v1",
        "surface": "app",
        "preset": "prompt",
        "suiteId": id,
        // The fixture backend as a provider id: runs without a model.
        "provider": "fixture",
        "model": "claude-sonnet-4-6",
        "cases": (0..cases)
            .map(|i| json!({"caseId": format!("c{i}"), "input": format!("Say {i}."), "expected": {"finalText": format!("{i}")}}))
            .collect::<Vec<_>>(),
    })
    .to_string()
}

/// A project: a config, four suites (one YAML, one nested), a draft the
/// config excludes, and a file the globs do not match.
fn project(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("cautilus.toml"), config).unwrap();
    for (path, text) in [
        ("evals/support.fixture.json", suite("support", 2)),
        ("evals/billing/refunds.fixture.json", suite("refunds", 3)),
        ("evals/drafts/wip.fixture.json", suite("wip", 1)),
        ("evals/notes.json", suite("not-a-fixture", 1)),
        (
            "evals/greeting.fixture.yaml",
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: greeting\n\
             provider: fixture\nmodel: gpt-5-mini\ncases:\n  - caseId: hi\n    messages:\n      - { role: user, content: Hi }\n"
                .to_string(),
        ),
    ] {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    dir
}

const CONFIG: &str = r#"
dir = "records"
include = ["evals/**/*.fixture.{json,yaml}"]
exclude = ["evals/drafts/**"]

[defaults]
# Flag > fixture > config: the suites name their own provider.
provider = "anthropic"
"#;

fn list(cwd: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut command = cautilus();
    command.current_dir(cwd).args(["eval", "list"]).args(extra);
    output(command.output().unwrap())
}

#[test]
fn the_manifest_lists_every_suite_without_running_anything() {
    let dir = project(CONFIG);
    // Found upward from a subdirectory; no key, no provider contacted.
    let (code, stdout, stderr) = list(&dir.path().join("evals/billing"), &["--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let manifest: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(manifest["schemaVersion"], "cautilus.manifest.v1");
    let suites: Vec<(&str, &str, u64, &str)> = manifest["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap(),
                s["path"].as_str().unwrap(),
                s["cases"].as_u64().unwrap(),
                s["preset"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        suites,
        [
            ("refunds", "evals/billing/refunds.fixture.json", 3, "prompt"),
            ("greeting", "evals/greeting.fixture.yaml", 1, "chat"),
            ("support", "evals/support.fixture.json", 2, "prompt"),
        ]
    );
    assert_eq!(manifest["suites"][1]["provider"], "fixture");
    assert_eq!(manifest["suites"][0]["provider"], "fixture");
    assert_eq!(manifest["suites"][1]["model"], "gpt-5-mini");
    assert!(!dir.path().join("records").exists(), "nothing ran");

    let (code, stdout, _) = list(dir.path(), &[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("3 suites, 6 cases"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("refunds ") && l.contains("app/prompt")),
        "{stdout}"
    );
}

#[test]
fn duplicate_ids_unknown_keys_and_empty_projects_are_definition_errors() {
    let dir = project(CONFIG);
    std::fs::write(
        dir.path().join("evals/support-copy.fixture.json"),
        suite("support", 1),
    )
    .unwrap();
    let (code, _, stderr) = list(dir.path(), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("suite id `support` is used by two fixtures:")
            && stderr.contains("evals/support-copy.fixture.json")
            && stderr.contains("evals/support.fixture.json"),
        "{stderr}"
    );

    let dir = project("incude = [\"evals/**\"]\n");
    let (code, _, stderr) = list(dir.path(), &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown key `incude`; did you mean `include`?"),
        "{stderr}"
    );

    let dir = project("include = [\"suites/*.fixture.json\"]\n");
    let (code, _, stderr) = list(dir.path(), &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no fixture matches [\"suites/*.fixture.json\"]"),
        "{stderr}"
    );

    // --config names another file.
    let other = dir.path().join("ci.toml");
    std::fs::write(&other, "include = [\"evals/*.fixture.json\"]\n").unwrap();
    let (code, stdout, stderr) = list(dir.path(), &["--config", other.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("1 suites, 2 cases"), "{stdout}");
}

#[test]
fn eval_test_takes_the_configs_defaults_and_records_root() {
    let dir = project(CONFIG);
    let mut command = cautilus();
    command
        .current_dir(dir.path())
        .args(["eval", "test", "--fixture", "evals/support.fixture.json"])
        .env_remove("ANTHROPIC_API_KEY")
        .env("PATH", "/nonexistent");
    let (code, stdout, stderr) = output(command.output().unwrap());
    // The config's `anthropic` (no key here) does not override the
    // fixture's own provider.
    assert_eq!(code, 0, "{stdout}{stderr}");
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("records/runs"))
        .unwrap()
        .collect();
    assert_eq!(runs.len(), 1, "the run directory is under the config's dir");
    assert!(!dir.path().join(".cautilus").exists());
    // A flag still wins over the config.
    let mut command = cautilus();
    command
        .current_dir(dir.path())
        .args([
            "eval",
            "test",
            "--fixture",
            "evals/support.fixture.json",
            "--provider",
            "anthropic",
        ])
        .env_remove("ANTHROPIC_API_KEY");
    let (code, _, stderr) = output(command.output().unwrap());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
}

fn project_test(cwd: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut command = cautilus();
    command
        .current_dir(cwd)
        .args(["eval", "test"])
        .args(extra)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("PATH", "/nonexistent");
    output(command.output().unwrap())
}

#[test]
fn one_run_over_the_project_exits_as_its_worst_suite() {
    let dir = project(CONFIG);
    // One suite fails a required assertion.
    let mut failing: Value = serde_json::from_str(&suite("strict", 1)).unwrap();
    failing["assertions"] = json!([{"type": "equals", "value": "never this"}]);
    std::fs::write(
        dir.path().join("evals/strict.fixture.json"),
        failing.to_string(),
    )
    .unwrap();
    let (code, stdout, stderr) = project_test(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    // Suites run at once by default, each printing one line when done.
    for id in ["refunds", "greeting", "strict", "support"] {
        assert!(stdout.contains(&format!("== {id} ")), "{stdout}");
    }
    assert!(stdout.contains("== project: reject"), "{stdout}");
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("records/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(runs[0].join("project-summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["schemaVersion"], "cautilus.project_summary.v1");
    assert_eq!(summary["exitCode"], 1);
    let statuses: Vec<(&str, &str)> = summary["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap(),
                s["recommendation"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("refunds", "accept-now"),
            // Nothing to check in its case: unchecked, so defer.
            ("greeting", "defer"),
            ("strict", "reject"),
            ("support", "accept-now"),
        ]
    );
    let support_run = runs[0].join(summary["suites"][3]["runDir"].as_str().unwrap());
    assert!(support_run.join("eval-summary.json").is_file());

    // Selected suites only; the project is then as good as they are.
    let (code, stdout, stderr) =
        project_test(dir.path(), &["--suite", "re*", "--suite", "support"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("== strict"), "{stdout}");
    let (code, _, stderr) = project_test(dir.path(), &["--suite", "nothing*"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no suite of the project matches"),
        "{stderr}"
    );

    // Suites that cannot run (no key for the provider asked for): each is
    // recorded with why, and the project exits 2.
    let (code, stdout, stderr) = project_test(dir.path(), &["--json", "--provider", "anthropic"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["suites"].as_array().unwrap().len(), 4);
    assert!(
        summary["suites"][0]["error"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY"),
        "{summary}"
    );

    // A fixture that does not load: a definition error before anything runs.
    std::fs::write(
        dir.path().join("evals/broken.fixture.json"),
        suite("broken", 1).replace("\"prompt\"", "\"promt\""),
    )
    .unwrap();
    let before = std::fs::read_dir(dir.path().join("records/runs"))
        .unwrap()
        .count();
    let (code, stdout, stderr) = project_test(dir.path(), &[]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("broken.fixture.json"), "{stderr}");
    let after = std::fs::read_dir(dir.path().join("records/runs"))
        .unwrap()
        .count();
    assert_eq!(before, after, "nothing ran");
}

#[test]
fn tags_select_cases_and_experiments_join_the_project_run() {
    let dir = project(CONFIG);
    // An experiment suite: two variants, a baseline, trials, a gate and tags.
    let mut experiment: Value = serde_json::from_str(&suite("tones", 2)).unwrap();
    experiment["trials"] = json!(2);
    experiment["variants"] = json!({"plain": {}, "warm": {"system": "Be warm."}});
    experiment["baseline"] = json!("plain");
    experiment["gates"] = json!({"passRate": {"min": 0.5}});
    experiment["cases"][0]["tags"] = json!(["smoke"]);
    experiment["cases"][1]["tags"] = json!(["slow"]);
    std::fs::write(
        dir.path().join("evals/tones.fixture.json"),
        experiment.to_string(),
    )
    .unwrap();

    let (code, stdout, stderr) = list(dir.path(), &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let manifest: Value = serde_json::from_str(&stdout).unwrap();
    let tones = manifest["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "tones")
        .unwrap();
    assert_eq!(tones["variants"], json!(["plain", "warm"]));
    assert_eq!(tones["baseline"], "plain");
    assert_eq!(tones["trials"], 2);
    assert_eq!(tones["gates"], json!(["passRate.min"]));
    assert_eq!(tones["tags"], json!(["smoke", "slow"]));

    // --tag: only suites with such a case run, and only those cases.
    let (code, stdout, stderr) = project_test(dir.path(), &["--tag", "smoke", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    let suites = summary["suites"].as_array().unwrap();
    assert_eq!(suites.len(), 1, "{summary}");
    assert_eq!(suites[0]["id"], "tones");
    // 1 tagged case × 2 variants × 2 trials.
    assert_eq!(suites[0]["counts"]["total"], 4, "{summary}");
    let runs = dir.path().join("records/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(run.join(suites[0]["experiment"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    assert_eq!(record["filtered"], true);
    assert!(
        record["cells"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["caseId"] == "c0" && c["tags"] == json!(["smoke"]))
    );

    let (code, _, stderr) = project_test(dir.path(), &["--tag", "nightly"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no suite of the project has a case tagged nightly"),
        "{stderr}"
    );
}

#[test]
fn suites_without_an_id_are_named_by_their_path_and_still_unique() {
    let dir = project(CONFIG);
    let mut unnamed: Value = serde_json::from_str(&suite("x", 2)).unwrap();
    unnamed.as_object_mut().unwrap().remove("suiteId");
    std::fs::write(
        dir.path().join("evals/billing/disputes.fixture.json"),
        unnamed.to_string(),
    )
    .unwrap();
    // From a subdirectory too: the id depends on where the file is.
    let (code, stdout, stderr) = list(&dir.path().join("evals"), &["--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let manifest: Value = serde_json::from_str(&stdout).unwrap();
    let ids: Vec<&str> = manifest["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"evals.billing.disputes"), "{ids:?}");
    // It runs under that id (records and packets carry it).
    let (code, stdout, stderr) = project_test(dir.path(), &["--suite", "evals.billing.*"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("evals.billing.disputes"), "{stdout}");

    // A pinned id equal to a derived one is a duplicate naming both files.
    std::fs::write(
        dir.path().join("evals/pinned.fixture.json"),
        suite("evals.billing.disputes", 1),
    )
    .unwrap();
    let (code, _, stderr) = list(dir.path(), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("suite id `evals.billing.disputes` is used by two fixtures:")
            && stderr.contains("evals/billing/disputes.fixture.json")
            && stderr.contains("evals/pinned.fixture.json"),
        "{stderr}"
    );
}

#[test]
fn a_project_run_writes_one_junit_one_markdown_and_a_page_per_suite() {
    let dir = project(CONFIG);
    let mut failing: Value = serde_json::from_str(&suite("strict", 1)).unwrap();
    failing["assertions"] = json!([{"type": "equals", "value": "never this"}]);
    std::fs::write(
        dir.path().join("evals/strict.fixture.json"),
        failing.to_string(),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let (junit, markdown, html) = (
        out.path().join("junit.xml"),
        out.path().join("summary.md"),
        out.path().join("pages"),
    );
    let (code, stdout, stderr) = project_test(
        dir.path(),
        &[
            "--junit",
            junit.to_str().unwrap(),
            "--markdown",
            markdown.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    for id in ["refunds", "greeting", "strict", "support"] {
        assert!(xml.contains(&format!("<testsuite name=\"{id}\"")), "{xml}");
        let page = std::fs::read_dir(&html)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            // A plain id names its page (file_names::stem).
            .find(|name| *name == format!("{id}.html"));
        assert!(page.is_some(), "no page for {id}");
    }
    assert!(
        xml.contains("<testsuites name=\"cautilus\" tests=\"7\" failures=\"1\""),
        "{xml}"
    );
    if let Ok(check) = std::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(crate::support::repo().join("tests/schemas/jenkins-junit-10.xsd"))
        .arg(&junit)
        .output()
    {
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(md.starts_with("# cautilus project — reject"), "{md}");
    assert!(md.contains("| strict | reject |"), "{md}");
    assert!(md.contains("## cautilus: strict — reject"), "{md}");
}

#[test]
fn the_configs_redact_and_trials_apply_and_the_summary_carries_gates() {
    let dir = project(&format!("{CONFIG}\ntrials = 2\n").replace(
        "dir = \"records\"",
        "dir = \"records\"\nredact = [\"finalText\", \"messages.*.content\"]",
    ));
    // An experiment whose gate fails: one case can never pass.
    let mut gated: Value = serde_json::from_str(&suite("gated", 2)).unwrap();
    gated["assertions"] = json!([{"type": "equals", "value": "never this"}]);
    gated["gates"] = json!({"passRate": {"min": 0.9}});
    std::fs::write(
        dir.path().join("evals/gated.fixture.json"),
        gated.to_string(),
    )
    .unwrap();
    let (code, stdout, stderr) = project_test(
        dir.path(),
        &["--json", "--suite", "support", "--suite", "gated"],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    let suites = summary["suites"].as_array().unwrap();
    let by_id = |id: &str| suites.iter().find(|s| s["id"] == id).unwrap();
    // defaults.trials: every case twice where the fixture names no trials.
    assert_eq!(by_id("support")["counts"]["total"], 4, "{summary}");
    assert_eq!(by_id("gated")["counts"]["total"], 4, "{summary}");
    let gates = &by_id("gated")["gates"];
    assert_eq!(gates["failed"].as_array().unwrap().len(), 1, "{gates}");
    assert!(
        gates["failed"][0]
            .as_str()
            .unwrap()
            .starts_with("default passRate.min: pass rate 0 "),
        "{gates}"
    );
    assert!(
        by_id("support")["gates"]["failed"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{summary}"
    );
    assert!(by_id("support")["durationMs"].as_u64().is_some());

    // redact: every finalText kept by the run (packets, journal,
    // experiment.json, cassette) is redacted.
    let kept = crate::support::all_text(&dir.path().join("records"));
    let occurrences: Vec<&str> = kept.split("\"finalText\":").skip(1).collect();
    assert!(occurrences.len() > 8, "{}", occurrences.len());
    for after in occurrences {
        assert!(
            after.trim_start().starts_with("\"[redacted]\""),
            "unredacted: {}",
            &after[..after.len().min(80)]
        );
    }
    if let Some(at) = kept.find("Fixture response") {
        panic!(
            "an answer was kept: …{}…",
            &kept[at.saturating_sub(100)..(at + 200).min(kept.len())]
        );
    }

    // Cassettes too (a redacted answer replays as `[redacted]`).
    let mut command = cautilus();
    command.current_dir(dir.path()).args([
        "eval",
        "test",
        "--fixture",
        "evals/support.fixture.json",
        "--trials",
        "1",
        "--replay",
        "record-new",
        "--redact",
        "input",
    ]);
    let (code, stdout, stderr) = output(command.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let cassette =
        std::fs::read_to_string(dir.path().join("records/cassettes/support.json")).unwrap();
    assert!(
        cassette.contains("\"finalText\": \"[redacted]\""),
        "{cassette}"
    );
    assert!(
        !cassette.contains("Fixture response") && !cassette.contains("Say 0."),
        "{cassette}"
    );

    // Bad redact paths and trials are named in the config.
    let bad = project("redact = [\"a..b\"]\n");
    let (code, _, stderr) = list(bad.path(), &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`redact`: redact path `a..b` has an empty step"),
        "{stderr}"
    );
    let bad = project("[defaults]\ntrials = 0\n");
    let (code, _, stderr) = list(bad.path(), &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`defaults.trials`: must be from 1 to 100"),
        "{stderr}"
    );
}

#[test]
fn the_configs_judge_grades_suites_that_name_none() {
    let dir = project(CONFIG);
    let mut judged: Value = serde_json::from_str(&suite("judged", 1)).unwrap();
    judged["assertions"] = json!(["The answer repeats the number it was asked for"]);
    let path = dir.path().join("evals/judged.fixture.json");
    std::fs::write(&path, judged.to_string()).unwrap();
    let validate = |cwd: &Path| {
        let mut command = cautilus();
        command
            .current_dir(cwd)
            .args(["eval", "validate", "--fixture"])
            .arg(&path);
        output(command.output().unwrap())
    };
    // Without a judge anywhere: the suite says how to configure one.
    let (code, _, stderr) = validate(dir.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("judge"), "{stderr}");
    let (code, stdout, stderr) = project_test(dir.path(), &["--suite", "judged"]);
    assert_eq!(code, 2, "{stdout}{stderr}");

    // The config's [judge] (the deterministic fixture judge here) fills in.
    std::fs::write(
        dir.path().join("cautilus.toml"),
        format!("{CONFIG}\n[judge]\nprovider = \"fixture\"\nmodel = \"fixture-judge\"\n"),
    )
    .unwrap();
    let (code, stdout, stderr) = validate(dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = project_test(dir.path(), &["--suite", "judged", "--json"]);
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert!(summary["suites"][0]["error"].is_null(), "{summary}");
    let run_dir = dir.path().join("records/runs");
    let kept = crate::support::all_text(&run_dir);
    assert!(
        kept.contains("fixture-judge"),
        "the config's judge model graded the case"
    );

    // --judge overrides the fixture's and the config's judge.
    let mut pinned = judged.clone();
    pinned["judge"] = json!({"provider": "openai", "model": "needs-a-server"});
    std::fs::write(&path, pinned.to_string()).unwrap();
    let (code, stdout, stderr) = project_test(
        dir.path(),
        &[
            "--suite",
            "judged",
            "--json",
            "--judge",
            "fixture:flag-judge",
        ],
    );
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    let kept = crate::support::all_text(&run_dir);
    assert!(
        kept.contains("flag-judge"),
        "the flag's judge graded the case"
    );
    let (code, _, stderr) = project_test(dir.path(), &["--judge", "fixture"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("PROVIDER:MODEL"), "{stderr}");

    // A [judge] without a model is named.
    std::fs::write(
        dir.path().join("cautilus.toml"),
        "[judge]\nprovider = \"fixture\"\n",
    )
    .unwrap();
    let (code, _, stderr) = list(dir.path(), &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("model"), "{stderr}");
}

/// The issue's acceptance: a repository with a config and a dozen
/// fixtures (one named by its path, one failing, tagged ones, and then a
/// duplicate id) is listed, run as a whole with reports, filtered by tag,
/// and exits as its worst suite.
#[test]
fn a_dozen_suites_are_listed_run_as_a_whole_and_exit_as_the_worst() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("cautilus.toml"),
        "[defaults]\nparallel_suites = 3\n",
    )
    .unwrap();
    let write = |path: &str, body: &Value| {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, body.to_string()).unwrap();
    };
    for i in 0..10 {
        let mut body: Value = serde_json::from_str(&suite(&format!("team-{i:02}"), 2)).unwrap();
        if i % 3 == 0 {
            body["cases"][0]["tags"] = json!(["nightly"]);
        }
        write(&format!("evals/team/suite-{i:02}.fixture.json"), &body);
    }
    let mut unnamed: Value = serde_json::from_str(&suite("x", 1)).unwrap();
    unnamed.as_object_mut().unwrap().remove("suiteId");
    write("evals/billing/refunds.fixture.json", &unnamed);
    let mut failing: Value = serde_json::from_str(&suite("strict", 1)).unwrap();
    failing["assertions"] = json!([{"type": "equals", "value": "never this"}]);
    write("evals/strict.fixture.json", &failing);

    let (code, stdout, stderr) = list(root, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let manifest: Value = serde_json::from_str(&stdout).unwrap();
    let ids: Vec<&str> = manifest["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 12, "{ids:?}");
    assert!(
        ids.contains(&"evals.billing.refunds") && ids.contains(&"strict"),
        "{ids:?}"
    );

    // The whole project: the failing suite decides the exit status.
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let (code, stdout, stderr) =
        project_test(root, &["--junit", junit.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["suites"].as_array().unwrap().len(), 12);
    assert_eq!(summary["recommendation"], "reject");
    let rejected: Vec<&str> = summary["suites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["recommendation"] == "reject")
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(rejected, ["strict"]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testsuite name=").count(), 12);

    // Filtered by tag: only the suites with a `nightly` case, which pass.
    let (code, stdout, stderr) = project_test(root, &["--tag", "nightly", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    let ran: Vec<&str> = summary["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["team-00", "team-03", "team-06", "team-09"]);

    // A duplicate id stops everything before it runs, naming both files.
    write(
        "evals/copy.fixture.json",
        &serde_json::from_str::<Value>(&suite("team-04", 1)).unwrap(),
    );
    let (code, _, stderr) = project_test(root, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("suite id `team-04` is used by two fixtures:")
            && stderr.contains("evals/copy.fixture.json")
            && stderr.contains("evals/team/suite-04.fixture.json"),
        "{stderr}"
    );
}
