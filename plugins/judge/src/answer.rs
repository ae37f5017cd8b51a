//! Reading the judge model's answer and turning it into a score.
//!
//! The text is read as JSON, or else the first `{…}` object in it that has
//! the key the mode asks for (models wrap JSON in prose or code fences):
//!
//! - rubric mode, `passed` (required, boolean), `score` (optional number,
//!   clamped to 0..=1; default 1 when passed, else 0), `reasoning`;
//! - choice mode, `choice` (required: one of the labels), `reasoning`.
//!
//! The rationale (`reasoning`) becomes the score's detail.

use cautilus_sdk::Score;
use serde_json::{Map, Value};

/// How much of an unreadable answer a scorer error quotes.
const EXCERPT_CHARS: usize = 200;

/// What the judge model answered in rubric mode.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeAnswer {
    pub passed: bool,
    pub score: f64,
    pub reasoning: Option<String>,
}

fn reasoning(object: &Map<String, Value>) -> Option<String> {
    match object.get("reasoning") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => Some(other.to_string()),
    }
}

/// Reads a rubric verdict. The error says what was wrong and quotes an
/// excerpt of the text.
pub fn parse_answer(text: &str) -> Result<JudgeAnswer, String> {
    let Some(object) = find_object(text, "passed") else {
        return Err(format!(
            "the judge model did not answer with a JSON object {{\"passed\": …}}; it said {}",
            cautilus_sdk::excerpt(text.trim(), EXCERPT_CHARS)
        ));
    };
    let passed = match object.get("passed") {
        Some(Value::Bool(passed)) => *passed,
        other => {
            return Err(format!(
                "the judge model's `passed` must be true or false, got {}",
                other.map_or("nothing".to_string(), Value::to_string)
            ));
        }
    };
    let score = match object.get("score") {
        None | Some(Value::Null) => {
            if passed {
                1.0
            } else {
                0.0
            }
        }
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0).clamp(0.0, 1.0),
        Some(other) => {
            return Err(format!(
                "the judge model's `score` must be a number from 0 to 1, got {other}"
            ));
        }
    };
    Ok(JudgeAnswer {
        passed,
        score,
        reasoning: reasoning(&object),
    })
}

/// Reads a choice: (the label, the rationale). The label must be one of
/// `labels`.
pub fn parse_choice(text: &str, labels: &[String]) -> Result<(String, Option<String>), String> {
    let Some(object) = find_object(text, "choice") else {
        return Err(format!(
            "the judge model did not answer with a JSON object {{\"choice\": …}}; it said {}",
            cautilus_sdk::excerpt(text.trim(), EXCERPT_CHARS)
        ));
    };
    match object.get("choice").and_then(Value::as_str) {
        Some(label) if labels.iter().any(|l| l == label) => {
            Ok((label.to_string(), reasoning(&object)))
        }
        other => Err(format!(
            "the judge model's `choice` must be one of {}, got {}",
            labels.join(", "),
            other.map_or_else(|| object["choice"].to_string(), |l| format!("`{l}`"))
        )),
    }
}

fn find_object(text: &str, key: &str) -> Option<Map<String, Value>> {
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text.trim()) {
        return Some(object);
    }
    text.match_indices('{').find_map(|(at, _)| {
        // The streaming deserializer reads one value and ignores what follows.
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(object))) if object.contains_key(key) => Some(object),
            _ => None,
        }
    })
}

/// The score for a rubric answer: passed when the model said so AND the
/// score reaches the threshold.
pub fn to_score(name: &str, answer: JudgeAnswer, threshold: f64) -> Score {
    let passed = answer.passed && answer.score >= threshold;
    let mut score = Score::new(name, answer.score).passed(passed);
    let detail = if answer.passed && !passed {
        Some(format!(
            "score {} is below the threshold {threshold}{}",
            answer.score,
            answer
                .reasoning
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ))
    } else {
        answer.reasoning
    };
    if let Some(detail) = detail {
        score = score.detail(detail);
    }
    score
}

/// The score for a choice: the label's score, passed when it reaches the
/// threshold; the label is the score's label.
pub fn choice_score(
    name: &str,
    label: String,
    value: f64,
    reasoning: Option<String>,
    threshold: f64,
) -> Score {
    let passed = value >= threshold;
    let mut score = Score::new(name, value).passed(passed);
    let detail = match (passed, reasoning) {
        (true, reasoning) => reasoning,
        (false, reasoning) => Some(format!(
            "the judge chose `{label}` (score {value}), below the threshold {threshold}{}",
            reasoning.map(|r| format!(": {r}")).unwrap_or_default()
        )),
    };
    score.label = Some(label);
    if let Some(detail) = detail {
        score = score.detail(detail);
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_from_json_or_the_first_verdict_object() {
        let plain = parse_answer(r#"{"passed": true, "score": 0.9, "reasoning": "ok"}"#).unwrap();
        assert_eq!(
            plain,
            JudgeAnswer {
                passed: true,
                score: 0.9,
                reasoning: Some("ok".into())
            }
        );
        let fenced = parse_answer(
            "Here is my verdict {not json}:\n```json\n{\"passed\": false, \"reasoning\": \"rude\"}\n```",
        )
        .unwrap();
        assert_eq!(fenced.score, 0.0);
        assert!(!fenced.passed);
        assert_eq!(parse_answer(r#"{"passed": true}"#).unwrap().score, 1.0);
        assert_eq!(
            parse_answer(r#"{"passed": true, "score": 7}"#)
                .unwrap()
                .score,
            1.0
        );
        assert!(parse_answer(r#"{"passed": "yes"}"#).is_err());
        assert!(parse_answer(r#"{"passed": true, "score": "high"}"#).is_err());
        let err = parse_answer("I think it is fine.").unwrap_err();
        assert!(err.contains("I think it is fine."), "{err}");
    }

    #[test]
    fn choices_must_be_one_of_the_labels() {
        let labels = vec!["good".to_string(), "bad".to_string()];
        let (label, why) = parse_choice(
            r#"Sure: {"reasoning": "polite", "choice": "good"}"#,
            &labels,
        )
        .unwrap();
        assert_eq!((label.as_str(), why.as_deref()), ("good", Some("polite")));
        let err = parse_choice(r#"{"choice": "meh"}"#, &labels).unwrap_err();
        assert!(err.contains("one of good, bad, got `meh`"), "{err}");
        assert!(parse_choice("no json", &labels).is_err());
    }

    #[test]
    fn passing_needs_the_verdict_and_the_threshold() {
        let answer = |passed, score| JudgeAnswer {
            passed,
            score,
            reasoning: Some("why".into()),
        };
        let pass = to_score("judge", answer(true, 0.8), 0.5);
        assert_eq!((pass.passed, pass.value), (Some(true), Some(0.8)));
        assert_eq!(pass.detail.as_deref(), Some("why"));
        let low = to_score("judge", answer(true, 0.4), 0.5);
        assert_eq!(low.passed, Some(false));
        assert!(low.detail.unwrap().contains("below the threshold 0.5: why"));
        assert_eq!(
            to_score("judge", answer(false, 0.9), 0.5).passed,
            Some(false)
        );
        let chosen = choice_score("tone", "bad".into(), 0.0, Some("curt".into()), 0.5);
        assert_eq!(
            (chosen.passed, chosen.label.as_deref()),
            (Some(false), Some("bad"))
        );
        assert!(chosen.detail.unwrap().contains("chose `bad` (score 0)"));
    }
}
