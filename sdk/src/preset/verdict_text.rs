//! A verdict's summary entry as JSON text, and the verdict as the host
//! takes it: members the body carries unchanged from the evaluation the
//! SDK just wrote are copied from its text, not written again.

use serde_json::{Map, Value};

use super::{Verdict, status_name};
use crate::bindings::preset_api;
use crate::json_text::to_text as json_text;

/// The verdict body's JSON text. `ordered`: objects keep insertion order,
/// so the body's first members are the ones the preset moved in first.
pub(super) fn body_text(
    verdict: &Verdict,
    evaluation: Option<&crate::json_text::Written>,
    ordered: bool,
) -> String {
    if let Some(written) = &verdict.written {
        return with_status(written, verdict);
    }
    // `Verdict::new` sets these two after the preset moved its members.
    let carried = match &verdict.body {
        Value::Object(map) if ordered && verdict.carried > 0 => map
            .keys()
            .take(verdict.carried)
            .take_while(|key| !matches!(key.as_str(), "status" | "summary"))
            .count(),
        _ => 0,
    };
    match evaluation {
        Some(written) if carried > 0 => {
            crate::json_text::to_text_carrying(&verdict.body, carried, written)
        }
        _ => json_text(&verdict.body),
    }
}

/// `object` (an object's JSON text) with the verdict's `status` and
/// `summary` appended, as [`Verdict::new`] sets them.
fn with_status(object: &str, verdict: &Verdict) -> String {
    let members = object.strip_suffix('}').unwrap_or(object);
    let mut out = String::with_capacity(members.len() + verdict.summary.len() + 32);
    out.push_str(members);
    if !members.trim_end().ends_with('{') {
        out.push(',');
    }
    out.push_str("\"status\":");
    crate::json_text::write_str(&mut out, status_name(verdict.status));
    out.push_str(",\"summary\":");
    crate::json_text::write_str(&mut out, &verdict.summary);
    out.push('}');
    out
}

/// Whether objects keep their members in insertion order (serde_json's
/// `preserve_order`, which presets enable): only then are "the body's first
/// members" the ones the preset moved in first.
pub(super) fn keeps_insertion_order() -> bool {
    static KEEPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPS.get_or_init(|| {
        let mut map = Map::new();
        map.insert("b".into(), Value::Null);
        map.insert("a".into(), Value::Null);
        map.keys().next().is_some_and(|key| key == "b")
    })
}

/// The verdict as the host takes it; `evaluation` is the scored
/// evaluation's text when the SDK just wrote it, so that members the body
/// carries are copied from it.
pub(super) fn exported(
    verdict: Verdict,
    evaluation: Option<&crate::json_text::Written>,
) -> preset_api::Verdict {
    let body = body_text(&verdict, evaluation, keeps_insertion_order());
    preset_api::Verdict {
        case_id: verdict.case_id,
        status: verdict.status,
        recommendation: verdict.recommendation,
        tags: verdict.tags,
        summary: verdict.summary,
        body,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json_text::to_text_with_members;
    use crate::preset::{CaseStatus, Recommendation};

    #[test]
    fn a_written_verdict_crosses_with_its_own_text() {
        let body = r#"{"caseId":"c-1","match":false}"#;
        let verdict = Verdict::written("c-1", CaseStatus::Failed, "no \"x\"", body.into());
        assert!(verdict.body.is_null());
        let entry = r#"{"caseId":"c-1","match":false,"status":"failed","summary":"no \"x\""}"#;
        assert_eq!(verdict.entry_text(), entry);
        let crossed = exported(verdict, None);
        assert_eq!(crossed.body, entry);
        assert_eq!(crossed.recommendation, Recommendation::Reject);
        assert_eq!(crossed.summary, "no \"x\"");
        // An empty object takes the two members alone; a value is written
        // with them as `new` sets them.
        let verdict = Verdict::written("c-2", CaseStatus::Unchecked, "?", "{}".into());
        assert_eq!(
            verdict.entry_text(),
            r#"{"status":"unchecked","summary":"?"}"#
        );
        let crossed = exported(
            Verdict::new("c-2", CaseStatus::Unchecked, "?", json!({})),
            None,
        );
        assert_eq!(crossed.body, r#"{"status":"unchecked","summary":"?"}"#);
        assert_eq!(crossed.recommendation, Recommendation::Defer);
    }

    #[test]
    fn a_carried_body_is_written_as_serde_json_writes_it() {
        // Members the preset moved, then `status` and `summary`, which
        // `Verdict::new` sets over the evaluation's own: never copied.
        let evaluation = json!({
            "a": "say \"hi\"", "b": [1, {"c": null}], "status": "old", "summary": "old"
        });
        let written = to_text_with_members(&evaluation);
        let Value::Object(mut moved) = evaluation else {
            unreachable!()
        };
        moved.remove("summary");
        let verdict =
            Verdict::new("c-1", CaseStatus::Passed, "new", Value::Object(moved)).carrying(3);
        // Members sorted by key here (no `preserve_order` in this crate's
        // tests): a, b, status, summary, so the guard is what stops at
        // `status`.
        let text = body_text(&verdict, Some(&written), true);
        assert_eq!(text, serde_json::to_string(&verdict.body).unwrap());
        assert!(text.contains(r#""status":"passed""#), "{text}");
        // Unordered maps, or no evaluation text: written from the values.
        for text in [
            body_text(&verdict, Some(&written), false),
            body_text(&verdict, None, true),
        ] {
            assert_eq!(text, serde_json::to_string(&verdict.body).unwrap());
        }
    }
}
