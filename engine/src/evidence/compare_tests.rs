use super::*;

fn side(run: &str) -> Side {
    Side {
        run: run.into(),
        variant: None,
        suite_id: "s".into(),
        started_at: None,
        targets: Vec::new(),
        stats: Stats::default(),
    }
}

fn cell(case: &str, status: &str, scores: &[(&str, f64)]) -> Cell {
    Cell {
        variant: String::new(),
        case_id: case.into(),
        status: status.into(),
        scores: scores
            .iter()
            .map(|(n, s)| (n.to_string(), Some(*s)))
            .collect(),
    }
}

#[test]
fn a_case_verdict_is_the_worst_of_its_trials() {
    assert_eq!(verdict(&["passed", "passed"]), "passed");
    assert_eq!(verdict(&["passed", "failed"]), "failed");
    assert_eq!(verdict(&["failed", "errored", "passed"]), "errored");
    assert_eq!(verdict(&["unchecked", "degraded"]), "degraded");
    assert_eq!(verdict(&[]), "");
}

#[test]
fn changed_verdicts_come_first_then_moved_scores_then_one_sided_cases() {
    let a = [
        cell("fix", "failed", &[("contains", 0.0)]),
        cell("steady", "passed", &[("contains", 1.0)]),
        cell("drift", "passed", &[("similar", 0.9)]),
        cell("broke", "passed", &[("contains", 1.0)]),
        cell("gone", "passed", &[]),
        cell("small", "passed", &[("similar", 0.8)]),
    ];
    let b = [
        cell("fix", "passed", &[("contains", 1.0)]),
        cell("steady", "passed", &[("contains", 1.0)]),
        cell("drift", "passed", &[("similar", 0.7)]),
        cell("broke", "errored", &[]),
        cell("new", "failed", &[]),
        cell("small", "passed", &[("similar", 0.85)]),
    ];
    let c = compare_cells(side("A"), &a, side("B"), &b);
    let ids = |list: &[CaseChange]| list.iter().map(|c| c.case_id.clone()).collect::<Vec<_>>();
    // Regressed before fixed, whatever the order in the run.
    assert_eq!(ids(&c.changed), ["broke", "fix"]);
    assert_eq!(c.changed[0].change, "regressed");
    assert_eq!(c.changed[0].after.as_deref(), Some("errored"));
    assert_eq!(c.changed[1].change, "fixed");
    assert_eq!(c.changed[1].score.delta, Some(1.0));
    assert_eq!((c.regressed, c.fixed, c.unchanged), (1, 1, 1));
    // The larger move first.
    assert_eq!(ids(&c.score_moved), ["drift", "small"]);
    assert!((c.score_moved[0].score.delta.unwrap() + 0.2).abs() < 1e-9);
    assert_eq!(ids(&c.added), ["new"]);
    assert_eq!(ids(&c.removed), ["gone"]);
    // Per assertion: contains 2/3 → 2/2 scored values; similar the same n.
    let contains = c.assertions.iter().find(|d| d.name == "contains").unwrap();
    assert_eq!(contains.a.unwrap().n, 3);
    assert_eq!(contains.b.unwrap().n, 2);
    assert!((contains.delta.unwrap() - (1.0 - 2.0 / 3.0)).abs() < 1e-9);
    let similar = c.assertions.iter().find(|d| d.name == "similar").unwrap();
    assert!((similar.delta.unwrap() - (-0.075)).abs() < 1e-9);
}

#[test]
fn trials_count_in_the_verdict_and_its_passes() {
    let a = [cell("c", "passed", &[]), cell("c", "passed", &[])];
    let b = [cell("c", "passed", &[]), cell("c", "failed", &[])];
    let c = compare_cells(side("A"), &a, side("B"), &b);
    assert_eq!(c.changed.len(), 1);
    assert_eq!(c.changed[0].before_passed.as_deref(), Some("2/2"));
    assert_eq!(c.changed[0].after_passed.as_deref(), Some("1/2"));
}

#[test]
fn deltas_need_both_sides() {
    assert_eq!(Delta::of(Some(1.0), Some(3.0)).delta, Some(2.0));
    assert_eq!(Delta::of(None, Some(3.0)).delta, None);
}
