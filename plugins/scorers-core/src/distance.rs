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
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    // Texts of very different lengths (an answer of pages against a
    // sentence): the distance is at least their difference, so rapidfuzz's
    // band covers the whole longer text and its block programme keeps one
    // word per 64 characters of the *longer* one. Scanning the longer text
    // with the shorter as the pattern is the same work in a quarter of the
    // words or fewer, without the band's bookkeeping.
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() > 64 && long.len() >= 2 * short.len() {
        let pattern: Vec<char> = chars(short).collect();
        if pattern.len() > 64 && chars(long).count() >= 2 * pattern.len() {
            return block_distance(&pattern, chars(long));
        }
    }
    rapidfuzz::distance::levenshtein::distance(chars(a), chars(b))
}

/// The Levenshtein distance of `pattern` (more than 64 chars) and `text`,
/// by Myers' bit-parallel algorithm in Hyyrö's block form: the pattern's
/// rows in 64-bit words, the text scanned once, O(⌈m/64⌉·n) word steps.
fn block_distance(pattern: &[char], text: std::str::Chars<'_>) -> usize {
    let m = pattern.len();
    let words = m.div_ceil(64);
    // Where each char occurs in the pattern, one bit per row: ASCII in a
    // table, other chars by binary search over the sorted distinct ones.
    let mut ascii = vec![0u64; 128 * words];
    let mut others: Vec<char> = pattern.iter().copied().filter(|c| !c.is_ascii()).collect();
    others.sort_unstable();
    others.dedup();
    let mut other_bits = vec![0u64; others.len() * words];
    for (row, &c) in pattern.iter().enumerate() {
        let (word, bit) = (row / 64, 1u64 << (row % 64));
        if c.is_ascii() {
            ascii[c as usize * words + word] |= bit;
        } else {
            let k = others.binary_search(&c).expect("listed above");
            other_bits[k * words + word] |= bit;
        }
    }
    let none = vec![0u64; words];
    let mut vp = vec![!0u64; words];
    let mut vn = vec![0u64; words];
    let last = (m - 1) % 64;
    let mut score = m;
    for c in text {
        let eqs: &[u64] = if c.is_ascii() {
            &ascii[c as usize * words..][..words]
        } else {
            match others.binary_search(&c) {
                Ok(k) => &other_bits[k * words..][..words],
                Err(_) => &none,
            }
        };
        // The horizontal difference entering a block's first row, as two
        // bits (+1, −1): +1 at the top (row 0 of column j is j), then what
        // the block above gave at its bit 63. Branch-free: which way it
        // goes changes from char to char.
        let (mut h_pos, mut h_neg) = (1u64, 0u64);
        let (mut ph, mut mh) = (0u64, 0u64);
        for ((pv, mv), &eq) in vp.iter_mut().zip(vn.iter_mut()).zip(eqs) {
            let xv = eq | *mv;
            let eq = eq | h_neg;
            let xh = ((eq & *pv).wrapping_add(*pv) ^ *pv) | eq;
            ph = *mv | !(xh | *pv);
            mh = *pv & xh;
            let shifted_ph = (ph << 1) | h_pos;
            let shifted_mh = (mh << 1) | h_neg;
            *pv = shifted_mh | !(xv | shifted_ph);
            *mv = shifted_ph & xv;
            (h_pos, h_neg) = (ph >> 63, mh >> 63);
        }
        // The last block's rows end at the pattern's last char, not at its
        // bit 63: the difference there is what this column adds.
        score = score + ((ph >> last) & 1) as usize - ((mh >> last) & 1) as usize;
    }
    score
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
    fn texts_of_very_different_lengths_match_the_plain_programme() {
        // The block programme's case: a pattern past 64 chars (one to
        // several words, ending mid-word or on a word's edge) against a
        // text at least twice as long, with shared pieces, mixed widths.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % n
        };
        let alphabets: [&[char]; 4] = [
            &['a', 'b'],
            &['a', 'b', 'c', 'd', 'e', ' '],
            &['x', 'é', '😀', '東', 'y'],
            &['p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'é', 'ü', '東', '京'],
        ];
        for round in 0..240 {
            let alphabet = alphabets[round % 4];
            let short_len = [65, 100, 127, 128, 129, 200, 300][round % 7];
            let short: String = (0..short_len)
                .map(|_| alphabet[next(alphabet.len())])
                .collect();
            let long_len = 2 * short_len + next(3 * short_len);
            let mut long: String = (0..long_len)
                .map(|_| alphabet[next(alphabet.len())])
                .collect();
            if round % 3 == 0 {
                // The short text inside the long one, a few chars changed.
                let cut: String = short.chars().skip(next(10)).collect();
                long.insert_str(0, &cut);
            }
            let (a, b) = if round % 2 == 0 {
                (&short, &long)
            } else {
                (&long, &short)
            };
            assert_eq!(levenshtein(a, b), reference(a, b), "{a:?} {b:?}");
        }
        // The block programme itself, on any lengths (not only the ones
        // `levenshtein` gives it).
        for round in 0..120 {
            let alphabet = alphabets[round % 4];
            let a: String = (0..1 + next(260))
                .map(|_| alphabet[next(alphabet.len())])
                .collect();
            let b: String = (0..next(400))
                .map(|_| alphabet[next(alphabet.len())])
                .collect();
            let pattern: Vec<char> = a.chars().collect();
            assert_eq!(
                block_distance(&pattern, b.chars()),
                reference(&a, &b),
                "{a:?} {b:?}"
            );
        }
        let answer = "Report: ".to_string() + &"order #123 refund issued. ".repeat(300);
        let want = "Report: order #124 refund issud. ".repeat(4);
        assert_eq!(levenshtein(&answer, &want), reference(&answer, &want));
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
