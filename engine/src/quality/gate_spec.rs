//! The gates a fixture declares (`gates:`), checked and parsed into
//! [`Gates`]: every threshold a number in its range, every problem naming
//! its JSON path. What they decide is [`super::gates`]'.

use serde_json::{Map, Value};

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
