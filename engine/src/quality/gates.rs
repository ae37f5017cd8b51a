//! Gates: the fixture's declarative pass policy, which sets the exit code.
//!
//! ```yaml
//! gates:
//!   passRate: { min: 0.9 }
//!   scores:
//!     levenshtein: { min: 0.8, max: 1.0, minDeltaVsBaseline: 0.0, minDeltaCiLow: -0.05 }
//!   latency: { p95Ms: 2000, meanMs: 800 }
//!   cost: { maxPerCaseUsd: 0.02, maxTotalUsd: 1.5 }
//!   consistency: { passAtK: 0.95, passAllTrials: 0.8 }
//! ```
//!
//! Without gates the default policy holds: assertions gate, scores inform
//! (a variant fails when any of its cells is not `accept-now`: an
//! expectation or required assertion failed, or the cell errored or was
//! blocked). Declared gates replace it. Either way, errored cells always
//! fail the run; gates apply to every variant but the baseline; a filtered
//! or sharded run (`--case`, `--variant`, `--tag`, `only`, `--shard`)
//! demotes declared gates to informational (they measure the whole suite),
//! while the default policy still holds over the cells that ran (a cell
//! that did not pass fails the whole run too, so a part's exit code never
//! contradicts the whole's); a delta gate with no baseline to compare with
//! is informational, never blocking.

use super::aggregate::{Aggregate, Comparison};

pub use super::gate_spec::{Gates, Problem, ScoreGate, parse};

/// One gate's result for one variant: the record's own type.
pub use crate::schema::experiment::Gate as GateResult;

/// How a number reads in a message: at most four decimals, no trailing zeros.
fn show(value: f64) -> String {
    let text = format!("{value:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// What the gates of `variant` conclude.
pub struct Judged<'a> {
    pub variant: &'a str,
    pub aggregate: &'a Aggregate,
    /// Against the baseline, when there is one for this variant.
    pub comparison: Option<&'a Comparison>,
    pub filtered: bool,
}

/// The errored-cells rule: always blocking.
pub fn errored(variant: &str, aggregate: &Aggregate) -> GateResult {
    let errored = aggregate.count("errored");
    GateResult {
        variant: variant.into(),
        gate: "errored".into(),
        value: Some(errored as f64),
        threshold: Some(0.0),
        passed: errored == 0,
        informational: false,
        message: if errored == 0 && aggregate.assertions_errored > 0 {
            // Not a blocking error (optional, or beside a failure), but
            // never a plain "nothing errored".
            format!(
                "no cell errored, but {} assertion{} in {} cell{} could not be carried out (optional, or beside a failure; see those cells)",
                aggregate.assertions_errored,
                if aggregate.assertions_errored == 1 {
                    ""
                } else {
                    "s"
                },
                aggregate.cells_with_errored_assertions,
                if aggregate.cells_with_errored_assertions == 1 {
                    ""
                } else {
                    "s"
                },
            )
        } else if errored == 0 {
            "no cell errored".into()
        } else {
            format!(
                "{errored} of {} cells errored (a check or the provider broke, so the answer was never judged)",
                aggregate.cells
            )
        },
    }
}

/// The default policy (no gates declared): every cell accepted.
pub fn default_policy(judged: &Judged<'_>) -> GateResult {
    let a = judged.aggregate;
    let statuses: Vec<String> = a
        .statuses
        .iter()
        .filter(|(s, _)| s != "passed")
        .map(|(s, n)| format!("{n} {s}"))
        .collect();
    GateResult {
        variant: judged.variant.into(),
        gate: "assertions".into(),
        value: Some(a.not_accepted as f64),
        threshold: Some(0.0),
        passed: a.not_accepted == 0,
        informational: false,
        message: if a.not_accepted == 0 {
            format!(
                "all {} cells passed their expectations and assertions",
                a.cells
            )
        } else {
            format!(
                "{} of {} cells did not pass ({})",
                a.not_accepted,
                a.cells,
                statuses.join(", ")
            )
        },
    }
}

/// The results of the declared `gates` for one variant.
pub fn evaluate(gates: &Gates, judged: &Judged<'_>) -> Vec<GateResult> {
    let a = judged.aggregate;
    let mut out = Vec::new();
    let mut push =
        |gate: String, value: Option<f64>, threshold: f64, floor: bool, what: &str, unit: &str| {
            let (passed, message) = match value {
                None => (
                    false,
                    format!("{what}: nothing to measure (no cell reported it)"),
                ),
                Some(v) if floor => (
                    v >= threshold,
                    if v >= threshold {
                        format!(
                            "{what} {}{unit} meets the {}{unit} floor",
                            show(v),
                            show(threshold)
                        )
                    } else {
                        format!(
                            "{what} {}{unit} is below the {}{unit} floor",
                            show(v),
                            show(threshold)
                        )
                    },
                ),
                Some(v) => (
                    v <= threshold,
                    if v <= threshold {
                        format!(
                            "{what} {}{unit} is within the {}{unit} limit",
                            show(v),
                            show(threshold)
                        )
                    } else {
                        format!(
                            "{what} {}{unit} is above the {}{unit} limit",
                            show(v),
                            show(threshold)
                        )
                    },
                ),
            };
            out.push(GateResult {
                variant: judged.variant.into(),
                gate,
                value,
                threshold: Some(threshold),
                passed,
                informational: judged.filtered,
                message,
            });
        };
    if let Some(min) = gates.pass_rate_min {
        push(
            "passRate.min".into(),
            a.pass_rate,
            min,
            true,
            "pass rate",
            "",
        );
    }
    for (name, gate) in &gates.scores {
        let mean = a.score(name).map(|s| s.mean);
        let what = format!("score `{name}` mean");
        if let Some(min) = gate.min {
            push(format!("scores.{name}.min"), mean, min, true, &what, "");
        }
        if let Some(max) = gate.max {
            push(format!("scores.{name}.max"), mean, max, false, &what, "");
        }
        let delta = judged.comparison.and_then(|c| c.score(name));
        if let Some(min) = gate.min_delta_vs_baseline {
            push(
                format!("scores.{name}.minDeltaVsBaseline"),
                delta.map(|d| d.mean_delta),
                min,
                true,
                &format!("score `{name}` delta vs the baseline"),
                "",
            );
        }
        if let Some(min) = gate.min_delta_ci_low {
            push(
                format!("scores.{name}.minDeltaCiLow"),
                delta.map(|d| d.ci_low),
                min,
                true,
                &format!("score `{name}` delta's 95% interval low end"),
                "",
            );
        }
    }
    if let Some(max) = gates.latency_p95_ms {
        push(
            "latency.p95Ms".into(),
            a.latency.map(|l| l.p95_ms),
            max,
            false,
            "latency p95",
            " ms",
        );
    }
    if let Some(max) = gates.latency_mean_ms {
        push(
            "latency.meanMs".into(),
            a.latency.map(|l| l.mean_ms),
            max,
            false,
            "latency mean",
            " ms",
        );
    }
    if let Some(max) = gates.first_byte_p95_ms {
        push(
            "latency.firstByteP95Ms".into(),
            a.first_byte.map(|l| l.p95_ms),
            max,
            false,
            "time to first byte p95",
            " ms",
        );
    }
    if let Some(max) = gates.cost_max_per_case_usd {
        push(
            "cost.maxPerCaseUsd".into(),
            a.cost.map(|c| c.max_cell_usd),
            max,
            false,
            "the costliest cell, USD",
            "",
        );
    }
    if let Some(max) = gates.cost_max_total_usd {
        push(
            "cost.maxTotalUsd".into(),
            a.cost.map(|c| c.total_usd),
            max,
            false,
            "total cost, USD",
            "",
        );
    }
    if let Some(min) = gates.pass_at_k {
        let value = a.pass_at_k.last().map(|(_, v)| *v);
        let k = a.pass_at_k.last().map_or(1, |(k, _)| *k);
        push(
            "consistency.passAtK".into(),
            value,
            min,
            true,
            &format!("pass@{k}"),
            "",
        );
    }
    if let Some(min) = gates.pass_all_trials {
        push(
            "consistency.passAllTrials".into(),
            a.all_trials_passed,
            min,
            true,
            "share of cases passing every trial",
            "",
        );
    }
    // A comparison with a baseline of a changed suite informs only.
    if let Some(comparison) = judged.comparison.filter(|c| c.informational) {
        for result in out.iter_mut().filter(|r| r.gate.contains(".minDelta")) {
            result.informational = true;
            result.message = format!(
                "{} (informational: the suite's cases or scoring changed since the baseline `{}` was promoted; promote it again)",
                result.message, comparison.baseline
            );
        }
    }
    // What cannot be measured is explained, and a missing baseline never blocks.
    for result in &mut out {
        if result.value.is_some() {
            continue;
        }
        if result.gate.contains(".minDelta") {
            result.informational = true;
            result.message = match judged.comparison {
                None => format!(
                    "{}: no baseline to compare with yet (declare a `baseline:` variant, or promote a run with `cautilus eval promote`); informational",
                    result.gate
                ),
                Some(_) => format!(
                    "{}: no pair of cells both scored it; informational",
                    result.gate
                ),
            };
        } else if let Some(name) = result
            .gate
            .strip_prefix("scores.")
            .and_then(|g| g.split('.').next())
        {
            let known: Vec<&str> = a.scores.iter().map(|(n, _)| n.as_str()).collect();
            result.message = format!(
                "no cell has a score named `{name}` (scores: {}); gate keys are assertion names",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::quality::aggregate::{CellFacts, aggregate, compare};

    fn cell(case: &str, status: &str, score: f64, ms: f64) -> CellFacts {
        CellFacts {
            duration_ms: Some(ms),
            ..crate::quality::aggregate::tests::cell(case, 1, status, &[("similar", score)])
        }
    }

    #[test]
    fn gates_parse_and_unknown_keys_are_named() {
        let gates = parse(&json!({
            "passRate": {"min": 0.7},
            "scores": {"similar": {"min": 0.5, "minDeltaVsBaseline": 0.1}},
            "latency": {"p95Ms": 100},
            "consistency": {"passAllTrials": true}
        }))
        .unwrap();
        assert_eq!(gates.pass_rate_min, Some(0.7));
        assert_eq!(gates.scores[0].1.min_delta_vs_baseline, Some(0.1));
        assert_eq!(gates.pass_all_trials, Some(1.0));
        for (value, at, message) in [
            (
                json!({"passrate": {}}),
                "gates.passrate",
                "did you mean `passRate`?",
            ),
            (
                json!({"passRate": {"min": 1.5}}),
                "gates.passRate.min",
                "from 0 to 1",
            ),
            (
                json!({"scores": {"s": {"mni": 1}}}),
                "gates.scores.s.mni",
                "did you mean `min`?",
            ),
            (
                json!({"latency": {"p95Ms": "fast"}}),
                "gates.latency.p95Ms",
                "must be a number",
            ),
            (json!([]), "gates", "must be an object"),
        ] {
            let (path, got) = parse(&value).unwrap_err();
            assert_eq!(path, at, "{value}");
            assert!(got.contains(message), "{value}: {got}");
        }
    }

    #[test]
    fn gates_say_value_and_threshold() {
        let cells = vec![
            cell("a", "passed", 0.9, 10.0),
            cell("b", "failed", 0.2, 20.0),
            cell("c", "passed", 0.65, 30.0),
        ];
        let a = aggregate(&cells);
        let gates = parse(&json!({
            "passRate": {"min": 0.7},
            "scores": {"similar": {"min": 0.5, "minDeltaVsBaseline": 0.0}, "missing": {"min": 0.1}},
            "latency": {"p95Ms": 25}
        }))
        .unwrap();
        let judged = Judged {
            variant: "new",
            aggregate: &a,
            comparison: None,
            filtered: false,
        };
        let results = evaluate(&gates, &judged);
        let by = |g: &str| results.iter().find(|r| r.gate == g).unwrap();
        let pass_rate = by("passRate.min");
        assert!(pass_rate.blocks());
        assert_eq!(pass_rate.message, "pass rate 0.6667 is below the 0.7 floor");
        assert!(by("scores.similar.min").passed);
        let delta = by("scores.similar.minDeltaVsBaseline");
        assert!(!delta.passed && delta.informational, "{delta:?}");
        assert!(delta.message.contains("no baseline"), "{}", delta.message);
        let missing = by("scores.missing.min");
        assert!(missing.blocks());
        assert!(
            missing.message.contains("scores: similar"),
            "{}",
            missing.message
        );
        let latency = by("latency.p95Ms");
        assert_eq!(
            latency.message,
            "latency p95 29 ms is above the 25 ms limit"
        );

        // The time to first byte: gated when the cells have one, and
        // failing (never passing unmeasured) when none has.
        let gates_fb = parse(&json!({"latency": {"firstByteP95Ms": 15}})).unwrap();
        assert_eq!(gates_fb.names(), ["latency.firstByteP95Ms"]);
        let unmeasured = evaluate(&gates_fb, &judged);
        assert!(unmeasured[0].blocks());
        assert!(
            unmeasured[0].message.contains("nothing to measure"),
            "{}",
            unmeasured[0].message
        );
        let mut timed = cells.clone();
        for (cell, ms) in timed.iter_mut().zip([5.0, 10.0, 12.0]) {
            cell.first_byte_ms = Some(ms);
        }
        let timed_aggregate = aggregate(&timed);
        let within = evaluate(
            &gates_fb,
            &Judged {
                aggregate: &timed_aggregate,
                ..judged
            },
        );
        assert!(within[0].passed, "{}", within[0].message);
        assert_eq!(
            within[0].message,
            "time to first byte p95 11.8 ms is within the 15 ms limit"
        );

        // Filtered: shown, never blocking.
        let judged = Judged {
            filtered: true,
            ..judged
        };
        assert!(evaluate(&gates, &judged).iter().all(|r| !r.blocks()));
        // The default policy and the errored rule.
        assert!(default_policy(&judged).blocks());
        assert!(errored("new", &a).passed);
    }

    #[test]
    fn delta_gates_read_the_comparison() {
        let base = vec![cell("a", "passed", 0.5, 1.0), cell("b", "passed", 0.5, 1.0)];
        let new = vec![cell("a", "passed", 0.7, 1.0), cell("b", "passed", 0.9, 1.0)];
        let comparison = compare("base", &base, "new", &new);
        let a = aggregate(&new);
        let gates = parse(
            &json!({"scores": {"similar": {"minDeltaVsBaseline": 0.25, "minDeltaCiLow": 0.1}}}),
        )
        .unwrap();
        let judged = Judged {
            variant: "new",
            aggregate: &a,
            comparison: Some(&comparison),
            filtered: false,
        };
        let results = evaluate(&gates, &judged);
        assert!(results[0].passed, "{:?}", results[0]); // mean delta 0.3
        assert_eq!(
            results[0].message,
            "score `similar` delta vs the baseline 0.3 meets the 0.25 floor"
        );
        assert!(results[1].passed, "{:?}", results[1]); // deltas 0.2 and 0.4
    }
}
