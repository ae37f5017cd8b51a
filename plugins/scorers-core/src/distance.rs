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
        detail: Some({
            let rule = match config.max_distance {
                Some(max) => format!("at most {max} edits"),
                None => format!(
                    "similarity ≥ {}",
                    config.threshold.unwrap_or(DEFAULT_THRESHOLD)
                ),
            };
            format!(
                "edit distance {distance} (similarity {similarity:.3}) to {} {} {rule}; got {}",
                excerpt(&want, EXCERPT_CHARS),
                if passed { "meets" } else { "fails" },
                excerpt(output, EXCERPT_CHARS)
            )
        }),
    })
}

/// Character-level Levenshtein distance: the common prefix and suffix
/// stripped, then the bit-parallel algorithm of Hyyrö (after Myers),
/// through `rapidfuzz`: exact, 64 characters of the shorter text per word
/// operation.
pub fn levenshtein(a: &str, b: &str) -> usize {
    // The common ends are found on bytes, then cut back to whole chars
    // (equal chars are equal bytes in UTF-8), so only the part that differs
    // is decoded.
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !is_char_start(a, prefix) {
        prefix -= 1;
    }
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    while !is_char_start(a, a.len() - suffix) {
        suffix -= 1;
    }
    fn chars(bytes: &[u8]) -> std::str::Chars<'_> {
        std::str::from_utf8(bytes)
            .expect("cut at char boundaries of a str")
            .chars()
    }
    rapidfuzz::distance::levenshtein::distance(
        chars(&a[..a.len() - suffix]),
        chars(&b[..b.len() - suffix]),
    )
}

/// The edit distance of two char sequences: two-row dynamic programming
/// over the shorter one (the tests' plain reference).
#[cfg(test)]
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
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

/// Whether byte `at` of UTF-8 text starts a char (or is its end).
fn is_char_start(text: &[u8], at: usize) -> bool {
    text.get(at).is_none_or(|byte| (*byte as i8) >= -0x40)
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
        // Common ends that stop inside a char: é (c3 a9) and è (c3 a8)
        // share their first byte, ü (c3 bc) and ö (c3 b6) too.
        assert_eq!(levenshtein("aé", "aè"), 1);
        assert_eq!(levenshtein("éa", "èa"), 1);
        assert_eq!(levenshtein("xüy", "xöy"), 1);
        assert_eq!(levenshtein("ab", "a"), 1);
        assert_eq!(levenshtein("ü", "üü"), 1);
        assert_eq!(levenshtein("üü", "ü"), 1);
        assert_eq!(levenshtein("a😀b", "a😁b"), 1);
    }

    /// The distance of the dynamic programme over every char, nothing
    /// stripped first.
    fn reference(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        edit_distance(&a, &b)
    }

    #[test]
    fn distances_match_the_plain_programme_on_mixed_widths() {
        let pieces = ["a", "é", "è", "ü", "😀", "😁", "ab", ""];
        let mut words = Vec::new();
        for x in pieces {
            for y in pieces {
                for z in pieces {
                    words.push(format!("{x}{y}{z}"));
                }
            }
        }
        for a in &words {
            for b in &words {
                assert_eq!(levenshtein(a, b), reference(a, b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn long_texts_match_the_plain_programme() {
        // Texts past one and several 64-character words, near and far,
        // from small alphabets (many equal chars) and mixed widths.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % n
        };
        let alphabets: [&[char]; 3] = [
            &['a', 'b'],
            &['a', 'b', 'c', 'd', 'e', ' '],
            &['x', 'é', '😀', '東', 'y'],
        ];
        for round in 0..300 {
            let alphabet = alphabets[round % 3];
            let len = [1, 63, 64, 65, 130, 200, 257][round % 7];
            let a: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            let mut b: Vec<char> = a.chars().collect();
            for _ in 0..next(12) {
                let at = next(b.len() + 1);
                match next(3) {
                    0 if at < b.len() => b[at] = alphabet[next(alphabet.len())],
                    1 if at < b.len() => {
                        b.remove(at);
                    }
                    _ => b.insert(at, alphabet[next(alphabet.len())]),
                }
            }
            let b: String = if round % 5 == 0 {
                (0..next(300))
                    .map(|_| alphabet[next(alphabet.len())])
                    .collect()
            } else {
                b.into_iter().collect()
            };
            assert_eq!(levenshtein(&a, &b), reference(&a, &b), "{a:?} {b:?}");
        }
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
