//! Answers given beforehand (`--fixture-results`): read within the
//! fixture size and nesting limits, and the answer of each trial and
//! sample.
//!
//! The answers are kept as their JSON text, by case id: a suite's canned
//! answers can be tens of megabytes (a run's outputs scored again), and
//! each is handed to the provider as text, so it is never built as a
//! value, nor written again, just copied into the case's invocation. A
//! per-trial answer is resolved to this trial's when the file is read.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::eval::EvalError;

/// The canned answers of one trial, by case id (each checked to be JSON).
#[derive(Debug, Default)]
pub struct CannedAnswers {
    by_case: HashMap<String, Box<RawValue>>,
}

/// An answer `{"trials": [a, b, …]}` (that key alone, a list that is not
/// empty).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PerTrial {
    trials: Vec<Box<RawValue>>,
}

impl CannedAnswers {
    /// Case `case_id`'s answer for its sample `sample` (0-based): a list
    /// hands out one entry per sample (none past its end), any other answer
    /// serves every sample.
    pub fn answer(&self, case_id: &str, sample: usize) -> Option<&RawValue> {
        let answer = self.by_case.get(case_id)?;
        if starts_with(answer, b'[') {
            let list: Vec<&RawValue> = serde_json::from_str(answer.get()).ok()?;
            return list.get(sample).copied();
        }
        Some(answer)
    }
}

/// Trial `trial`'s (1-based) answer of `answer`: an answer
/// `{"trials": [a, b, …]}` is its entry (trial − 1) mod its length, any
/// other is itself.
fn for_trial(answer: Box<RawValue>, trial: u32) -> Box<RawValue> {
    let per_trial = starts_with(&answer, b'{')
        .then(|| serde_json::from_str::<PerTrial>(answer.get()).ok())
        .flatten()
        .filter(|per| !per.trials.is_empty());
    match per_trial {
        Some(PerTrial { mut trials }) => {
            let at = (trial.max(1) as usize - 1) % trials.len();
            trials.swap_remove(at)
        }
        None => answer,
    }
}

fn starts_with(value: &RawValue, byte: u8) -> bool {
    value.get().trim_start().as_bytes().first() == Some(&byte)
}

/// The answers in `path` for trial `trial` (1-based).
pub(crate) fn read_fixture_results(
    path: Option<&Path>,
    trial: u32,
) -> Result<Option<CannedAnswers>, EvalError> {
    let Some(path) = path else { return Ok(None) };
    let error = |message: String| EvalError::Input {
        path: path.to_path_buf(),
        message,
    };
    // Bounded, and never a pipe or a device (which would be waited on).
    let file = crate::regular_file::open(path)
        .and_then(|file| file.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|e| error(format!("cannot read the fixture results: {e}")))?;
    let text = crate::fixture::limits::read_text_from(path, file).map_err(|e| error(e.message))?;
    if !text.trim_start().starts_with('{') {
        // What a value is is said the same way whatever the text holds.
        return match serde_json::from_str::<serde_json::Value>(&text) {
            Err(e) => Err(error(format!("not valid JSON at line {}: {e}", e.line()))),
            Ok(_) => Err(error(
                "fixture results must be a JSON object keyed by caseId".into(),
            )),
        };
    }
    // Each answer is checked as JSON (as nested as a fixture may be) and
    // kept as its text; a case id given twice keeps its last answer.
    if let Some(at) = crate::fixture::nesting::too_deep(
        &text,
        crate::fixture::nesting::Syntax::Json,
        crate::fixture::limits::MAX_DEPTH,
    ) {
        return Err(error(format!(
            "nests deeper than {} levels at line {}, column {}; fixture results are as nested as a fixture may be",
            crate::fixture::limits::MAX_DEPTH,
            at.line,
            at.column
        )));
    }
    let answers: HashMap<String, Box<RawValue>> = serde_json::from_str(&text)
        .map_err(|e| error(format!("not valid JSON at line {}: {e}", e.line())))?;
    let by_case = answers
        .into_iter()
        .map(|(id, answer)| (id, for_trial(answer, trial)))
        .collect();
    Ok(Some(CannedAnswers { by_case }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn canned(answers: Value, trial: u32) -> CannedAnswers {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        std::fs::write(&path, serde_json::to_string_pretty(&answers).unwrap()).unwrap();
        read_fixture_results(Some(&path), trial).unwrap().unwrap()
    }

    fn answer(canned: &CannedAnswers, id: &str, sample: usize) -> Option<Value> {
        canned
            .answer(id, sample)
            .map(|raw| serde_json::from_str(raw.get()).unwrap())
    }

    #[test]
    fn an_answer_serves_every_sample_and_a_list_one_entry_each() {
        let answers = canned(json!({"a": {"finalText": "x"}, "b": ["one", {"t": 2}]}), 1);
        assert_eq!(answer(&answers, "a", 0), Some(json!({"finalText": "x"})));
        assert_eq!(answer(&answers, "a", 5), Some(json!({"finalText": "x"})));
        assert_eq!(answer(&answers, "b", 0), Some(json!("one")));
        assert_eq!(answer(&answers, "b", 1), Some(json!({"t": 2})));
        assert_eq!(answer(&answers, "b", 2), None);
        assert_eq!(answer(&answers, "c", 0), None);
    }

    #[test]
    fn trials_pick_their_entry_in_turn_before_samples_do() {
        let answers = json!({
            "a": {"trials": ["t1", ["t2s1", "t2s2"]]},
            "b": {"trials": []},
            "c": {"trials": ["x"], "other": 1},
        });
        for (trial, first, second) in [(1, "t1", "t1"), (2, "t2s1", "t2s2"), (3, "t1", "t1")] {
            let answers = canned(answers.clone(), trial);
            assert_eq!(
                answer(&answers, "a", 0),
                Some(json!(first)),
                "trial {trial}"
            );
            assert_eq!(
                answer(&answers, "a", 1),
                Some(json!(second)),
                "trial {trial}"
            );
            // Not a per-trial answer: served as it is.
            assert_eq!(answer(&answers, "b", 0), Some(json!({"trials": []})));
            assert_eq!(
                answer(&answers, "c", 0),
                Some(json!({"trials": ["x"], "other": 1}))
            );
        }
    }

    #[test]
    fn files_are_read_as_objects_of_json_answers_only() {
        let dir = tempfile::tempdir().unwrap();
        let read = |text: &str| {
            let path = dir.path().join("results.json");
            std::fs::write(&path, text).unwrap();
            read_fixture_results(Some(&path), 1).map(|c| c.map(|c| c.by_case.len()))
        };
        assert_eq!(
            read(r#" {"a": 1, "b": [2], "a": "last"}"#).unwrap(),
            Some(2)
        );
        let last = {
            let path = dir.path().join("results.json");
            read_fixture_results(Some(&path), 1).unwrap().unwrap()
        };
        assert_eq!(answer(&last, "a", 0), Some(json!("last")));
        let message = |text: &str| read(text).unwrap_err().to_string();
        assert!(message("[1, 2]").contains("must be a JSON object keyed by caseId"));
        assert!(message("\"x\"").contains("must be a JSON object keyed by caseId"));
        assert!(message("{\"a\": }").contains("not valid JSON at line 1"));
        assert!(message("nope").contains("not valid JSON at line 1"));
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(300), "]".repeat(300));
        assert!(message(&deep).contains("nests deeper than"));
        assert_eq!(read_fixture_results(None, 1).unwrap().map(|_| ()), None);
    }
}
