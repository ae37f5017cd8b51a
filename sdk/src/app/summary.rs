//! `evaluate`: one evaluation's verdict. Enforces the cross-runtime
//! MUST-be-present fields: a missing or empty one makes that evaluation
//! `errored`, naming every such field — never a crash or a silent pass. An
//! evaluation that declares no expectations is `unchecked` (not a pass).

use crate::excerpt;
use crate::preset::{CaseStatus, Verdict, packet};
use serde_json::{Map, Value};

use crate::app::{Shape, kind, non_empty_str, snapshot};

pub fn evaluate(shape: Shape, e: Value, at: &str) -> Verdict {
    let problems = must_problems(shape, &e);
    let mut blocker = None;
    let judged = if let Some(error) = non_empty_str(e.get("error")) {
        match blocker_kind(error) {
            // The runner could not be used at all (e.g. a CLI not logged in):
            // nothing was asked, so the case is blocked, not errored.
            Some((kind, why)) => {
                blocker = Some(kind);
                Judged::unmatched(CaseStatus::Blocked, format!("blocked ({kind}): {why}"))
            }
            None => Judged::unmatched(CaseStatus::Errored, format!("the provider failed: {error}")),
        }
    } else if !problems.is_empty() {
        Judged::unmatched(CaseStatus::Errored, must_message(shape, at, &problems))
    } else {
        match expectation(e.get("expected")) {
            Ok(expectation) => {
                let got = packet::at(&e, &["observed", "finalText"])
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                judge(expectation, got)
            }
            Err(why) => Judged::unmatched(CaseStatus::Errored, format!("{at}{why}")),
        }
    };
    let (status, summary, added) = judged.into_entry(blocker);
    // The summary entry keeps the evaluation's fields (moved, not copied).
    let Value::Object(mut fields) = e else {
        unreachable!("the SDK passes objects only")
    };
    let case_id = non_empty_str(fields.get("caseId"))
        .unwrap_or_default()
        .to_string();
    let mut out = Map::new();
    for key in COPIED {
        if let Some(value) = fields.remove(*key).filter(|v| !v.is_null()) {
            out.insert((*key).to_string(), value);
        }
    }
    // Moved unchanged: the SDK copies their text from the evaluation's.
    let carried = out.len();
    out.extend(
        added
            .into_iter()
            .map(|(key, value)| (key.to_string(), value)),
    );
    Verdict::new(case_id, status, summary, Value::Object(out)).carrying(carried)
}

/// Provider errors that mean the runner was unusable, by the prefix a
/// provider gives them (`runner_auth_missing: <what to do>`).
const BLOCKER_KINDS: &[&str] = &["runner_auth_missing"];

/// The blocker kind of a provider error and the rest of its message.
fn blocker_kind(error: &str) -> Option<(&'static str, &str)> {
    let error = error.trim_start();
    BLOCKER_KINDS.iter().find_map(|kind| {
        // Providers' errors reach the preset wrapped ("plugin `x` reported
        // an error: runner_auth_missing: ..."): find the marker anywhere.
        let at = error.find(&format!("{kind}: "))?;
        Some((*kind, error[at + kind.len() + 2..].trim()))
    })
}

/// Fields of an observed evaluation carried into the summary.
const COPIED: &[&str] = &[
    "caseId",
    "displayName",
    "surface",
    "preset",
    "fixtureRef",
    "provider",
    "model",
    "harness",
    "mode",
    "durationMs",
    "costUsd",
    "costSource",
    "retries",
    "usage",
    "observed",
    "expected",
    "metadata",
];

/// What an evaluation expects of its final text.
pub(crate) enum Expectation<'a> {
    /// `expected.finalText`: a case-sensitive substring.
    FinalText(&'a str),
    /// `expected.snapshot` with the golden text the host froze into
    /// `expected.snapshotText`.
    Snapshot { path: &'a str, golden: &'a str },
    /// No `expected` at all (or one that declares neither field).
    Nothing,
}

/// What the evaluation's `expected` member asks, or why it cannot be
/// checked: a message that follows the evaluation's path
/// (`.expected.finalText must be …`).
pub(crate) fn expectation(expected: Option<&Value>) -> Result<Expectation<'_>, String> {
    let expected = match expected {
        None | Some(Value::Null) => return Ok(Expectation::Nothing),
        Some(Value::Object(expected)) => expected,
        Some(other) => {
            return Err(format!(
                ".expected must be an object with `finalText` or `snapshot`, got {}",
                kind(other)
            ));
        }
    };
    if let Some(want) = expected.get("finalText") {
        return match want.as_str() {
            Some(want) if !want.is_empty() => Ok(Expectation::FinalText(want)),
            _ => Err(format!(
                ".expected.finalText must be a non-empty string, got {}",
                if want.as_str().is_some() {
                    "an empty string"
                } else {
                    kind(want)
                }
            )),
        };
    }
    match (expected.get("snapshot"), expected.get("snapshotText")) {
        (_, Some(Value::String(golden))) => Ok(Expectation::Snapshot {
            path: expected
                .get("snapshot")
                .and_then(Value::as_str)
                .unwrap_or("snapshot"),
            golden,
        }),
        (Some(_), Some(other)) => Err(format!(
            ".expected.snapshotText must be the golden file's text (a string), got {}",
            kind(other)
        )),
        (Some(_), None) => Err(
            ".expected.snapshot has no `snapshotText`: the golden file's text must be in \
             the packet (`cautilus eval test` reads it in), so the snapshot cannot be compared"
                .to_string(),
        ),
        (None, _) => Ok(Expectation::Nothing),
    }
}

/// How an evaluation fared: its status and summary line, whether the final
/// text met the expectation (when one was checked), and a snapshot's diff.
pub(crate) struct Judged {
    pub status: CaseStatus,
    pub summary: String,
    pub matched: Option<bool>,
    pub snapshot_diff: Option<Value>,
}

impl Judged {
    /// The status, the summary line, and the members the summary entry
    /// adds after the evaluation's own, in order (`status` and `summary`
    /// are then set by the SDK); `blocker` is a runner blocker's kind.
    pub(crate) fn into_entry(
        self,
        blocker: Option<&'static str>,
    ) -> (CaseStatus, String, Vec<(&'static str, Value)>) {
        let added = [
            self.matched.map(|matched| ("match", Value::Bool(matched))),
            blocker.map(|kind| ("blockerKind", Value::String(kind.into()))),
            self.snapshot_diff.map(|diff| ("snapshotDiff", diff)),
        ];
        (
            self.status,
            self.summary,
            added.into_iter().flatten().collect(),
        )
    }

    fn unmatched(status: CaseStatus, summary: String) -> Self {
        Self {
            status,
            summary,
            matched: None,
            snapshot_diff: None,
        }
    }
}

/// Checks the final text `got` against what the evaluation expects.
pub(crate) fn judge(expectation: Expectation<'_>, got: &str) -> Judged {
    match expectation {
        Expectation::FinalText(want) => {
            let found = got.contains(want);
            let summary = if found {
                format!("final text contains {}", excerpt(want, 160))
            } else {
                format!(
                    "final text does not contain {}; got {}",
                    excerpt(want, 160),
                    excerpt(got, 160)
                )
            };
            Judged {
                status: if found {
                    CaseStatus::Passed
                } else {
                    CaseStatus::Failed
                },
                summary,
                matched: Some(found),
                snapshot_diff: None,
            }
        }
        Expectation::Snapshot { path, golden } => match snapshot::compare(path, golden, got) {
            Ok(()) => Judged {
                status: CaseStatus::Passed,
                summary: format!("final text matches snapshot {path}"),
                matched: Some(true),
                snapshot_diff: None,
            },
            Err(mismatch) => Judged {
                status: CaseStatus::Failed,
                summary: format!(
                    "final text differs from snapshot {path} ({}):\n{}",
                    mismatch.kind,
                    mismatch.diff.trim_end()
                ),
                matched: Some(false),
                snapshot_diff: Some(mismatch.to_json(golden, got)),
            },
        },
        Expectation::Nothing => Judged::unmatched(
            CaseStatus::Unchecked,
            "observed, but nothing was checked: the case declares no expectations \
             (add `expected.finalText`, `expected.snapshot` or assertions)"
                .to_string(),
        ),
    }
}

/// Problems shown in one verdict summary; the rest are counted.
const SHOWN_PROBLEMS: usize = 8;

/// A broken MUST-be-present rule: a field that is missing or empty, or one
/// that is present with a value the rule does not allow.
enum MustProblem {
    Missing(String),
    Invalid(String, String),
}

/// Every broken rule of the cross-runtime MUST-be-present set (seed 000:
/// `provider`, `model`, `harness`, `mode`, `durationMs`, `observed.messages`,
/// `observed.finalText`; `caseId` identifies the result; app/prompt also
/// needs `observed.input`), in that order.
fn must_problems(shape: Shape, e: &Value) -> Vec<MustProblem> {
    let mut problems = Vec::new();
    for key in ["caseId", "provider", "model", "harness", "mode"] {
        match e.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            None | Some(Value::Null) | Some(Value::String(_)) => {
                problems.push(MustProblem::Missing(key.into()))
            }
            Some(other) => problems.push(MustProblem::Invalid(
                key.into(),
                format!("must be a non-empty string, got {}", kind(other)),
            )),
        }
    }
    if let Some(mode) = non_empty_str(e.get("mode"))
        && mode != "messaging"
    {
        problems.push(MustProblem::Invalid(
            "mode".into(),
            format!(
                "must be `messaging` on the app surface, got {}",
                excerpt(mode, 40)
            ),
        ));
    }
    match e.get("durationMs") {
        None | Some(Value::Null) => problems.push(MustProblem::Missing("durationMs".into())),
        Some(value) if value.as_f64().is_some_and(|d| d >= 0.0) => {}
        Some(value) => problems.push(MustProblem::Invalid(
            "durationMs".into(),
            format!(
                "must be a non-negative number of milliseconds, got {}",
                match value {
                    Value::Number(n) => n.to_string(),
                    other => kind(other).to_string(),
                }
            ),
        )),
    }
    match packet::at(e, &["observed", "messages"]) {
        Some(Value::Array(list)) if !list.is_empty() => {
            for (j, m) in list.iter().enumerate() {
                for key in ["role", "content"] {
                    if non_empty_str(m.get(key)).is_none() {
                        problems.push(MustProblem::Missing(format!(
                            "observed.messages[{j}].{key}"
                        )));
                    }
                }
                if problems.len() > SHOWN_PROBLEMS {
                    break;
                }
            }
        }
        None | Some(Value::Null) | Some(Value::Array(_)) => {
            problems.push(MustProblem::Missing("observed.messages".into()))
        }
        Some(other) => problems.push(MustProblem::Invalid(
            "observed.messages".into(),
            format!("must be a list of messages, got {}", kind(other)),
        )),
    }
    if non_empty_str(packet::at(e, &["observed", "finalText"])).is_none() {
        problems.push(MustProblem::Missing("observed.finalText".into()));
    }
    if shape == Shape::Prompt && non_empty_str(packet::at(e, &["observed", "input"])).is_none() {
        problems.push(MustProblem::Missing("observed.input".into()));
    }
    problems
}

/// One line naming every broken rule, e.g. ``evaluations[0] is missing
/// required fields `provider`, `model` (…)``.
fn must_message(shape: Shape, at: &str, problems: &[MustProblem]) -> String {
    let shown = &problems[..problems.len().min(SHOWN_PROBLEMS)];
    let missing: Vec<String> = shown
        .iter()
        .filter_map(|p| match p {
            MustProblem::Missing(field) => Some(format!("`{field}`")),
            MustProblem::Invalid(..) => None,
        })
        .collect();
    let mut parts = Vec::new();
    match missing.as_slice() {
        [] => {}
        [one] => parts.push(format!("{at} is missing required field {one}")),
        many => parts.push(format!(
            "{at} is missing required fields {}",
            many.join(", ")
        )),
    }
    for problem in shown {
        if let MustProblem::Invalid(field, why) = problem {
            parts.push(format!("{at}.{field} {why}"));
        }
    }
    let mut message = parts.join("; ");
    if problems.len() > shown.len() {
        message.push_str(&format!(
            " (and at least {} more)",
            problems.len() - shown.len()
        ));
    }
    let input = if shape == Shape::Prompt {
        ", observed.input"
    } else {
        ""
    };
    message.push_str(&format!(
        " (cross-runtime MUST-be-present set of every app result: caseId, provider, model, \
         harness, mode=messaging, durationMs, observed.messages, observed.finalText{input}; \
         the runner that wrote the packet must record them)"
    ));
    message
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_members_it_carries_lead_the_body_unchanged() {
        // `carrying(out.len())` promises the SDK that the body's first
        // members are the evaluation's, moved as they were: check that
        // promise on a passing, a failing and an errored evaluation.
        let passing = json!({
            "caseId": "c-1", "displayName": "c-1", "surface": "app", "preset": "prompt",
            "fixtureRef": "f.json", "provider": "fixture", "model": "m",
            "harness": "fixture-backend", "mode": "messaging", "durationMs": 3,
            "extra": "not carried",
            "observed": {
                "messages": [{"role": "user", "content": "say \"hi\""},
                             {"role": "assistant", "content": "hi"}],
                "finalText": "hi", "input": "say \"hi\""
            },
            "expected": {"finalText": "hi"}, "metadata": {"k": [1, null]}
        });
        let mut failing = passing.clone();
        failing["expected"]["finalText"] = json!("bye");
        let mut errored = passing.clone();
        errored["provider"] = Value::Null;
        for evaluation in [passing, failing, errored] {
            let verdict = evaluate(Shape::Prompt, evaluation.clone(), "evaluations[0]");
            let body = verdict.body.as_object().unwrap();
            let expected: Vec<&str> = COPIED
                .iter()
                .copied()
                .filter(|key| evaluation.get(*key).is_some_and(|v| !v.is_null()))
                .collect();
            let leading: Vec<&str> = body
                .keys()
                .take(expected.len())
                .map(String::as_str)
                .collect();
            assert_eq!(leading, expected);
            for key in expected {
                assert_eq!(body[key], evaluation[key], "{key}");
            }
        }
    }

    #[test]
    fn a_runner_blocker_is_found_inside_a_wrapped_provider_error() {
        assert_eq!(
            blocker_kind("plugin `claude-cli` reported an error: runner_auth_missing: log in"),
            Some(("runner_auth_missing", "log in"))
        );
        assert_eq!(blocker_kind("HTTP 500 from http://x"), None);
    }
}
