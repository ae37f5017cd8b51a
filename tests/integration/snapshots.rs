//! C4 snapshot baselines through the real binary: a match passes, a
//! mismatch fails with a unified diff (in the summary and on the terminal),
//! a missing golden is an error pointing at `--update-snapshots`, which
//! writes and refreshes goldens and says which.

use std::path::{Path, PathBuf};

use crate::support::{eval_run, repo};

/// A scratch copy of `fixtures/eval/compose/snapshot/`, so runs may change
/// its goldens.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let from = repo().join("fixtures/eval/compose/snapshot");
    copy(&from, dir.path());
    let fixture = dir.path().join("snapshot.fixture.yaml");
    (dir, fixture)
}

fn copy(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir(&target).unwrap();
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn results(dir: &Path, json: &str) -> String {
    let path = dir.join("results.json");
    std::fs::write(&path, json).unwrap();
    path.display().to_string()
}

const SAME: &str = r#"{"snapshot-json": "{\"answer\": \"hello\", \"items\": [1, 2]}"}"#;
const CHANGED: &str = r#"{"snapshot-json": "{\"answer\": \"bye\", \"items\": [1, 2]}", "snapshot-text": "Other text."}"#;

#[test]
fn outputs_matching_their_goldens_pass() {
    let (dir, fixture) = scratch();
    let run = eval_run(&fixture, &["--fixture-results", &results(dir.path(), SAME)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let summary = run.packet("eval-summary.json");
    for evaluation in summary["evaluations"].as_array().unwrap() {
        assert_eq!(evaluation["match"], true, "{evaluation}");
    }
    // The golden text is frozen into the cases record.
    let cases = run.packet("eval-cases.json");
    assert_eq!(
        cases["cases"][0]["expected"]["snapshotText"],
        "Fixture response for snapshot-text."
    );
}

#[test]
fn a_mismatch_fails_with_a_unified_diff() {
    let (dir, fixture) = scratch();
    let run = eval_run(
        &fixture,
        &["--fixture-results", &results(dir.path(), CHANGED)],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let summary = run.packet("eval-summary.json");
    assert_eq!(summary["recommendation"], "reject");
    let text = &summary["evaluations"][0];
    assert_eq!(text["status"], "failed");
    assert_eq!(text["match"], false);
    assert_eq!(text["snapshotDiff"]["kind"], "text-equality");
    assert_eq!(text["snapshotDiff"]["actual"], "Other text.");
    let diff = text["snapshotDiff"]["diff"].as_str().unwrap();
    assert!(
        diff.starts_with("--- ./golden/snapshot-text.txt (snapshot)\n+++ actual output\n"),
        "{diff}"
    );
    assert!(
        diff.contains("-Fixture response for snapshot-text.\n"),
        "{diff}"
    );
    assert!(diff.contains("+Other text.\n"), "{diff}");
    // JSON goldens compare structurally; the diff shows the changed value.
    let json = &summary["evaluations"][1];
    assert_eq!(json["snapshotDiff"]["kind"], "json-equality");
    let diff = json["snapshotDiff"]["diff"].as_str().unwrap();
    assert!(
        diff.contains("-  \"answer\": \"hello\",\n+  \"answer\": \"bye\",\n"),
        "{diff}"
    );
    // And on the terminal.
    assert!(
        run.stdout
            .contains("FAIL  snapshot-text — final text differs from snapshot"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("+Other text."), "{}", run.stdout);
}

#[test]
fn a_missing_golden_is_an_error_until_written_on_request() {
    let (dir, fixture) = scratch();
    let golden = dir.path().join("golden/snapshot-text.txt");
    std::fs::remove_file(&golden).unwrap();
    let run = eval_run(&fixture, &["--fixture-results", &results(dir.path(), SAME)]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("cases[0].expected.snapshot: golden file"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--update-snapshots"), "{}", run.stderr);
    assert!(!golden.exists(), "no auto-init");

    let run = eval_run(
        &fixture,
        &[
            "--fixture-results",
            &results(dir.path(), SAME),
            "--update-snapshots",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("snapshot written: "), "{}", run.stderr);
    assert!(
        run.stderr.contains("(case `snapshot-text`)"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("snapshot-json`"),
        "unchanged goldens are not rewritten: {}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&golden).unwrap(),
        "Fixture response for snapshot-text."
    );

    // Refreshing rewrites changed goldens (JSON pretty-printed) and says so.
    let run = eval_run(
        &fixture,
        &[
            "--fixture-results",
            &results(dir.path(), CHANGED),
            "--update-snapshots",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stderr.matches("snapshot updated: ").count(),
        2,
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&golden).unwrap(), "Other text.");
    let json = std::fs::read_to_string(dir.path().join("golden/snapshot-json.json")).unwrap();
    assert_eq!(
        json,
        "{\n  \"answer\": \"bye\",\n  \"items\": [\n    1,\n    2\n  ]\n}\n"
    );
    let run = eval_run(
        &fixture,
        &["--fixture-results", &results(dir.path(), CHANGED)],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn golden_paths_must_stay_under_the_fixture_directory() {
    let (dir, fixture) = scratch();
    let text = std::fs::read_to_string(&fixture)
        .unwrap()
        .replace("./golden/snapshot-text.txt", "../outside.txt");
    std::fs::write(&fixture, text).unwrap();
    let run = eval_run(&fixture, &["--update-snapshots"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "cases[0].expected.snapshot: `../outside.txt` leaves the fixture's directory"
        ),
        "{}",
        run.stderr
    );
    assert!(!dir.path().parent().unwrap().join("outside.txt").exists());
}
