//! The `embedding-similarity` scorer: the cosine similarity of the
//! output's embedding and the reference's (`value`, else the case's
//! expected text), through the host's `model.embed` (the judge provider's
//! embeddings; the `fixture` judge gives stand-in vectors).
//!
//! Config: `value` (the reference text), `model` (the embedding model;
//! default the judge provider's), `threshold` (default 0.8). The score is the cosine
//! similarity clamped to 0..=1.

use cautilus_sdk::model::{self, EmbedRequest};
use cautilus_sdk::{ConfigSchema, CostClass, PluginError, Score, ScoreInput, Scorer};
use serde::Deserialize;
use serde_json::{Value, json};

/// The least similarity that passes by default.
pub const DEFAULT_THRESHOLD: f64 = 0.8;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingConfig {
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub threshold: Option<f64>,
}

pub struct EmbeddingSimilarity(EmbeddingConfig);

/// The cosine similarity of two vectors (0 when either is all zeros).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Scorer for EmbeddingSimilarity {
    const ID: &'static str = "embedding-similarity";
    const DESCRIPTION: &'static str = "cosine similarity of the output's and the reference's embeddings (pass: ≥ `threshold`, default 0.8)";
    const COST_CLASS: CostClass = CostClass::Model;
    type Config = EmbeddingConfig;

    fn config_schema() -> ConfigSchema {
        ConfigSchema::raw(json!({
            "type": "object",
            "properties": {
                "value": { "description": "the reference text; defaults to the case's `expected`" },
                "model": { "type": "string", "description": "the embedding model (default: the judge provider's)" },
                "threshold": { "type": "number", "minimum": 0, "maximum": 1, "default": DEFAULT_THRESHOLD },
                "negate": { "type": "boolean" }
            },
            "additionalProperties": false
        }))
    }

    fn new(config: EmbeddingConfig) -> Result<Self, PluginError> {
        if let Some(t) = config.threshold
            && !(0.0..=1.0).contains(&t)
        {
            return Err(PluginError::config(
                "threshold",
                format!("must be between 0 and 1, got {t}"),
            ));
        }
        Ok(Self(config))
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        if !input.has_output() {
            return Ok(Score::not_applicable(
                Self::ID,
                "no final text was captured for this case",
            ));
        }
        let Some(reference) = self.0.value.clone().or_else(|| input.expected()) else {
            return Err(PluginError::config(
                "value",
                "no `value` in the config and the case has no `expected` to fall back to",
            ));
        };
        let response = model::embed(&EmbedRequest {
            model: self.0.model.clone(),
            inputs: vec![input.output().to_string(), text(&reference)],
        })
        .map_err(crate::model_error)?;
        let [answer, wanted] = response.vectors.as_slice() else {
            return Err(PluginError::failed(format!(
                "the host returned {} vectors for 2 texts",
                response.vectors.len()
            )));
        };
        let similarity = cosine(answer, wanted).clamp(0.0, 1.0);
        let threshold = self.0.threshold.unwrap_or(DEFAULT_THRESHOLD);
        let passed = similarity >= threshold;
        let mut score = Score::new(Self::ID, similarity).passed(passed);
        if !passed {
            score = score.detail(format!(
                "cosine similarity {similarity:.3} to the reference (model `{}`) is below {threshold}; got {}",
                response.model,
                cautilus_sdk::excerpt(input.output(), 160)
            ));
        }
        Ok(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_by_hand() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-12);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-12);
        assert!((cosine(&[1.0, 1.0], &[1.0, 0.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
