//! The retrieval scorers over [`cautilus_scorers_core::retrieval`]:
//! `hit-rate@k`, `recall@k`, `precision@k`, `mrr`, `ndcg@k`.

use cautilus_scorers_core::retrieval::{self, Metric, RetrievalConfig};
use cautilus_sdk::{ConfigSchema, PluginError, Score, ScoreInput, Scorer};
use serde_json::{Value, json};

use crate::{to_error, to_score, to_score_error};

fn schema() -> ConfigSchema {
    ConfigSchema::raw(json!({
        "type": "object",
        "properties": {
            "value": { "description": "the expected sources: ids or `{sourceId, chunkId?}` (default: the case's `expected.sources`)" },
            "k": { "type": "integer", "minimum": 1, "default": retrieval::DEFAULT_K },
            "select": { "type": "string", "description": "JSON pointer to the retrieved list in the output (default: the output itself, `/retrieved` or `/sources`)" },
            "threshold": { "type": "number", "minimum": 0, "maximum": 1 },
            "negate": { "type": "boolean" }
        },
        "additionalProperties": false
    }))
}

fn score(
    metric: Metric,
    config: &RetrievalConfig,
    input: &ScoreInput,
) -> Result<Score, PluginError> {
    // Structured output that is JSON the parser cannot hold is not read
    // as absent (that would score the final text instead): unchecked.
    let structured: Option<Value> = match input.observation.structured.as_deref() {
        None => None,
        Some(text) => match cautilus_scorers_core::json::parse(text) {
            cautilus_scorers_core::json::Parsed::Value(value) => Some(value),
            cautilus_scorers_core::json::Parsed::NotJson(_) => None,
            cautilus_scorers_core::json::Parsed::Unparsable(why) => {
                return Err(PluginError::failed(format!(
                    "the structured output cannot be read: {why}"
                )));
            }
        },
    };
    let expected = input.expected();
    retrieval::score(
        metric,
        config,
        input.output(),
        structured.as_ref(),
        expected.as_ref(),
    )
    .map(|verdict| to_score(metric.name(), verdict))
    .map_err(to_score_error)
}

macro_rules! retrieval_scorer {
    ($name:ident, $metric:expr, $id:literal, $description:literal) => {
        pub struct $name(RetrievalConfig);

        impl Scorer for $name {
            const ID: &'static str = $id;
            const DESCRIPTION: &'static str = $description;
            type Config = RetrievalConfig;

            fn config_schema() -> ConfigSchema {
                schema()
            }

            fn new(config: RetrievalConfig) -> Result<Self, PluginError> {
                retrieval::validate(&config).map_err(to_error)?;
                Ok(Self(config))
            }

            fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
                score($metric, &self.0, input)
            }
        }
    };
}

retrieval_scorer!(
    HitRate,
    Metric::HitRate,
    "hit-rate@k",
    "1 when any of the top `k` retrieved sources is an expected one (pass: 1)"
);
retrieval_scorer!(
    Recall,
    Metric::Recall,
    "recall@k",
    "the share of expected sources among the top `k` retrieved (pass: ≥ `threshold`, default 0.5)"
);
retrieval_scorer!(
    Precision,
    Metric::Precision,
    "precision@k",
    "the share of the top `k` retrieved slots holding an expected source (pass: ≥ `threshold`, default 0.5)"
);
retrieval_scorer!(
    Mrr,
    Metric::Mrr,
    "mrr",
    "1 / the rank of the first expected source retrieved (pass: ≥ `threshold`, default 0.5)"
);
retrieval_scorer!(
    Ndcg,
    Metric::Ndcg,
    "ndcg@k",
    "binary-relevance nDCG of the top `k` retrieved (pass: ≥ `threshold`, default 0.5)"
);
