//! What a scorer gave for an example, compared with what the example
//! expects: the differences, each as an expected and an actual line of a
//! diff (`- expected pass: true` / `+ actual   pass: false`).

use serde::Serialize;

use super::examples::{Expect, SCORE_TOLERANCE, ScoreExpect};

/// What the scorer gave for one example.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", untagged)]
pub enum Actual {
    Scored {
        pass: Option<bool>,
        score: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// The scorer refused the config or failed on the input.
    Error { error: String },
}

/// One way the actual outcome differs from the expected one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// What was expected, e.g. `pass: true`.
    pub expected: String,
    /// What the scorer gave instead, e.g. `pass: false (detail: …)`.
    pub actual: String,
}

/// How `actual` differs from `expect`; empty when the example passes.
pub fn differences(expect: &Expect, actual: &Actual) -> Vec<Difference> {
    let diff = |expected: String, actual: String| Difference { expected, actual };
    match actual {
        Actual::Error { error } => match &expect.error {
            Some(text) if error.contains(text.as_str()) => Vec::new(),
            Some(text) => vec![diff(error_expectation(text), format!("error: {error}"))],
            None => expected_lines(expect)
                .into_iter()
                .map(|line| diff(line, format!("error: {error}")))
                .collect(),
        },
        Actual::Scored {
            pass,
            score,
            detail,
            ..
        } => {
            if let Some(text) = &expect.error {
                return vec![diff(
                    error_expectation(text),
                    format!(
                        "no error; {}",
                        scored_summary(*pass, *score, detail.as_deref())
                    ),
                )];
            }
            let mut found = Vec::new();
            if let Some(want) = expect.pass
                && *pass != Some(want)
            {
                found.push(diff(
                    format!("pass: {want}"),
                    format!(
                        "pass: {}{}",
                        optional(*pass),
                        detail_note(detail.as_deref())
                    ),
                ));
            }
            if let Some(want) = expect.score
                && !score.is_some_and(|value| score_matches(want, value))
            {
                found.push(diff(
                    format!("score: {}", score_expectation(want)),
                    format!("score: {}", optional(*score)),
                ));
            }
            if let Some(text) = &expect.detail
                && !detail.as_deref().is_some_and(|d| d.contains(text.as_str()))
            {
                found.push(diff(
                    format!("detail containing {text:?}"),
                    match detail {
                        Some(detail) => format!("detail: {detail:?}"),
                        None => "detail: none".into(),
                    },
                ));
            }
            found
        }
    }
}

/// Whether `value` is what `want` asks for.
pub fn score_matches(want: ScoreExpect, value: f64) -> bool {
    match want {
        ScoreExpect::Exactly(v) => (value - v).abs() <= SCORE_TOLERANCE,
        ScoreExpect::Within { min, max } => {
            min.is_none_or(|lo| value >= lo) && max.is_none_or(|hi| value <= hi)
        }
    }
}

/// The expectation in one line, e.g. `pass: true, score: 1`.
pub fn expectation_summary(expect: &Expect) -> String {
    expected_lines(expect).join(", ")
}

fn expected_lines(expect: &Expect) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(pass) = expect.pass {
        lines.push(format!("pass: {pass}"));
    }
    if let Some(score) = expect.score {
        lines.push(format!("score: {}", score_expectation(score)));
    }
    if let Some(detail) = &expect.detail {
        lines.push(format!("detail containing {detail:?}"));
    }
    if let Some(error) = &expect.error {
        lines.push(error_expectation(error));
    }
    lines
}

fn error_expectation(text: &str) -> String {
    if text.is_empty() {
        "an error".into()
    } else {
        format!("error containing {text:?}")
    }
}

fn score_expectation(want: ScoreExpect) -> String {
    match want {
        ScoreExpect::Exactly(v) => v.to_string(),
        ScoreExpect::Within {
            min: Some(lo),
            max: Some(hi),
        } => format!("between {lo} and {hi}"),
        ScoreExpect::Within { min: Some(lo), .. } => format!("at least {lo}"),
        ScoreExpect::Within { max: Some(hi), .. } => format!("at most {hi}"),
        ScoreExpect::Within { .. } => "any".into(),
    }
}

fn scored_summary(pass: Option<bool>, score: Option<f64>, detail: Option<&str>) -> String {
    format!(
        "pass: {}, score: {}{}",
        optional(pass),
        optional(score),
        detail_note(detail)
    )
}

fn optional<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

fn detail_note(detail: Option<&str>) -> String {
    detail.map_or_else(String::new, |d| format!(" (detail: {d})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(pass: bool, score: f64, detail: Option<&str>) -> Actual {
        Actual::Scored {
            pass: Some(pass),
            score: Some(score),
            label: None,
            detail: detail.map(String::from),
        }
    }

    fn expect(pass: Option<bool>, score: Option<ScoreExpect>) -> Expect {
        Expect {
            pass,
            score,
            ..Expect::default()
        }
    }

    #[test]
    fn matching_outcomes_have_no_differences() {
        let want = expect(Some(true), Some(ScoreExpect::Exactly(0.5)));
        assert!(differences(&want, &scored(true, 0.5 + 1e-12, None)).is_empty());
        let range = ScoreExpect::Within {
            min: Some(0.2),
            max: None,
        };
        assert!(differences(&expect(None, Some(range)), &scored(false, 0.3, None)).is_empty());
        let error = Expect {
            error: Some("value".into()),
            ..Expect::default()
        };
        let refused = Actual::Error {
            error: "invalid config at `value`".into(),
        };
        assert!(differences(&error, &refused).is_empty());
    }

    #[test]
    fn differences_name_both_sides() {
        let want = expect(Some(true), Some(ScoreExpect::Exactly(1.0)));
        let got = differences(&want, &scored(false, 0.0, Some("missing: order")));
        assert_eq!(
            got,
            [
                Difference {
                    expected: "pass: true".into(),
                    actual: "pass: false (detail: missing: order)".into()
                },
                Difference {
                    expected: "score: 1".into(),
                    actual: "score: 0".into()
                },
            ]
        );
        let refused = Actual::Error {
            error: "boom".into(),
        };
        let got = differences(&want, &refused);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].actual, "error: boom");
        let error = Expect {
            error: Some("value".into()),
            ..Expect::default()
        };
        let got = differences(&error, &scored(true, 1.0, None));
        assert_eq!(got[0].expected, "error containing \"value\"");
        assert_eq!(got[0].actual, "no error; pass: true, score: 1");
        let range = ScoreExpect::Within {
            min: Some(0.2),
            max: Some(0.4),
        };
        let got = differences(&expect(None, Some(range)), &scored(true, 0.9, None));
        assert_eq!(got[0].expected, "score: between 0.2 and 0.4");
    }
}
