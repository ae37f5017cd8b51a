//! Tests of the run index and the runs kept read whole.

use super::*;

/// A finished plain run of suite `suite` whose one case has `status`.
fn run(root: &Path, name: &str, suite: &str, status: &str) -> RunRef {
    let dir = root.join("runs").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("run.json"),
        r#"{"status": "completed", "startedAt": "2026-01-01T00:00:00.000Z"}"#,
    )
    .unwrap();
    let summary = serde_json::json!({
        "suiteId": suite,
        "recommendation": "accept-now",
        "evaluations": [{
            "caseId": "c1", "status": status, "durationMs": 12.5, "costUsd": 0.1,
            "assertions": [{"name": "a", "status": status, "score": 0.3}],
        }],
    });
    std::fs::write(dir.join("eval-summary.json"), summary.to_string()).unwrap();
    RunRef {
        id: name.into(),
        dir,
    }
}

fn direct(run: &RunRef) -> RunSummary {
    RunSummary::of(run, &crate::report::load(&run.dir).unwrap())
}

fn same(a: &RunSummary, b: &RunSummary) {
    assert_eq!(
        serde_json::to_string(a).unwrap(),
        serde_json::to_string(b).unwrap()
    );
}

#[test]
fn a_saved_index_is_read_back_to_the_bit_and_a_changed_run_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let one = run(root, "20260101T000000000Z-0001", "s", "passed");
    let two = run(root, "20260102T000000000Z-0001", "t", "failed");
    let index = RunIndex::persisted(root);
    let first = index.summary(&one).unwrap();
    same(&first, &direct(&one));
    index.summary(&two).unwrap();
    index.settle(&[one.clone(), two.clone()]);
    assert_eq!(index.file(), Some(root.join("index").join(FILE).as_path()));

    // Read back: the same summaries, not read from the records (a
    // summary read from them would say `s`).
    let again = RunIndex::persisted(root);
    assert_eq!(again.lock().entries.len(), 2);
    same(&again.summary(&one).unwrap(), &first);

    // The run's final record changes (size and time): it is read again.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let changed = run(root, "20260101T000000000Z-0001", "s2", "failed");
    let now = again.summary(&changed).unwrap();
    assert_eq!(now.suite_id, "s2");
    same(&now, &direct(&changed));
    assert!(again.lock().dirty);
}

#[test]
fn an_entry_whose_stamp_differs_is_never_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let one = run(root, "20260101T000000000Z-0001", "s", "passed");
    let index = RunIndex::in_memory(root);
    // An entry made of other records (a stamp that is not the run's).
    let mut lying = direct(&one);
    lying.suite_id = "not-s".into();
    index.lock().entries.insert(
        one.id.clone(),
        (Stamp([Some((1, 2, 3)), None, None]), Ok(lying)),
    );
    assert_eq!(index.summary(&one).unwrap().suite_id, "s");
}

#[test]
fn a_damaged_or_foreign_index_file_is_ignored_and_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let one = run(root, "20260101T000000000Z-0001", "s", "passed");
    let file = root.join("index").join(FILE);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let index = RunIndex::persisted(root);
    index.summary(&one).unwrap();
    index.settle(std::slice::from_ref(&one));
    let sound = std::fs::read_to_string(&file).unwrap();
    let (head, body) = sound.split_once('\n').unwrap();
    for damaged in [
        format!("{head}\n{{\"id\": \"x\""),
        format!(
            "{head}\n{}",
            body.replace("\"suiteId\":\"s\"", "\"suiteId\":7")
        ),
        format!("{}\n{body}", head.replace(SCHEMA, "cautilus.run_index.v0")),
        format!(
            "{}\n{body}",
            head.replace("\"records\":\"", "\"records\":\"/elsewhere")
        ),
        "not json at all".to_string(),
        String::new(),
    ] {
        std::fs::write(&file, &damaged).unwrap();
        let index = RunIndex::persisted(root);
        assert!(index.lock().entries.is_empty(), "{damaged}");
        same(&index.summary(&one).unwrap(), &direct(&one));
        index.settle(std::slice::from_ref(&one));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), sound);
    }
}

#[test]
fn a_removed_run_leaves_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let one = run(root, "20260101T000000000Z-0001", "s", "passed");
    let two = run(root, "20260102T000000000Z-0001", "s", "failed");
    let index = RunIndex::persisted(root);
    index.summary(&one).unwrap();
    index.summary(&two).unwrap();
    index.settle(&[one.clone(), two.clone()]);
    std::fs::remove_dir_all(&one.dir).unwrap();
    index.settle(std::slice::from_ref(&two));
    let again = RunIndex::persisted(root);
    let ids: Vec<String> = again.lock().entries.keys().cloned().collect();
    assert_eq!(ids, [two.id.as_str()]);
}

#[test]
fn unreadable_runs_are_indexed_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let one = run(root, "20260101T000000000Z-0001", "s", "passed");
    std::fs::write(one.dir.join("eval-summary.json"), "{").unwrap();
    let index = RunIndex::persisted(root);
    let why = index.summary(&one).unwrap_err();
    assert!(why.starts_with("20260101T000000000Z-0001: "), "{why}");
    index.settle(std::slice::from_ref(&one));
    assert_eq!(RunIndex::persisted(root).summary(&one).unwrap_err(), why);
}

#[test]
fn loaded_runs_are_kept_until_they_change_or_are_let_go() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let one = run(root, "20260101T000000000Z-0001", "s", "passed");
    let loaded = LoadedRuns::default();
    let a = loaded.report(&one.dir).unwrap();
    assert!(Arc::ptr_eq(&a, &loaded.report(&one.dir).unwrap()));
    std::thread::sleep(std::time::Duration::from_millis(20));
    run(root, "20260101T000000000Z-0001", "s", "failed");
    let b = loaded.report(&one.dir).unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
    assert_eq!(b.cases[0].status, "failed");
    for k in 0..LOADED + 2 {
        let other = run(root, &format!("2026010{k}T000000000Z-0002"), "s", "passed");
        loaded.report(&other.dir).unwrap();
    }
    assert_eq!(loaded.runs.lock().unwrap().len(), LOADED);
    assert!(!Arc::ptr_eq(&b, &loaded.report(&one.dir).unwrap()));
}

#[test]
fn runs_summarized_at_once_are_the_ones_summarized_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let runs: Vec<RunRef> = (0..11)
        .map(|k| {
            let status = if k % 3 == 0 { "failed" } else { "passed" };
            run(root, &format!("202601{k:02}T000000000Z-0001"), "s", status)
        })
        .collect();
    std::fs::write(runs[4].dir.join("eval-summary.json"), "{").unwrap();
    let index = RunIndex::in_memory(root);
    // Some indexed already, the others read at once.
    index.summary(&runs[1]).unwrap();
    index.summary(&runs[7]).unwrap();
    let all = index.summaries(&runs);
    assert_eq!(all.len(), runs.len());
    for (run, known) in runs.iter().zip(&all) {
        match crate::report::load(&run.dir) {
            Ok(report) => same(known.as_ref().unwrap(), &RunSummary::of(run, &report)),
            Err(e) => assert_eq!(known.as_ref().unwrap_err(), &format!("{}: {e}", run.id)),
        }
    }
    assert_eq!(index.lock().entries.len(), runs.len());
    // Then from the index.
    let again = index.summaries(&runs);
    assert_eq!(format!("{again:?}"), format!("{all:?}"));
}

#[test]
fn a_suite_series_passes_over_runs_of_other_suites_without_reading_them_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let runs: Vec<RunRef> = (0..6)
        .map(|k| {
            let suite = if k % 2 == 0 { "s" } else { "t" };
            run(
                root,
                &format!("202601{k:02}T000000000Z-0001"),
                suite,
                "passed",
            )
        })
        .collect();
    std::fs::write(runs[5].dir.join("eval-summary.json"), "{").unwrap();
    let index = RunIndex::in_memory(root);
    index.summary(&runs[1]).unwrap();
    let of_s = index.summaries_of(&runs, Some("s"));
    for (k, (run, known)) in runs.iter().zip(&of_s).enumerate() {
        match k {
            // Indexed already: its summary, whatever its suite.
            1 => assert_eq!(known.as_ref().unwrap().as_ref().unwrap().suite_id, "t"),
            // Not JSON: read whole, and unreadable.
            5 => assert!(known.as_ref().unwrap().is_err()),
            3 => assert!(known.is_none(), "{k}"),
            _ => same(known.as_ref().unwrap().as_ref().unwrap(), &direct(run)),
        }
    }
    // Only the runs read whole are indexed.
    assert_eq!(index.lock().entries.len(), 5);
}
