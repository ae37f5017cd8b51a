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

use serde_json::{Map, Value};

use super::aggregate::{Aggregate, Comparison};
use crate::fixture::kind;

/// What the fixture's `gates` declare.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gates {
    pub pass_rate_min: Option<f64>,
    pub scores: Vec<(String, ScoreGate)>,
    pub latency_p95_ms: Option<f64>,
    pub latency_mean_ms: Option<f64>,
    /// p95 of the cells' time to first byte (`latency.firstByteP95Ms`).
    pub first_byte_p95_ms: Option<f64>,
    pub cost_max_per_case_usd: Option<f64>,
    pub cost_max_total_usd: Option<f64>,
    pub pass_at_k: Option<f64>,
    pub pass_all_trials: Option<f64>,
}

impl Gates {
    /// The declared gates by name (`passRate.min`, `scores.<name>.min` …),
    /// for the manifest.
    pub fn names(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut add = |set: bool, name: String| {
            if set {
                names.push(name);
            }
        };
        add(self.pass_rate_min.is_some(), "passRate.min".into());
        for (score, gate) in &self.scores {
            add(gate.min.is_some(), format!("scores.{score}.min"));
            add(gate.max.is_some(), format!("scores.{score}.max"));
            add(
                gate.min_delta_vs_baseline.is_some(),
                format!("scores.{score}.minDeltaVsBaseline"),
            );
            add(
                gate.min_delta_ci_low.is_some(),
                format!("scores.{score}.minDeltaCiLow"),
            );
        }
        add(self.latency_p95_ms.is_some(), "latency.p95Ms".into());
        add(self.latency_mean_ms.is_some(), "latency.meanMs".into());
        add(
            self.first_byte_p95_ms.is_some(),
            "latency.firstByteP95Ms".into(),
        );
        add(
            self.cost_max_per_case_usd.is_some(),
            "cost.maxPerCaseUsd".into(),
        );
        add(self.cost_max_total_usd.is_some(), "cost.maxTotalUsd".into());
        add(self.pass_at_k.is_some(), "consistency.passAtK".into());
        add(
            self.pass_all_trials.is_some(),
            "consistency.passAllTrials".into(),
        );
        names
    }
}

/// The bounds of one score.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScoreGate {
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_delta_vs_baseline: Option<f64>,
    /// The lower end of the delta's 95% interval must reach this.
    pub min_delta_ci_low: Option<f64>,
}

/// A problem in `gates`: (JSON path under the fixture, message).
pub type Problem = (String, String);

fn object<'a>(
    value: &'a Value,
    at: &str,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, Problem> {
    let Some(map) = value.as_object() else {
        return Err((
            at.into(),
            format!(
                "must be an object ({}), got {}",
                keys.join(", "),
                kind(value)
            ),
        ));
    };
    for key in map.keys() {
        if !keys.contains(&key.as_str()) {
            let hint = keys
                .iter()
                .min_by_key(|k| strsim::damerau_levenshtein(k, key))
                .filter(|k| strsim::damerau_levenshtein(k, key) <= 3)
                .map_or_else(
                    || format!("; use {}", keys.join(", ")),
                    |k| format!("; did you mean `{k}`?"),
                );
            return Err((format!("{at}.{key}"), format!("unknown gate `{key}`{hint}")));
        }
    }
    Ok(map)
}

fn number(
    map: &Map<String, Value>,
    key: &str,
    at: &str,
    unit: bool,
) -> Result<Option<f64>, Problem> {
    let Some(value) = map.get(key) else {
        return Ok(None);
    };
    let path = format!("{at}.{key}");
    match value.as_f64() {
        Some(n) if n.is_finite() && (!unit || (0.0..=1.0).contains(&n)) => Ok(Some(n)),
        Some(_) if unit => Err((path, format!("must be a number from 0 to 1, got {value}"))),
        _ => Err((path, format!("must be a number, got {}", kind(value)))),
    }
}

/// Reads `gates`.
pub fn parse(value: &Value) -> Result<Gates, Problem> {
    let map = object(
        value,
        "gates",
        &["passRate", "scores", "latency", "cost", "consistency"],
    )?;
    let mut gates = Gates::default();
    if let Some(pass) = map.get("passRate") {
        let pass = object(pass, "gates.passRate", &["min"])?;
        gates.pass_rate_min = number(pass, "min", "gates.passRate", true)?;
    }
    if let Some(scores) = map.get("scores") {
        let Some(scores) = scores.as_object() else {
            return Err((
                "gates.scores".into(),
                format!(
                    "must be an object keyed by score (assertion) name, got {}",
                    kind(scores)
                ),
            ));
        };
        for (name, bounds) in scores {
            let at = format!("gates.scores.{name}");
            let bounds = object(
                bounds,
                &at,
                &["min", "max", "minDeltaVsBaseline", "minDeltaCiLow"],
            )?;
            let gate = ScoreGate {
                min: number(bounds, "min", &at, false)?,
                max: number(bounds, "max", &at, false)?,
                min_delta_vs_baseline: number(bounds, "minDeltaVsBaseline", &at, false)?,
                min_delta_ci_low: number(bounds, "minDeltaCiLow", &at, false)?,
            };
            gates.scores.push((name.clone(), gate));
        }
    }
    if let Some(latency) = map.get("latency") {
        let latency = object(
            latency,
            "gates.latency",
            &["p95Ms", "meanMs", "firstByteP95Ms"],
        )?;
        gates.latency_p95_ms = number(latency, "p95Ms", "gates.latency", false)?;
        gates.latency_mean_ms = number(latency, "meanMs", "gates.latency", false)?;
        gates.first_byte_p95_ms = number(latency, "firstByteP95Ms", "gates.latency", false)?;
    }
    if let Some(cost) = map.get("cost") {
        let cost = object(cost, "gates.cost", &["maxPerCaseUsd", "maxTotalUsd"])?;
        gates.cost_max_per_case_usd = number(cost, "maxPerCaseUsd", "gates.cost", false)?;
        gates.cost_max_total_usd = number(cost, "maxTotalUsd", "gates.cost", false)?;
    }
    if let Some(consistency) = map.get("consistency") {
        let consistency = object(
            consistency,
            "gates.consistency",
            &["passAtK", "passAllTrials"],
        )?;
        gates.pass_at_k = number(consistency, "passAtK", "gates.consistency", true)?;
        gates.pass_all_trials = match consistency.get("passAllTrials") {
            Some(Value::Bool(true)) => Some(1.0),
            Some(Value::Bool(false)) => None,
            _ => number(consistency, "passAllTrials", "gates.consistency", true)?,
        };
    }
    Ok(gates)
}

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
