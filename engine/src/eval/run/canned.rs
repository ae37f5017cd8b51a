//! Answers given beforehand (`--fixture-results`): read within the
//! fixture size limit, and the answer of each trial.

use std::path::Path;

use serde_json::Value;

use crate::eval::EvalError;

pub(crate) fn read_fixture_results(path: Option<&Path>) -> Result<Option<Value>, EvalError> {
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
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| error(format!("not valid JSON at line {}: {e}", e.line())))?;
    if !value.is_object() {
        return Err(error(
            "fixture results must be a JSON object keyed by caseId".into(),
        ));
    }
    Ok(Some(value))
}

/// The canned results of trial `trial` (1-based): an answer
/// `{"trials": [a, b, …]}` becomes its entry (trial − 1) mod its length;
/// any other answer serves every trial.
pub(crate) fn canned_for_trial(results: &mut Value, trial: u32) {
    let Some(results) = results.as_object_mut() else {
        return;
    };
    for answer in results.values_mut() {
        let Some(list) = answer
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("trials"))
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
        else {
            continue;
        };
        let at = (trial.max(1) as usize - 1) % list.len();
        *answer = list[at].clone();
    }
}
