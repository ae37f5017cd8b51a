//! The statistics of a run in the experiment record's own types
//! ([`crate::schema::experiment`], whose JSON Schema is what `schemas/`
//! publishes): the record is written by serializing these, so the schema
//! and the file cannot drift apart.

use crate::schema::experiment as record;
use indexmap::IndexMap;

use super::aggregate::{Aggregate, Comparison};
use super::stats;

impl Aggregate {
    /// The variant's aggregates as the record writes them. Each score says
    /// how many cells it dropped out of; a score every cell dropped is
    /// still listed, with no mean.
    pub fn to_record(&self) -> record::Aggregate {
        let mut scores: IndexMap<String, record::MeanSem> = self
            .scores
            .iter()
            .map(|(name, s)| {
                (
                    name.clone(),
                    record::MeanSem {
                        n: s.n as u64,
                        mean: Some(s.mean),
                        sem: s.sem,
                        dropped: self.dropped(name) as u64,
                    },
                )
            })
            .collect();
        for (name, dropped) in &self.dropped {
            scores
                .entry(name.clone())
                .or_insert_with(|| record::MeanSem {
                    n: 0,
                    mean: None,
                    sem: None,
                    dropped: *dropped as u64,
                });
        }
        let by_k = |list: &[(u32, f64)]| -> IndexMap<String, f64> {
            list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        let latency = |l: &super::aggregate::Latency| record::Latency {
            n: l.n as u64,
            mean_ms: l.mean_ms,
            p50_ms: l.p50_ms,
            p95_ms: l.p95_ms,
        };
        record::Aggregate {
            cells: self.cells as u64,
            cases: self.cases as u64,
            statuses: self
                .statuses
                .iter()
                .map(|(s, n)| (s.clone(), *n as u64))
                .collect(),
            pass_rate: self.pass_rate,
            assertions_errored: record::AssertionsErrored {
                assertions: self.assertions_errored,
                cells: self.cells_with_errored_assertions as u64,
            },
            scores,
            trials: self.trials,
            pass_at_k: by_k(&self.pass_at_k),
            pass_hat_k: by_k(&self.pass_hat_k),
            all_trials_passed: self.all_trials_passed,
            latency: self.latency.as_ref().map(latency),
            first_byte: self.first_byte.as_ref().map(latency),
            tokens: record::Tokens {
                input: self.input_tokens,
                output: self.output_tokens,
                total: self.input_tokens + self.output_tokens,
            },
            cost: self.cost.map(|c| record::Cost {
                cells: c.cells as u64,
                total_usd: c.total_usd,
                max_cell_usd: c.max_cell_usd,
            }),
        }
    }
}

impl Comparison {
    /// The comparison as the record writes it.
    pub fn to_record(&self) -> record::Comparison {
        record::Comparison {
            baseline: self.baseline.clone(),
            candidate: self.candidate.clone(),
            source: self.source.to_string(),
            informational: self.informational,
            pairs: self.pairs as u64,
            unpaired: self.unpaired as u64,
            pass_rate: self.pass_rate.as_ref().map(paired),
            mcnemar: record::McNemar {
                regressions: self.mcnemar.regressions,
                improvements: self.mcnemar.improvements,
                p_value: self.mcnemar.p_value,
            },
            scores: self
                .scores
                .iter()
                .map(|(n, p)| (n.clone(), paired(p)))
                .collect(),
        }
    }
}

fn paired(p: &stats::Paired) -> record::Paired {
    record::Paired {
        n: p.n as u64,
        mean_delta: p.mean_delta,
        sem: p.sem,
        ci_low: p.ci_low,
        ci_high: p.ci_high,
        ci_method: p.ci_method.as_str().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::quality::aggregate::{aggregate, tests::cell};

    #[test]
    fn the_record_keeps_the_order_scores_and_statuses_were_first_seen() {
        let mut dropped = cell("c", 2, "errored", &[("zeta", 0.5)]);
        dropped.unscored = vec!["alpha".into()];
        let cells = [
            cell("a", 1, "passed", &[("zeta", 1.0), ("beta", 0.0)]),
            cell("b", 1, "failed", &[("zeta", 0.0)]),
            dropped,
        ];
        let json = serde_json::to_string(&aggregate(&cells).to_record()).unwrap();
        let at = |key: &str| json.find(&format!("\"{key}\"")).unwrap();
        assert!(
            at("passed") < at("failed") && at("failed") < at("errored"),
            "{json}"
        );
        assert!(
            at("zeta") < at("beta") && at("beta") < at("alpha"),
            "{json}"
        );
    }
}
