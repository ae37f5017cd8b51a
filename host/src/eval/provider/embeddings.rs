//! Embeddings behind the `model` import's `embed` (the
//! `embedding-similarity` scorer): the judge's OpenAI-compatible
//! `/embeddings` endpoint, or, when the judge is the `fixture` provider,
//! deterministic stand-in vectors (a hashed bag of words) for tests and
//! smoke runs.

use std::time::Duration;

use serde_json::{Value, json};

/// The model asked for when the scorer names none.
pub const DEFAULT_MODEL: &str = "text-embedding-3-small";

/// Dimensions of the fixture's stand-in vectors.
pub const FIXTURE_DIMENSIONS: usize = 64;

/// Stand-in vectors: each lowercased alphanumeric word adds 1 to the
/// dimension its FNV-1a hash picks; the vector is L2-normalized. Texts
/// that share words are close, texts that share none are orthogonal. Not
/// a semantic embedding.
pub fn fixture_vectors(inputs: &[String]) -> Vec<Vec<f32>> {
    inputs
        .iter()
        .map(|text| {
            let mut vector = vec![0f32; FIXTURE_DIMENSIONS];
            for word in text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
            {
                let hash = word
                    .to_lowercase()
                    .bytes()
                    .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                    });
                vector[(hash % FIXTURE_DIMENSIONS as u64) as usize] += 1.0;
            }
            let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
            if norm > 0.0 {
                vector.iter_mut().for_each(|v| *v /= norm);
            }
            vector
        })
        .collect()
}

/// What an embeddings endpoint answered.
pub struct Embedded {
    pub vectors: Vec<Vec<f32>>,
    pub model: String,
    pub input_tokens: Option<u64>,
}

/// POSTs `inputs` to `<base_url>/embeddings` (OpenAI's shape).
pub async fn openai(
    base_url: &str,
    key: Option<&str>,
    model: &str,
    inputs: &[String],
    timeout: Duration,
) -> Result<Embedded, String> {
    let url = format!("{}/embeddings", base_url.trim_end_matches('/'));
    let url =
        reqwest::Url::parse(&url).map_err(|e| format!("invalid embeddings URL `{url}`: {e}"))?;
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(key) = key {
        headers.push(("authorization".into(), format!("Bearer {key}")));
    }
    let body = json!({"model": model, "input": inputs}).to_string();
    let response = crate::plugin::net::send(
        "POST",
        url,
        &headers,
        Some(body.as_bytes()),
        timeout,
        64 * 1024 * 1024,
    )
    .await
    .map_err(|e| format!("embeddings request failed: {e:?}"))?
    .response;
    let answer: Value = serde_json::from_slice(&response.body).map_err(|_| {
        format!(
            "the embeddings endpoint answered HTTP {} with a body that is not JSON",
            response.status
        )
    })?;
    if response.status != 200 {
        let message = answer
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(format!(
            "the embeddings endpoint answered HTTP {}: {message}",
            response.status
        ));
    }
    let mut data: Vec<&Value> = answer["data"]
        .as_array()
        .map(|d| d.iter().collect())
        .unwrap_or_default();
    data.sort_by_key(|d| d["index"].as_u64().unwrap_or(0));
    let vectors: Vec<Vec<f32>> = data
        .iter()
        .map(|d| {
            d["embedding"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .filter_map(Value::as_f64)
                        .map(|x| x as f32)
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    if vectors.len() != inputs.len() || vectors.iter().any(Vec::is_empty) {
        return Err(format!(
            "the embeddings endpoint returned {} vectors for {} inputs",
            vectors.len(),
            inputs.len()
        ));
    }
    Ok(Embedded {
        vectors,
        model: answer["model"].as_str().unwrap_or(model).to_string(),
        input_tokens: answer
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn fixture_vectors_are_deterministic_and_word_based() {
        let v = fixture_vectors(&[
            "Hello Ada, welcome back!".into(),
            "welcome back ada hello".into(),
            "Shipping takes three days.".into(),
            String::new(),
        ]);
        assert_eq!(v[0].len(), FIXTURE_DIMENSIONS);
        assert!(
            (cosine(&v[0], &v[1]) - 1.0).abs() < 1e-6,
            "same words, any order or case"
        );
        assert!(cosine(&v[0], &v[2]) < 0.5);
        assert!(v[3].iter().all(|x| *x == 0.0));
        assert_eq!(
            fixture_vectors(&["Hello Ada".into()]),
            fixture_vectors(&["Hello Ada".into()])
        );
    }
}
