//! The normalized check of an assertion: a sentence a person reads
//! without knowing the scorer, made from what the records hold (the
//! assertion's score and status) and what its fixture wrote (its
//! `threshold`): `0.58 is below the 0.70 floor`, `0.82 meets the 0.70
//! floor`. An assertion with no threshold, or no score, has no check
//! sentence (its `detail` says what the scorer said).
//!
//! The sentence is derived, never parsed out of a scorer's message, so it
//! reads the same for every scorer that takes a threshold (levenshtein,
//! json-diff, the retrieval metrics, a pack's own).

use schemars::JsonSchema;
use serde::Serialize;

/// A score compared with a threshold.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// `score-threshold`: a score held against a floor.
    pub kind: String,
    /// The score the assertion gave.
    pub value: f64,
    /// The floor the assertion's fixture set (`threshold`).
    pub threshold: f64,
    /// Whether the score meets the floor (`value >= threshold`).
    pub holds: bool,
    /// `0.58 is below the 0.70 floor`, or `0.82 meets the 0.70 floor`.
    pub message: String,
}

/// The check of a score against a floor, when both are known and finite.
pub fn floor(score: Option<f64>, threshold: Option<f64>) -> Option<Check> {
    let (value, threshold) = (score?, threshold?);
    if !value.is_finite() || !threshold.is_finite() {
        return None;
    }
    let holds = value >= threshold;
    let (v, t) = (number(value), number(threshold));
    let message = if holds {
        format!("{v} meets the {t} floor")
    } else {
        format!("{v} is below the {t} floor")
    };
    Some(Check {
        kind: "score-threshold".into(),
        value,
        threshold,
        holds,
        message,
    })
}

/// `x` with [`decimals`] of it.
fn number(x: f64) -> String {
    let digits = decimals(x);
    format!("{x:.digits$}")
}

/// Decimals a number is shown with: two at least (`0.70`), more when two
/// would round it (up to four: `0.6667`), none for a whole number above
/// one (`3`).
fn decimals(x: f64) -> usize {
    if x.fract() == 0.0 && x.abs() > 1.0 {
        return 0;
    }
    (2..=4)
        .find(|d| {
            let scale = 10f64.powi(*d as i32);
            ((x * scale).round() / scale - x).abs() < 1e-9
        })
        .unwrap_or(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_score_below_its_floor_says_so() {
        let check = floor(Some(0.58), Some(0.7)).unwrap();
        assert_eq!(check.message, "0.58 is below the 0.70 floor");
        assert!(!check.holds);
        assert_eq!(check.kind, "score-threshold");
    }

    #[test]
    fn a_score_at_or_above_its_floor_meets_it() {
        assert_eq!(
            floor(Some(0.7), Some(0.7)).unwrap().message,
            "0.70 meets the 0.70 floor"
        );
        let check = floor(Some(1.0), Some(0.85)).unwrap();
        assert_eq!(check.message, "1.00 meets the 0.85 floor");
        assert!(check.holds);
    }

    #[test]
    fn each_number_keeps_the_digits_it_needs() {
        assert_eq!(
            floor(Some(0.6667), Some(0.7)).unwrap().message,
            "0.6667 is below the 0.70 floor"
        );
        assert_eq!(
            floor(Some(0.123456), Some(0.5)).unwrap().message,
            "0.1235 is below the 0.50 floor"
        );
        assert_eq!(
            floor(Some(2.0), Some(3.0)).unwrap().message,
            "2 is below the 3 floor"
        );
    }

    #[test]
    fn without_a_score_or_a_threshold_there_is_no_check() {
        assert!(floor(None, Some(0.7)).is_none());
        assert!(floor(Some(0.5), None).is_none());
        assert!(floor(Some(f64::NAN), Some(0.7)).is_none());
    }
}
