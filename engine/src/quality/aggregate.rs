//! What a variant's cells add up to, and how a candidate variant compares
//! with the baseline, cell by cell.
//!
//! A cell is one case × variant × trial. Its facts (status, scores,
//! latency, usage, cost) are read from the summary evaluation the run
//! wrote for it, and only those facts are held: a run of 100,000 cells
//! keeps about a hundred bytes a cell here, never the outputs.
//!
//! - Per variant: pass rate, mean ± SEM per score (the assertions' names
//!   are the keys; several assertions of one name in a cell count as their
//!   mean), pass@k and pass^k for k up to the trials run, the share of
//!   cases that passed every trial, latency mean/p50/p95, token and cost
//!   totals.
//! - Candidate vs baseline: cells paired by (case, trial); per score the
//!   mean delta ± SEM with a 95% interval, the pass-rate delta, and
//!   McNemar's exact test on the pass/fail pairs.

use std::collections::HashMap;

use serde_json::Value;

use super::stats::{self, MeanSem, Paired};

/// One cell's facts.
#[derive(Debug, Clone, PartialEq)]
pub struct CellFacts {
    pub case_id: String,
    pub trial: u32,
    pub status: String,
    /// The case's recommendation (`accept-now`, `defer`, `reject`).
    pub recommendation: String,
    /// Score by assertion name, in the order first seen.
    pub scores: Vec<(String, f64)>,
    /// Names of assertions that gave no score in this cell (they errored,
    /// or the case was never answered): what drops out of `scores`.
    pub unscored: Vec<String>,
    /// Its assertions that could not be carried out (status `errored`).
    pub assertions_errored: u64,
    pub duration_ms: Option<f64>,
    /// The host's time to first byte of the answer (HTTP providers).
    pub first_byte_ms: Option<f64>,
    pub cost_usd: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl CellFacts {
    /// The facts of a summary evaluation (`evaluation`) of trial `trial`.
    pub fn from_evaluation(
        evaluation: &Value,
        trial: u32,
        status: &str,
        recommendation: &str,
    ) -> Self {
        let mut sums: Vec<(String, f64, u32)> = Vec::new();
        let assertions = evaluation.get("assertions");
        for assertion in assertions.and_then(Value::as_array).into_iter().flatten() {
            let (Some(name), Some(score)) = (
                assertion.get("name").and_then(Value::as_str),
                assertion.get("score").and_then(Value::as_f64),
            ) else {
                continue;
            };
            match sums.iter_mut().find(|(n, _, _)| n == name) {
                Some((_, sum, count)) => {
                    *sum += score;
                    *count += 1;
                }
                None => sums.push((name.to_string(), score, 1)),
            }
        }
        let usage = evaluation.get("usage");
        let tokens = |keys: &[&str]| -> u64 {
            keys.iter()
                .find_map(|k| usage.and_then(|u| u.get(*k)).and_then(Value::as_u64))
                .unwrap_or(0)
        };
        Self {
            case_id: evaluation
                .get("caseId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            trial,
            status: status.to_string(),
            recommendation: recommendation.to_string(),
            scores: sums
                .into_iter()
                .map(|(name, sum, count)| (name, sum / f64::from(count)))
                .collect(),
            unscored: unscored(assertions),
            assertions_errored: errored_in(assertions),
            duration_ms: evaluation.get("durationMs").and_then(Value::as_f64),
            first_byte_ms: evaluation.get("firstByteMs").and_then(Value::as_f64),
            cost_usd: evaluation.get("costUsd").and_then(Value::as_f64),
            input_tokens: tokens(&["inputTokens", "input_tokens"]),
            output_tokens: tokens(&["outputTokens", "output_tokens"]),
        }
    }

    /// The facts of a record's cell (an experiment's or a baseline's).
    pub fn from_record_cell(cell: &Value) -> Option<Self> {
        let usage = cell.get("usage");
        let tokens = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Some(Self {
            case_id: cell.get("caseId")?.as_str()?.to_string(),
            trial: u32::try_from(cell.get("trial")?.as_u64()?).ok()?,
            status: cell.get("status")?.as_str()?.to_string(),
            recommendation: cell
                .get("recommendation")
                .and_then(Value::as_str)
                .unwrap_or("defer")
                .to_string(),
            scores: cell
                .get("scores")
                .and_then(Value::as_object)
                .map(|s| {
                    s.iter()
                        .filter_map(|(name, v)| Some((name.clone(), v.as_f64()?)))
                        .collect()
                })
                .unwrap_or_default(),
            unscored: unscored(cell.get("assertions")),
            assertions_errored: errored_in(cell.get("assertions")),
            duration_ms: cell.get("durationMs").and_then(Value::as_f64),
            first_byte_ms: cell.get("firstByteMs").and_then(Value::as_f64),
            cost_usd: cell.get("costUsd").and_then(Value::as_f64),
            input_tokens: tokens("inputTokens"),
            output_tokens: tokens("outputTokens"),
        })
    }

    pub fn passed(&self) -> bool {
        self.status == "passed"
    }

    pub fn errored(&self) -> bool {
        self.status == "errored"
    }

    fn score(&self, name: &str) -> Option<f64> {
        self.scores.iter().find(|(n, _)| n == name).map(|(_, s)| *s)
    }
}

/// The names of the assertions in `assertions` (a summary evaluation's or
/// a record cell's list) that gave no score, each once.
fn unscored(assertions: Option<&Value>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for assertion in assertions.and_then(Value::as_array).into_iter().flatten() {
        if assertion.get("score").is_some_and(|s| !s.is_null()) {
            continue;
        }
        if let Some(name) = assertion.get("name").and_then(Value::as_str)
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_string());
        }
    }
    names
}

/// How many assertions of the list have status `errored`.
fn errored_in(assertions: Option<&Value>) -> u64 {
    assertions
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("status").and_then(Value::as_str) == Some("errored"))
        .count() as u64
}

/// A variant's aggregates.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    pub cells: usize,
    pub cases: usize,
    /// Cells by status, in the order first seen.
    pub statuses: Vec<(String, usize)>,
    /// Cells whose recommendation is not `accept-now`.
    pub not_accepted: usize,
    pub pass_rate: Option<f64>,
    pub scores: Vec<(String, MeanSem)>,
    /// Per assertion name, the cells where it gave no score (errored, or
    /// never evaluated), in the order first seen: what `scores` leaves out.
    pub dropped: Vec<(String, usize)>,
    /// Assertions that could not be carried out, over all cells (optional
    /// ones and those beside a failure included), and the cells they are in.
    pub assertions_errored: u64,
    pub cells_with_errored_assertions: usize,
    /// Most trials any case ran.
    pub trials: u32,
    /// (k, pass@k) and (k, pass^k) for k = 1..=trials, over the cases
    /// that ran at least k trials.
    pub pass_at_k: Vec<(u32, f64)>,
    pub pass_hat_k: Vec<(u32, f64)>,
    /// Share of cases that passed every trial they ran.
    pub all_trials_passed: Option<f64>,
    pub latency: Option<Latency>,
    /// The same statistics of the cells' time to first byte, when any cell
    /// has one.
    pub first_byte: Option<Latency>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: Option<Cost>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub n: usize,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

/// Mean, p50 and p95 of `times` (none when empty).
fn latency_of(mut times: Vec<f64>) -> Option<Latency> {
    times.sort_by(f64::total_cmp);
    stats::mean_sem(&times).map(|m| Latency {
        n: m.n,
        mean_ms: m.mean,
        p50_ms: stats::percentile(&times, 0.5).unwrap_or(m.mean),
        p95_ms: stats::percentile(&times, 0.95).unwrap_or(m.mean),
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Cells that reported a cost.
    pub cells: usize,
    pub total_usd: f64,
    pub max_cell_usd: f64,
}

impl Aggregate {
    pub fn count(&self, status: &str) -> usize {
        self.statuses
            .iter()
            .find(|(s, _)| s == status)
            .map_or(0, |(_, n)| *n)
    }

    pub fn score(&self, name: &str) -> Option<&MeanSem> {
        self.scores.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// Cells where assertion `name` gave no score.
    pub fn dropped(&self, name: &str) -> usize {
        self.dropped
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, d)| *d)
    }
}

/// The aggregates of one variant's cells.
pub fn aggregate(cells: &[CellFacts]) -> Aggregate {
    let mut statuses: Vec<(String, usize)> = Vec::new();
    let mut score_values: Vec<(String, Vec<f64>)> = Vec::new();
    let mut dropped: Vec<(String, usize)> = Vec::new();
    // Per case, in first-seen order (sums must not depend on hashing):
    // (trials run, trials passed).
    let mut case_at: HashMap<&str, usize> = HashMap::new();
    let mut per_case: Vec<(u64, u64)> = Vec::new();
    let mut durations = Vec::new();
    let mut first_bytes = Vec::new();
    let mut cost: Option<Cost> = None;
    let (mut input_tokens, mut output_tokens) = (0u64, 0u64);
    let mut trials = 0u32;
    for cell in cells {
        match statuses.iter_mut().find(|(s, _)| *s == cell.status) {
            Some((_, n)) => *n += 1,
            None => statuses.push((cell.status.clone(), 1)),
        }
        for (name, score) in &cell.scores {
            match score_values.iter_mut().find(|(n, _)| n == name) {
                Some((_, values)) => values.push(*score),
                None => score_values.push((name.clone(), vec![*score])),
            }
        }
        for name in &cell.unscored {
            match dropped.iter_mut().find(|(n, _)| n == name) {
                Some((_, d)) => *d += 1,
                None => dropped.push((name.clone(), 1)),
            }
        }
        let at = *case_at.entry(&cell.case_id).or_insert_with(|| {
            per_case.push((0, 0));
            per_case.len() - 1
        });
        per_case[at].0 += 1;
        per_case[at].1 += u64::from(cell.passed());
        // An errored cell's time says nothing of the answer's latency.
        if !cell.errored() {
            durations.extend(cell.duration_ms);
            first_bytes.extend(cell.first_byte_ms);
        }
        if let Some(usd) = cell.cost_usd {
            let c = cost.get_or_insert(Cost {
                cells: 0,
                total_usd: 0.0,
                max_cell_usd: 0.0,
            });
            c.cells += 1;
            c.total_usd += usd;
            c.max_cell_usd = c.max_cell_usd.max(usd);
        }
        input_tokens += cell.input_tokens;
        output_tokens += cell.output_tokens;
        trials = trials.max(cell.trial);
    }
    let passed = cells.iter().filter(|c| c.passed()).count();
    let k_max = per_case.iter().map(|(n, _)| *n).max().unwrap_or(0);
    let over_cases = |estimate: fn(u64, u64, u64) -> Option<f64>, k: u64| -> Option<f64> {
        let values: Vec<f64> = per_case
            .iter()
            .filter_map(|&(n, c)| estimate(n, c, k))
            .collect();
        stats::mean_sem(&values).map(|s| s.mean)
    };
    let pass_at_k = (1..=k_max)
        .filter_map(|k| Some((k as u32, over_cases(stats::pass_at_k, k)?)))
        .collect();
    let pass_hat_k = (1..=k_max)
        .filter_map(|k| Some((k as u32, over_cases(stats::pass_hat_k, k)?)))
        .collect();
    let all_trials_passed = (!per_case.is_empty())
        .then(|| per_case.iter().filter(|(n, c)| n == c).count() as f64 / per_case.len() as f64);
    let latency = latency_of(durations);
    let first_byte = latency_of(first_bytes);
    Aggregate {
        cells: cells.len(),
        cases: per_case.len(),
        statuses,
        not_accepted: cells
            .iter()
            .filter(|c| c.recommendation != "accept-now")
            .count(),
        pass_rate: (!cells.is_empty()).then(|| passed as f64 / cells.len() as f64),
        scores: score_values
            .into_iter()
            .filter_map(|(name, values)| Some((name, stats::mean_sem(&values)?)))
            .collect(),
        dropped,
        assertions_errored: cells.iter().map(|c| c.assertions_errored).sum(),
        cells_with_errored_assertions: cells.iter().filter(|c| c.assertions_errored > 0).count(),
        trials,
        pass_at_k,
        pass_hat_k,
        all_trials_passed,
        latency,
        first_byte,
        input_tokens,
        output_tokens,
        cost,
    }
}

/// A candidate variant against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub baseline: String,
    pub candidate: String,
    /// `run` (a variant of this run) or `committed` (a promoted baseline).
    pub source: &'static str,
    /// Shown, but its delta gates never block (a committed baseline of a
    /// suite that changed since).
    pub informational: bool,
    /// Cells present in both (by case and trial).
    pub pairs: usize,
    /// The candidate's cells without a baseline cell.
    pub unpaired: usize,
    /// Pass (1) / fail (0) deltas.
    pub pass_rate: Option<Paired>,
    pub mcnemar: stats::McNemar,
    /// Per score present in both cells of a pair.
    pub scores: Vec<(String, Paired)>,
}

impl Comparison {
    pub fn score(&self, name: &str) -> Option<&Paired> {
        self.scores.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }
}

/// A fixed seed per compared quantity, so a run's intervals reproduce.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcb29_f3a1_5eed_0001, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Compares `candidate`'s cells with `baseline`'s, paired by (case, trial).
pub fn compare(
    baseline_name: &str,
    baseline: &[CellFacts],
    candidate_name: &str,
    candidate: &[CellFacts],
) -> Comparison {
    let index: HashMap<(&str, u32), &CellFacts> = baseline
        .iter()
        .map(|c| ((c.case_id.as_str(), c.trial), c))
        .collect();
    let pairs: Vec<(&CellFacts, &CellFacts)> = candidate
        .iter()
        .filter_map(|c| Some((*index.get(&(c.case_id.as_str(), c.trial))?, c)))
        .collect();
    let pass = |c: &CellFacts| f64::from(u8::from(c.passed()));
    let (base_pass, cand_pass): (Vec<f64>, Vec<f64>) =
        pairs.iter().map(|(b, c)| (pass(b), pass(c))).unzip();
    let mut names: Vec<&str> = Vec::new();
    for (_, c) in &pairs {
        for (name, _) in &c.scores {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    let scores = names
        .into_iter()
        .filter_map(|name| {
            let (b, c): (Vec<f64>, Vec<f64>) = pairs
                .iter()
                .filter_map(|(b, c)| Some((b.score(name)?, c.score(name)?)))
                .unzip();
            Some((name.to_string(), stats::paired(&c, &b, seed(name))?))
        })
        .collect();
    Comparison {
        baseline: baseline_name.to_string(),
        candidate: candidate_name.to_string(),
        source: "run",
        informational: false,
        pairs: pairs.len(),
        unpaired: candidate.len() - pairs.len(),
        pass_rate: stats::paired(&cand_pass, &base_pass, seed("pass")),
        mcnemar: stats::mcnemar_exact(
            &pairs
                .iter()
                .map(|(b, c)| (b.passed(), c.passed()))
                .collect::<Vec<_>>(),
        ),
        scores,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A cell for tests: `trial`·100 ms, one cent, 10 + 5 tokens.
    pub(crate) fn cell(case: &str, trial: u32, status: &str, scores: &[(&str, f64)]) -> CellFacts {
        CellFacts {
            case_id: case.into(),
            trial,
            status: status.into(),
            recommendation: if status == "passed" {
                "accept-now"
            } else {
                "reject"
            }
            .into(),
            scores: scores.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            unscored: Vec::new(),
            assertions_errored: 0,
            duration_ms: Some(f64::from(trial) * 100.0),
            first_byte_ms: None,
            cost_usd: Some(0.01),
            input_tokens: 10,
            output_tokens: 5,
        }
    }

    #[test]
    fn facts_come_from_the_summary_evaluation() {
        let evaluation = json!({
            "caseId": "a", "status": "failed", "durationMs": 12, "firstByteMs": 5, "costUsd": 0.5,
            "usage": {"inputTokens": 7, "outputTokens": 3},
            "assertions": [
                {"name": "contains", "score": 1.0},
                {"name": "contains", "score": 0.0},
                {"name": "tool-called", "status": "uncaptured"},
                {"name": "levenshtein", "score": 0.25}
            ]
        });
        let facts = CellFacts::from_evaluation(&evaluation, 2, "failed", "reject");
        assert_eq!(facts.case_id, "a");
        assert_eq!(facts.trial, 2);
        assert_eq!(
            facts.scores,
            [
                ("contains".to_string(), 0.5),
                ("levenshtein".to_string(), 0.25)
            ]
        );
        assert_eq!(facts.duration_ms, Some(12.0));
        assert_eq!(facts.first_byte_ms, Some(5.0));
        assert_eq!(facts.cost_usd, Some(0.5));
        assert_eq!((facts.input_tokens, facts.output_tokens), (7, 3));
    }

    #[test]
    fn aggregates_by_hand() {
        // Case a: 3 trials, 2 pass; case b: 3 trials, 3 pass.
        let cells = vec![
            cell("a", 1, "passed", &[("s", 1.0)]),
            cell("a", 2, "failed", &[("s", 0.0)]),
            cell("a", 3, "passed", &[("s", 1.0)]),
            cell("b", 1, "passed", &[("s", 0.5)]),
            cell("b", 2, "passed", &[("s", 0.5)]),
            cell("b", 3, "passed", &[("s", 0.5)]),
        ];
        let a = aggregate(&cells);
        assert_eq!((a.cells, a.cases, a.trials), (6, 2, 3));
        assert_eq!(a.count("passed"), 5);
        assert_eq!(a.not_accepted, 1);
        assert!((a.pass_rate.unwrap() - 5.0 / 6.0).abs() < 1e-12);
        assert!((a.score("s").unwrap().mean - 0.5833333333333334).abs() < 1e-12);
        // pass@1 = mean(2/3, 1); pass@2 for a = 1 − C(1,2)/C(3,2) = 1.
        assert_eq!(a.pass_at_k[0].0, 1);
        assert!((a.pass_at_k[0].1 - (2.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert!((a.pass_at_k[1].1 - 1.0).abs() < 1e-12);
        // pass^2 for a = C(2,2)/C(3,2) = 1/3; for b = 1.
        assert!((a.pass_hat_k[1].1 - (1.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(a.all_trials_passed, Some(0.5));
        let latency = a.latency.unwrap();
        assert!((latency.mean_ms - 200.0).abs() < 1e-9);
        assert!((latency.p95_ms - 300.0).abs() < 1e-9);
        assert_eq!(a.first_byte, None, "no cell has a time to first byte");
        // Those that have one are counted on their own.
        let mut timed = cells.clone();
        timed[0].first_byte_ms = Some(40.0);
        timed[3].first_byte_ms = Some(20.0);
        let first_byte = aggregate(&timed).first_byte.unwrap();
        assert_eq!(first_byte.n, 2);
        assert!((first_byte.mean_ms - 30.0).abs() < 1e-9);
        assert!((first_byte.p50_ms - 30.0).abs() < 1e-9);
        let cost = a.cost.unwrap();
        assert!((cost.total_usd - 0.06).abs() < 1e-12);
        assert_eq!((a.input_tokens, a.output_tokens), (60, 30));
    }

    #[test]
    fn comparison_pairs_cells_by_case_and_trial() {
        let baseline = vec![
            cell("a", 1, "passed", &[("s", 0.5)]),
            cell("b", 1, "failed", &[("s", 0.0)]),
            cell("c", 1, "passed", &[("s", 1.0)]),
        ];
        let candidate = vec![
            cell("c", 1, "passed", &[("s", 1.0)]),
            cell("b", 1, "passed", &[("s", 1.0)]),
            cell("a", 1, "passed", &[("s", 0.75)]),
            cell("d", 1, "passed", &[("s", 1.0)]),
        ];
        let c = compare("base", &baseline, "new", &candidate);
        assert_eq!((c.pairs, c.unpaired), (3, 1));
        assert_eq!((c.mcnemar.regressions, c.mcnemar.improvements), (0, 1));
        let s = c.score("s").unwrap();
        assert!((s.mean_delta - (0.0 + 1.0 + 0.25) / 3.0).abs() < 1e-12);
        let pass = c.pass_rate.unwrap();
        assert!((pass.mean_delta - 1.0 / 3.0).abs() < 1e-12);
        // Deterministic: the same cells give the same interval.
        assert_eq!(compare("base", &baseline, "new", &candidate), c);
    }
}
