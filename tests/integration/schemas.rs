//! The committed JSON Schemas match what generates them: the host's
//! (`schemas/`, from its Rust types and the built-in presets' contracts)
//! and the built-in presets' (`schemas/presets/`, from the types in
//! `preset_schemas.rs`, which the presets publish as they are). Real
//! packets validate against them (checked with the built-in `is-json`
//! scorer, so the schemas are usable by the tool itself).
//!
//! After changing a type, regenerate with
//! `CAUTILUS_BLESS=1 cargo test --test integration schemas` (twice when a
//! preset's file changed: the presets embed the committed files).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{eval_run, registry, repo, run, score};

fn catalog() -> cautilus::schema::Catalog {
    cautilus::schema::Catalog::builtin(registry()).unwrap()
}

/// The committed file of schema `id`: the host's, else a built-in preset's.
fn committed(id: &str) -> PathBuf {
    let file = cautilus::schema::file_name(id);
    let host = repo().join("schemas").join(&file);
    if host.exists() {
        host
    } else {
        repo().join("schemas/presets").join(file)
    }
}

fn pretty(schema: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(schema).unwrap())
}

fn generated(id: &str) -> String {
    pretty(&catalog().schema(id).unwrap())
}

/// The ids whose schema the host composes or owns (written to `schemas/`).
const HOST_FILES: &[&str] = &[
    "cautilus.evaluation_input.v1",
    "cautilus.evaluation_summary.v1",
    "cautilus.config.v1",
    "cautilus.manifest.v1",
    "cautilus.project_summary.v1",
    "cautilus.experiment.v1",
    "cautilus.baseline.v1",
    "cautilus.run_list.v1",
    "cautilus.run_detail.v1",
    "cautilus.cell_evidence.v1",
    "cautilus.evidence_comparison.v1",
    "cautilus.suite_progress.v1",
    "cautilus.serve.run_page.v1",
    "cautilus.serve.run_cases.v1",
    "cautilus.serve.case_outputs.v1",
    "cautilus.serve.source_lines.v1",
    "cautilus.serve.live.v1",
    "cautilus.serve.error.v1",
];

#[test]
fn committed_schemas_match_the_types() {
    let bless = std::env::var_os("CAUTILUS_BLESS").is_some();
    let mut stale = Vec::new();
    let mut check = |path: PathBuf, want: String| {
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            stale.push(path.display().to_string());
        }
    };
    for id in HOST_FILES {
        check(
            repo().join("schemas").join(cautilus::schema::file_name(id)),
            generated(id),
        );
    }
    let presets = crate::preset_schemas::generated();
    for (path, schema) in &presets {
        check(repo().join("schemas").join(path), pretty(schema));
        // The app presets' files ship inside the SDK (`cautilus_sdk::app`
        // embeds them; a published crate cannot reach ../schemas).
        if let Some(file) = sdk_copy(path) {
            check(repo().join("sdk/schemas").join(file), pretty(schema));
        }
    }
    assert!(
        stale.is_empty(),
        "out of date (regenerate with `CAUTILUS_BLESS=1 cargo test --test integration schemas`): {stale:?}"
    );
    // Nothing else lives in schemas/; every published schema is committed.
    let files = std::fs::read_dir(repo().join("schemas")).unwrap().count();
    assert_eq!(
        files,
        HOST_FILES.len() + 1,
        "schemas/: the host's files and presets/"
    );
    let preset_files = std::fs::read_dir(repo().join("schemas/presets"))
        .unwrap()
        .count();
    assert_eq!(preset_files, presets.len());
    let sdk_files = std::fs::read_dir(repo().join("sdk/schemas"))
        .unwrap()
        .count();
    assert_eq!(
        sdk_files,
        presets
            .iter()
            .filter(|(p, _)| sdk_copy(p).is_some())
            .count(),
        "sdk/schemas/: the app presets' files only"
    );
    for id in catalog().ids() {
        assert!(
            committed(&id).exists(),
            "{id} is published but not committed"
        );
    }
}

/// The file name under `sdk/schemas/` of the preset schema at `path`
/// (relative to `schemas/`), when it is one of the app presets'.
fn sdk_copy(path: &str) -> Option<&str> {
    let file = path.strip_prefix("presets/")?;
    (file.starts_with("app-") || file.starts_with("cautilus.app_")).then_some(file)
}

/// Validates `document` against the committed schema `id`.
pub(crate) fn validates(id: &str, document: &Value) -> Result<(), String> {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(committed(id)).unwrap()).unwrap();
    let verdict = score(
        "is-json",
        json!({ "value": schema }),
        &document.to_string(),
        None,
    );
    match verdict.passed {
        Some(true) => Ok(()),
        _ => Err(verdict.detail.unwrap_or_default()),
    }
}

fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    if path.extension().is_some_and(|e| e == "yaml") {
        serde_yaml_ng::from_str(&text).unwrap()
    } else {
        serde_json::from_str(&text).unwrap()
    }
}

#[test]
fn proof_fixtures_and_their_packets_validate() {
    let proofs = [
        ("fixtures/eval/app/prompt/tagline.fixture.json", None, None),
        ("fixtures/eval/app/chat/onboarding.fixture.yaml", None, None),
        (
            "fixtures/eval/repo/whole-repo/agents-routing.fixture.json",
            Some("fixtures/eval/repo/whole-repo/fixture-results.json"),
            None,
        ),
        (
            "fixtures/eval/repo/skill/release-notes.fixture.json",
            Some("fixtures/eval/repo/skill/fixture-results.json"),
            Some("fixtures/eval/repo/skill/workspace"),
        ),
    ];
    for (fixture, results, workspace) in proofs {
        let fixture_path = repo().join(fixture);
        validates("cautilus.evaluation_input.v1", &load(&fixture_path))
            .unwrap_or_else(|e| panic!("{fixture}: {e}"));
        let out = tempfile::tempdir().unwrap();
        let workspace = repo().join(workspace.unwrap_or("."));
        let mut args = vec![
            "eval".to_string(),
            "test".into(),
            "--provider".into(),
            "fixture".into(),
            "--fixture".into(),
            fixture_path.display().to_string(),
            "--workspace".into(),
            workspace.display().to_string(),
            "--output-dir".into(),
            out.path().display().to_string(),
        ];
        if let Some(results) = results {
            args.push("--fixture-results".into());
            args.push(repo().join(results).display().to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{fixture}: {stdout}{stderr}");
        for file in ["eval-observed.json", "eval-summary.json"] {
            let packet = load(&out.path().join(file));
            let id = packet["schemaVersion"].as_str().unwrap().to_string();
            validates(&id, &packet).unwrap_or_else(|e| panic!("{fixture} {file}: {e}"));
            // The skill preset's declared identity fields reach the header.
            if id.starts_with("cautilus.skill_") {
                assert_eq!(packet["skillId"], "release-notes", "{file}");
                assert_eq!(packet["skillDisplayName"], "Release notes", "{file}");
            }
        }
    }
}

#[test]
fn blocked_repo_cases_still_write_valid_packets() {
    // No canned observations: every whole-repo case is blocked (exit 1, defer).
    let out = tempfile::tempdir().unwrap();
    let fixture = repo().join("fixtures/eval/repo/whole-repo/agents-routing.fixture.json");
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--provider",
        "fixture",
        "--fixture",
        &fixture.display().to_string(),
        "--workspace",
        &repo().display().to_string(),
        "--output-dir",
        &out.path().display().to_string(),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("BLOCK"), "{stdout}");
    for file in ["eval-observed.json", "eval-summary.json"] {
        let packet = load(&out.path().join(file));
        let id = packet["schemaVersion"].as_str().unwrap().to_string();
        validates(&id, &packet).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

#[test]
fn schemas_reject_what_the_tool_rejects() {
    let mut fixture = load(&repo().join("fixtures/eval/app/prompt/tagline.fixture.json"));
    fixture["cases"][0]["inptu"] = json!("typo");
    let error = validates("cautilus.evaluation_input.v1", &fixture).unwrap_err();
    assert!(!error.is_empty());
    let mut cross_axis = load(&repo().join("fixtures/eval/app/prompt/tagline.fixture.json"));
    cross_axis["surface"] = json!("repo");
    assert!(validates("cautilus.evaluation_input.v1", &cross_axis).is_err());

    let observed = load(&repo().join("fixtures/eval/app/prompt/observed.example.json"));
    validates("cautilus.app_prompt_evaluation_inputs.v1", &observed).unwrap();
    let mut missing = observed.clone();
    missing["evaluations"][0]
        .as_object_mut()
        .unwrap()
        .remove("harness");
    assert!(validates("cautilus.app_prompt_evaluation_inputs.v1", &missing).is_err());
}

#[test]
fn the_cli_prints_each_schema() {
    let (code, stdout, _) = run(&["schema"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), catalog().ids().len());
    // A preset's packet schema comes from the preset (its committed file).
    let (code, stdout, _) = run(&["schema", "cautilus.skill_evaluation_inputs.v1"]);
    assert_eq!(code, 0);
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(committed("cautilus.skill_evaluation_inputs.v1")).unwrap(),
    )
    .unwrap();
    assert_eq!(printed, file);
    let (code, stdout, _) = run(&["schema", "cautilus.evaluation_input.v1"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, generated("cautilus.evaluation_input.v1"));
    let (code, _, stderr) = run(&["schema", "cautilus.nope.v1"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no schema `cautilus.nope.v1`; known:"),
        "{stderr}"
    );
}

#[test]
fn composed_fixtures_validate() {
    for file in [
        "fixtures/eval/compose/extends/base.fixture.json",
        "fixtures/eval/compose/extends/child.fixture.json",
        "fixtures/eval/compose/discovery/suite.yaml",
        "fixtures/eval/compose/case-files/csv.fixture.yaml",
        "fixtures/eval/compose/steps/two-step.fixture.yaml",
        "fixtures/eval/compose/steps/whole-output.fixture.yaml",
        "fixtures/eval/compose/snapshot/snapshot.fixture.yaml",
        "fixtures/eval/compose/case-dirs/suite.fixture.yaml",
        "fixtures/eval/assertions/scorers.fixture.yaml",
        "fixtures/eval/assertions/host-checks.fixture.yaml",
        "fixtures/eval/assertions/retrieval/retrieval.fixture.yaml",
        "fixtures/eval/assertions/judge-modes/judge-modes.fixture.yaml",
    ] {
        validates("cautilus.evaluation_input.v1", &load(&repo().join(file)))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

#[test]
fn a_steps_run_summary_validates() {
    for fixture in ["two-step.fixture.yaml", "stops.fixture.yaml"] {
        let run = eval_run(
            &repo().join("fixtures/eval/compose/steps").join(fixture),
            &[],
        );
        assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        let summary = run.packet("eval-summary.json");
        validates("cautilus.evaluation_summary.v1", &summary)
            .unwrap_or_else(|e| panic!("{fixture}: {e}"));
    }
}

#[test]
fn an_experiment_fixture_and_its_record_validate() {
    let fixture = repo().join("fixtures/eval/experiments/greeting-variants.fixture.yaml");
    validates("cautilus.evaluation_input.v1", &load(&fixture)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--fixture",
        &fixture.display().to_string(),
        "--workspace",
        &out.path().display().to_string(),
        "--output-dir",
        &out.path().join("run").display().to_string(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let record = load(&out.path().join("run/experiment.json"));
    validates("cautilus.experiment.v1", &record).unwrap();
    let mut broken = record.clone();
    broken["cells"][0]["trial"] = json!("first");
    assert!(validates("cautilus.experiment.v1", &broken).is_err());

    let promoted = crate::support::cautilus()
        .current_dir(out.path())
        .args(["eval", "promote", "run"])
        .output()
        .unwrap();
    assert!(promoted.status.success(), "{promoted:?}");
    let baseline = load(
        &out.path()
            .join(".cautilus/baselines/greeting-variants.json"),
    );
    validates("cautilus.baseline.v1", &baseline).unwrap();
}

#[test]
fn judged_and_retrieval_packets_validate() {
    for fixture in [
        "fixtures/eval/assertions/judge-modes/judge-modes.fixture.yaml",
        "fixtures/eval/assertions/retrieval/retrieval.fixture.yaml",
    ] {
        let out = tempfile::tempdir().unwrap();
        let (code, stdout, stderr) = run(&[
            "eval",
            "test",
            "--fixture",
            &repo().join(fixture).display().to_string(),
            "--output-dir",
            &out.path().display().to_string(),
        ]);
        assert!(code == 0 || code == 1, "{fixture}: {stdout}{stderr}");
        let summary = load(&out.path().join("eval-summary.json"));
        validates("cautilus.app_prompt_evaluation_summary.v1", &summary)
            .unwrap_or_else(|e| panic!("{fixture}: {e}"));
    }
}
