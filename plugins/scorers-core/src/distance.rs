//! `levenshtein`: normalized edit similarity between output and reference.

use serde::Deserialize;
use serde_json::Value;

use crate::{ConfigError, EXCERPT_CHARS, Verdict, as_text, excerpt, reference};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevenshteinConfig {
    #[serde(default)]
    pub value: Option<Value>,
    /// Pass when the edit distance is at most this many characters.
    #[serde(default)]
    pub max_distance: Option<usize>,
    /// Pass when the similarity is at least this (default 0.8); ignored when
    /// `max_distance` is set.
    #[serde(default)]
    pub threshold: Option<f64>,
}

pub const DEFAULT_THRESHOLD: f64 = 0.8;

pub fn validate(config: &LevenshteinConfig) -> Result<(), ConfigError> {
    if let Some(t) = config.threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(ConfigError::new(
            "threshold",
            format!("must be between 0 and 1, got {t}"),
        ));
    }
    Ok(())
}

/// Scores `output` against the reference: value = 1 − distance / max(len).
pub fn levenshtein_score(
    config: &LevenshteinConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ConfigError> {
    let want = as_text(reference(config.value.as_ref(), expected)?);
    let distance = levenshtein(output, &want);
    let longest = output.chars().count().max(want.chars().count());
    let similarity = if longest == 0 {
        1.0
    } else {
        1.0 - distance as f64 / longest as f64
    };
    let passed = match config.max_distance {
        Some(max) => distance <= max,
        None => similarity >= config.threshold.unwrap_or(DEFAULT_THRESHOLD),
    };
    Ok(Verdict {
        value: Some(similarity),
        passed: Some(passed),
        detail: (!passed).then(|| {
            let rule = match config.max_distance {
                Some(max) => format!("at most {max} edits"),
                None => format!(
                    "similarity ≥ {}",
                    config.threshold.unwrap_or(DEFAULT_THRESHOLD)
                ),
            };
            format!(
                "edit distance {distance} (similarity {similarity:.3}) to {} fails {rule}; got {}",
                excerpt(&want, EXCERPT_CHARS),
                excerpt(output, EXCERPT_CHARS)
            )
        }),
    })
}

/// Character-level Levenshtein distance (two-row dynamic programming after
/// stripping the common prefix and suffix).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.len();
    }
    let mut row: Vec<usize> = (0..=short.len()).collect();
    for (i, lc) in long.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, sc) in short.iter().enumerate() {
            let above = row[j + 1];
            let cost = usize::from(lc != sc);
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + cost);
            diagonal = above;
        }
    }
    row[short.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn distances() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
        assert_eq!(levenshtein("héllo wörld", "hello world"), 2);
    }

    #[test]
    fn similarity_and_rules() {
        let c: LevenshteinConfig = serde_json::from_value(json!({"value": "kitten"})).unwrap();
        let v = levenshtein_score(&c, "sitting", None).unwrap();
        assert!((v.value.unwrap() - (1.0 - 3.0 / 7.0)).abs() < 1e-9);
        assert_eq!(v.passed, Some(false));
        let c: LevenshteinConfig =
            serde_json::from_value(json!({"value": "kitten", "max_distance": 3})).unwrap();
        assert_eq!(
            levenshtein_score(&c, "sitting", None).unwrap().passed,
            Some(true)
        );
        let c: LevenshteinConfig = serde_json::from_value(json!({"threshold": 2.0})).unwrap();
        assert_eq!(validate(&c).unwrap_err().path, "threshold");
    }
}
