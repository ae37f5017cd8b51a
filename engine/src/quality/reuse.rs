//! `--reuse-outputs <run-dir>`: a run whose answers are the outputs an
//! earlier run of the suite recorded, re-scored without calling any
//! provider (iterating on assertions and judges costs nothing).
//!
//! Each group of cells takes the outputs of the same group of the earlier
//! run (its `eval-observed.json`: the final text, the messages, and who
//! answered with what usage, cost and time), written beside the group's
//! records as `reused-outputs.json` and answered by the fixture backend,
//! which then reports that identity. A case the earlier run has no output
//! for fails; it never gets a made-up answer. App suites only: a coding
//! agent's work in its workspace cannot be replayed from its outputs.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::files;
use crate::fixture::SuiteContract;

/// The reused answers file written into each group's directory.
pub const FILE: &str = "reused-outputs.json";

fn error(path: &Path, message: impl Into<String>) -> EvalError {
    EvalError::Input {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Writes `group_dir/reused-outputs.json` from the observed packet of the
/// earlier run's group in `source_dir`; returns its path.
pub fn prepare(
    source_dir: &Path,
    group_dir: &Path,
    contract: &SuiteContract,
) -> Result<std::path::PathBuf, EvalError> {
    let packet = source_dir.join("eval-observed.json");
    let text = std::fs::read_to_string(&packet).map_err(|e| {
        error(
            &packet,
            format!("cannot read the outputs to reuse ({e}); --reuse-outputs takes the run directory of an earlier run of this suite, with the same variants and trials"),
        )
    })?;
    let observed: Value = serde_json::from_str(&text)
        .map_err(|e| error(&packet, format!("not an observed packet: {e}")))?;
    if observed["surface"]
        .as_str()
        .is_some_and(crate::taxonomy::works_in_a_workspace)
    {
        return Err(error(
            &packet,
            "--reuse-outputs re-scores app suites; a coding agent's work in its workspace cannot be replayed from its outputs (record a cassette and replay it instead)",
        ));
    }
    let answers = answers(&observed, contract);
    let path = group_dir.join(FILE);
    files::write_json(&path, &json!(answers))?;
    Ok(path)
}

/// The answers of an observed packet, keyed by caseId, as the fixture
/// backend reads canned answers: each case's final text (where the
/// preset's `contract` says its evaluations hold the answer), the messages
/// and tool calls beside it (as the host's observation names them), and
/// who answered with what usage, cost and time. A case with no final text
/// (nothing was answered) has none.
pub fn answers(observed: &Value, contract: &SuiteContract) -> Map<String, Value> {
    let mut answers = Map::new();
    for evaluation in observed["evaluations"].as_array().into_iter().flatten() {
        let Some(case_id) = evaluation["caseId"].as_str() else {
            continue;
        };
        let Some((text, pointer)) = contract.answer.iter().find_map(|pointer| {
            evaluation
                .pointer(pointer)
                .filter(|text| text.is_string())
                .map(|text| (text, pointer))
        }) else {
            continue; // nothing was answered: the case fails again
        };
        let mut answer = Map::new();
        answer.insert("finalText".into(), text.clone());
        // The transcript sits beside the answer's text.
        let beside = pointer
            .rsplit_once('/')
            .and_then(|(parent, _)| evaluation.pointer(parent));
        for key in ["messages", "toolCalls"] {
            if let Some(list) = beside
                .and_then(|block| block.get(key))
                .filter(|v| v.is_array())
            {
                answer.insert(key.into(), list.clone());
            }
        }
        for key in [
            "provider",
            "model",
            "harness",
            "usage",
            "costUsd",
            "costSource",
            "durationMs",
        ] {
            if !evaluation[key].is_null() {
                answer.insert(key.into(), evaluation[key].clone());
            }
        }
        answers.insert(case_id.to_string(), Value::Object(answer));
    }
    answers
}
