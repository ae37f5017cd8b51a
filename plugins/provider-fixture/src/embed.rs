//! The fixture provider's embeddings: deterministic stand-in vectors (a
//! hashed bag of words) for tests and smoke runs, computed here without
//! any model. Not a semantic embedding.

use cautilus_sdk::provider::{EmbedResponse, Embedder};

/// Dimensions of the stand-in vectors.
pub const DIMENSIONS: usize = 64;

/// The model every answer names, whatever the request asks for.
pub const MODEL: &str = "fixture-embedding";

pub fn embedder() -> Embedder {
    Embedder {
        default_model: MODEL.into(),
    }
}

/// The stand-in vectors of `inputs`.
pub fn embed(inputs: &[String]) -> EmbedResponse {
    EmbedResponse {
        vectors: vectors(inputs),
        model: MODEL.into(),
        usage: None,
        cost_usd: None,
    }
}

/// Stand-in vectors: each lowercased alphanumeric word adds 1 to the
/// dimension its FNV-1a hash picks; the vector is L2-normalized. Texts
/// that share words are close, texts that share none are orthogonal.
pub fn vectors(inputs: &[String]) -> Vec<Vec<f32>> {
    inputs
        .iter()
        .map(|text| {
            let mut vector = vec![0f32; DIMENSIONS];
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
                vector[(hash % DIMENSIONS as u64) as usize] += 1.0;
            }
            let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
            if norm > 0.0 {
                vector.iter_mut().for_each(|v| *v /= norm);
            }
            vector
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn vectors_are_deterministic_and_word_based() {
        let v = vectors(&[
            "Hello Ada, welcome back!".into(),
            "welcome back ada hello".into(),
            "Shipping takes three days.".into(),
            String::new(),
        ]);
        assert_eq!(v[0].len(), DIMENSIONS);
        assert!(
            (cosine(&v[0], &v[1]) - 1.0).abs() < 1e-6,
            "same words, any order or case"
        );
        assert!(cosine(&v[0], &v[2]) < 0.5);
        assert!(v[3].iter().all(|x| *x == 0.0));
        assert_eq!(
            vectors(&["Hello Ada".into()]),
            vectors(&["Hello Ada".into()])
        );
    }

    #[test]
    fn the_vectors_are_the_ones_records_were_made_with() {
        // The host computed these before the fixture provider did: one
        // word lands on one dimension, picked by its FNV-1a hash.
        let v = vectors(&["Hello".into(), "hello HELLO".into()]);
        let hash = "hello".bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let mut one = vec![0f32; DIMENSIONS];
        one[(hash % 64) as usize] = 1.0;
        assert_eq!(v, vec![one.clone(), one]);
    }
}
