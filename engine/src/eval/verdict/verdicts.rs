//! Folding assertion outcomes into a preset's verdict.
//!
//! The preset's verdict body is JSON text. The host adds `assertions` and
//! `assertionScore` and rewrites `status` and `summary` by editing the
//! object's top level only: each member's value stays the text the preset
//! wrote (never rebuilt as a tree), so folding costs a scan of the body,
//! not a parse and a re-serialization.

use std::borrow::Cow;

use crate::eval::assert::assertions::Outcome;
use crate::json_members::Members;
use crate::json_text::to_text as json_text;
use crate::plugin::bindings::preset_api::{CaseStatus, Recommendation, Verdict};

/// Folds a case's assertion outcomes into its verdict: the list goes into
/// the summary evaluation (`assertions`, `assertionScore`), and a failed
/// required assertion fails a case its preset passed. True when the body
/// is now text the host rebuilt from the parsed body (known to be JSON).
pub fn apply(verdict: &mut Verdict, outcomes: &[Outcome]) -> bool {
    if outcomes.is_empty() {
        return false;
    }
    // The answer never came (the provider failed, the runner was blocked,
    // a required field is missing): its assertions were not evaluated, and
    // they are listed as such, with no score.
    if matches!(verdict.status, CaseStatus::Errored | CaseStatus::Blocked) {
        let entries: Vec<Entry<'_>> = outcomes
            .iter()
            .map(|o| Entry {
                status: NOT_EVALUATED,
                passed: false,
                score: None,
                label: None,
                cost_usd: None,
                detail: None,
                ..Entry::from(o)
            })
            .collect();
        return rebuilt(
            verdict,
            set_members(&verdict.body, &[("assertions", json_text(&entries))]),
        );
    }
    let required = |o: &&Outcome| o.required;
    let errored: Vec<&Outcome> = outcomes
        .iter()
        .filter(required)
        .filter(|o| o.errored)
        .collect();
    let failed: Vec<&Outcome> = outcomes
        .iter()
        .filter(required)
        .filter(|o| !o.passed && !o.errored)
        .collect();
    let why = |list: &[&Outcome], verb: &str| -> Vec<String> {
        list.iter()
            .map(|o| match &o.detail {
                Some(detail) => format!("assertion `{}` {verb}: {detail}", o.name),
                None => format!("assertion `{}` {verb}", o.name),
            })
            .collect()
    };
    let errored_optional: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| !o.required && o.errored)
        .collect();
    // A case its preset had nothing to check and whose every assertion
    // could not be carried out was never judged: it is errored, naming them.
    if verdict.status == CaseStatus::Unchecked && outcomes.iter().all(|o| o.errored) {
        let all: Vec<&Outcome> = outcomes.iter().collect();
        verdict.status = CaseStatus::Errored;
        verdict.recommendation = Recommendation::Reject;
        verdict.summary = format!(
            "none of its {} assertions could be checked: {}",
            all.len(),
            why(&all, "could not be checked").join("; ")
        );
    }
    // Only optional assertions: they inform, so the case stays unchecked,
    // and its summary says why (it does declare assertions).
    if verdict.status == CaseStatus::Unchecked && !outcomes.iter().any(|o| o.required) {
        verdict.summary = format!(
            "observed, but nothing required was checked: its {} assertion{} {} optional (`required: false`), so {} only inform{}; add `expected` or a required assertion",
            outcomes.len(),
            if outcomes.len() == 1 { "" } else { "s" },
            if outcomes.len() == 1 { "is" } else { "are" },
            if outcomes.len() == 1 { "it" } else { "they" },
            if outcomes.len() == 1 { "s" } else { "" },
        );
    }
    // A case its preset had nothing to check is checked by its required
    // assertions (optional ones only inform); it stays unchecked without one.
    if verdict.status == CaseStatus::Unchecked && outcomes.iter().any(|o| o.required) {
        verdict.status = CaseStatus::Passed;
        if verdict.recommendation == Recommendation::Defer {
            verdict.recommendation = Recommendation::AcceptNow;
        }
        let required = outcomes.iter().filter(|o| o.required);
        let passed = required.clone().filter(|o| o.passed).count();
        verdict.summary = format!(
            "checked by its assertions: {passed} of {} required passed",
            required.count()
        );
    }
    // A definite failure (the preset's or an assertion's) stands; a check
    // that could not be carried out leaves a passing case unjudged.
    if verdict.status == CaseStatus::Passed {
        if !failed.is_empty() {
            verdict.status = CaseStatus::Failed;
            verdict.recommendation = Recommendation::Reject;
            // The checks that could not be carried out are named too: a
            // broken judge beside a failure is never hidden by it.
            let mut reasons = why(&failed, "failed");
            reasons.extend(why(&errored, "could not be checked"));
            verdict.summary = reasons.join("; ");
        } else if !errored.is_empty() {
            verdict.status = CaseStatus::Errored;
            verdict.recommendation = Recommendation::Reject;
            verdict.summary = why(&errored, "could not be checked").join("; ");
        }
    } else if verdict.status == CaseStatus::Failed {
        // The preset's own expectation failed: the assertions that failed
        // or could not be checked beside it are named after its reason, so
        // a broken required judge is never hidden behind the preset.
        let mut reasons = why(&failed, "failed");
        reasons.extend(why(&errored, "could not be checked"));
        if !reasons.is_empty() {
            verdict.summary = if verdict.summary.is_empty() {
                reasons.join("; ")
            } else {
                format!("{}; {}", verdict.summary, reasons.join("; "))
            };
        }
    }
    // An optional check that could not be carried out changes no status,
    // but it is never silent: the case's summary (its line on the
    // terminal) names it, and `assertionsErrored` counts every errored one.
    if !errored_optional.is_empty() && verdict.status != CaseStatus::Errored {
        let named = why(&errored_optional, "could not be checked");
        verdict.summary = format!(
            "{}{}optional {}",
            verdict.summary,
            if verdict.summary.is_empty() { "" } else { "; " },
            named.join("; optional ")
        );
    }
    let assertions_errored = outcomes.iter().filter(|o| o.errored).count();
    let total_weight: f64 = outcomes.iter().map(|o| o.weight).sum();
    let weighted: f64 = outcomes
        .iter()
        .map(|o| o.weight * o.score.unwrap_or(if o.passed { 1.0 } else { 0.0 }))
        .sum();
    let entries: Vec<Entry<'_>> = outcomes.iter().map(Entry::from).collect();
    let mut fields = vec![
        ("assertions", json_text(&entries)),
        (
            "status",
            json_text(&crate::eval::verdict::status_names::status_name(
                verdict.status,
            )),
        ),
        ("summary", json_text(&verdict.summary)),
    ];
    if total_weight > 0.0 {
        fields.push(("assertionScore", json_text(&(weighted / total_weight))));
    }
    if assertions_errored > 0 {
        fields.push((ASSERTIONS_ERRORED, json_text(&assertions_errored)));
    }
    // A judge's calls count toward the case's cost.
    let spend = outcomes.iter().fold(
        crate::eval::assert::judge_spend::Spend::default(),
        |total, o| total.plus(o.spend),
    );
    if !spend.is_empty() {
        fields.push((
            "judgeUsage",
            json_text(&serde_json::json!({
                "calls": spend.calls,
                "inputTokens": spend.input_tokens,
                "outputTokens": spend.output_tokens,
                "costUsd": spend.cost_usd,
            })),
        ));
        if let Some(judged) = spend.cost_usd {
            // The answer's own cost, read off the top-level members.
            let answered = Members::of(&verdict.body).and_then(|members| {
                members
                    .0
                    .iter()
                    .find(|(key, _)| key == "costUsd")
                    .and_then(|(_, raw)| raw.get().parse::<f64>().ok())
            });
            fields.push(("costUsd", json_text(&(answered.unwrap_or(0.0) + judged))));
        }
    }
    rebuilt(verdict, set_members(&verdict.body, &fields))
}

/// Takes the rebuilt body, if any: a body that is not an object (a foreign
/// preset's) is left as it is.
fn rebuilt(verdict: &mut Verdict, body: Option<String>) -> bool {
    match body {
        Some(body) => {
            verdict.body = body;
            true
        }
        None => false,
    }
}

/// The summary evaluation's member counting its assertions that could not
/// be carried out (required or optional), present when there are any.
pub const ASSERTIONS_ERRORED: &str = "assertionsErrored";

/// The status of an assertion whose case was never answered.
pub const NOT_EVALUATED: &str = "not-evaluated";

/// One entry of a summary evaluation's `assertions`.
#[derive(serde::Serialize)]
struct Entry<'a> {
    name: &'a str,
    /// `passed`, `failed`, `errored`, `uncaptured` or `not-evaluated`.
    status: &'static str,
    passed: bool,
    score: Option<f64>,
    required: bool,
    weight: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    /// What its judge calls cost, when it called a model that said.
    #[serde(rename = "costUsd", skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
}

impl<'a> From<&'a Outcome> for Entry<'a> {
    fn from(o: &'a Outcome) -> Self {
        Self {
            name: &o.name,
            status: o.status(),
            passed: o.passed,
            score: o.score,
            required: o.required,
            weight: o.weight,
            label: o.label.as_deref(),
            cost_usd: o.spend.cost_usd,
            detail: o.detail.as_deref(),
        }
    }
}

/// `object` (JSON text of an object) with each of `fields` (key, JSON text)
/// set: a member that exists keeps its place and takes the new value, the
/// others are appended in order. Every other member is copied as written.
/// `None` when `object` is not a JSON object.
fn set_members(object: &str, fields: &[(&str, String)]) -> Option<String> {
    let members = Members::of(object)?.0;
    let mut out =
        String::with_capacity(object.len() + fields.iter().map(|f| f.1.len() + 24).sum::<usize>());
    let mut set = vec![false; fields.len()];
    out.push('{');
    // `verbatim`: a key borrowed from the text, so without an escape, and
    // nothing in it needs one.
    let push = |out: &mut String, key: &str, verbatim: bool, value: &str| {
        if out.len() > 1 {
            out.push(',');
        }
        if verbatim {
            out.push('"');
            out.push_str(key);
            out.push('"');
        } else {
            out.push_str(&json_text(key));
        }
        out.push(':');
        out.push_str(value);
    };
    for (key, raw) in &members {
        let verbatim = matches!(key, Cow::Borrowed(_));
        match fields.iter().position(|(k, _)| k == key) {
            Some(i) if set[i] => {} // a duplicate key: the new value once
            Some(i) => {
                set[i] = true;
                push(&mut out, key, verbatim, &fields[i].1);
            }
            None => push(&mut out, key, verbatim, raw.get()),
        }
    }
    for ((key, value), done) in fields.iter().zip(&set) {
        if !done {
            push(&mut out, key, false, value);
        }
    }
    out.push('}');
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn verdict(body: &str) -> Verdict {
        Verdict {
            case_id: "c".into(),
            status: CaseStatus::Passed,
            recommendation: Recommendation::AcceptNow,
            tags: Vec::new(),
            summary: "ok".into(),
            body: body.into(),
        }
    }

    fn outcome(name: &str, passed: bool, required: bool) -> Outcome {
        Outcome {
            name: name.into(),
            passed,
            errored: false,
            uncaptured: false,
            score: Some(if passed { 1.0 } else { 0.0 }),
            label: None,
            spend: Default::default(),
            detail: (!passed).then(|| "why \"quoted\"".to_string()),
            required,
            weight: 1.0,
        }
    }

    #[test]
    fn passing_assertions_are_appended_to_the_evaluation() {
        let mut v = verdict(r#"{"caseId":"c","status":"passed","summary":"ok"}"#);
        apply(
            &mut v,
            &[outcome("a", true, true), outcome("b", false, false)],
        );
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(v.status, CaseStatus::Passed);
        assert_eq!(body["status"], "passed");
        assert_eq!(body["assertions"][1]["detail"], "why \"quoted\"");
        assert_eq!(body["assertionScore"], 0.5);

        let mut empty = verdict("{ }");
        apply(&mut empty, &[outcome("a", true, true)]);
        let body: Value = serde_json::from_str(&empty.body).unwrap();
        assert_eq!(body["assertions"][0]["name"], "a");
    }

    #[test]
    fn only_a_body_rebuilt_from_a_parsed_object_counts_as_checked() {
        let mut v = verdict(r#"{"caseId":"c"}"#);
        assert!(apply(&mut v, &[outcome("a", true, true)]));
        assert!(!apply(&mut verdict(r#"{"caseId":"c"}"#), &[]));
        // Not an object, or not JSON: left as it is, for the writer to check.
        for body in ["[1]", r#"{"caseId":"c""#, "{\"a\":tru}"] {
            let mut v = verdict(body);
            assert!(!apply(&mut v, &[outcome("a", true, true)]), "{body}");
            assert_eq!(v.body, body);
        }
    }

    #[test]
    fn a_failed_required_assertion_rewrites_status_and_summary() {
        let mut v = verdict(r#"{"caseId":"c","status":"passed","summary":"ok"}"#);
        apply(&mut v, &[outcome("a", false, true)]);
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(v.status, CaseStatus::Failed);
        assert_eq!(v.recommendation, Recommendation::Reject);
        assert_eq!(body["status"], "failed");
        assert_eq!(body["summary"], "assertion `a` failed: why \"quoted\"");
        assert_eq!(body["assertions"][0]["passed"], false);
    }

    #[test]
    fn an_errored_required_assertion_makes_a_passing_case_errored() {
        let broken = Outcome {
            errored: true,
            passed: false,
            score: None,
            detail: Some("plugin `equals` trapped".into()),
            ..outcome("equals", false, true)
        };
        let mut v = verdict(r#"{"caseId":"c","status":"passed","summary":"ok"}"#);
        apply(&mut v, &[outcome("a", true, true), broken.clone()]);
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(v.status, CaseStatus::Errored);
        assert_eq!(body["status"], "errored");
        assert_eq!(body["assertions"][1]["status"], "errored");
        assert_eq!(
            body["summary"],
            "assertion `equals` could not be checked: plugin `equals` trapped"
        );
        // A definite failure stands over an errored check.
        let mut v = verdict(r#"{"caseId":"c","status":"passed"}"#);
        apply(&mut v, &[outcome("a", false, true), broken.clone()]);
        assert_eq!(v.status, CaseStatus::Failed);
        assert!(
            v.summary
                .contains("assertion `equals` could not be checked"),
            "a failure does not hide the broken check: {}",
            v.summary
        );
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(body["assertionsErrored"], 1);
        // An optional errored check changes no status, but the summary
        // names it and the body counts it.
        let mut v = verdict(r#"{"caseId":"c","status":"passed"}"#);
        apply(
            &mut v,
            &[Outcome {
                required: false,
                ..broken
            }],
        );
        assert_eq!(v.status, CaseStatus::Passed);
        assert_eq!(
            v.summary,
            "ok; optional assertion `equals` could not be checked: plugin `equals` trapped"
        );
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(body["assertionsErrored"], 1);
        // Nothing errored: no count.
        let mut v = verdict(r#"{"caseId":"c","status":"passed"}"#);
        apply(&mut v, &[outcome("a", true, true)]);
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert!(body.get("assertionsErrored").is_none());
    }

    #[test]
    fn a_preset_failure_names_the_assertions_that_failed_or_errored_beside_it() {
        let broken = Outcome {
            errored: true,
            passed: false,
            score: None,
            detail: Some("score \"1.5\" is not a number".into()),
            ..outcome("judge", false, true)
        };
        let failed_case = || Verdict {
            status: CaseStatus::Failed,
            recommendation: Recommendation::Reject,
            summary: "final text does not contain \"Paris\"".into(),
            ..verdict(r#"{"caseId":"c","status":"failed"}"#)
        };
        let mut v = failed_case();
        apply(&mut v, &[broken.clone(), outcome("a", false, true)]);
        assert_eq!(v.status, CaseStatus::Failed);
        assert_eq!(
            v.summary,
            "final text does not contain \"Paris\"; assertion `a` failed: why \"quoted\"; \
             assertion `judge` could not be checked: score \"1.5\" is not a number"
        );
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(body["summary"], v.summary.as_str());
        assert_eq!(body["assertionsErrored"], 1);
        // Nothing beside it: the preset's reason alone.
        let mut v = failed_case();
        apply(&mut v, &[outcome("a", true, true)]);
        assert_eq!(v.summary, "final text does not contain \"Paris\"");
    }

    #[test]
    fn a_case_nothing_else_checked_whose_assertions_all_errored_is_errored() {
        let broken = |name: &str, required: bool| Outcome {
            errored: true,
            passed: false,
            score: None,
            detail: Some("bad score".into()),
            ..outcome(name, false, required)
        };
        for required in [true, false] {
            let mut v = Verdict {
                status: CaseStatus::Unchecked,
                recommendation: Recommendation::Defer,
                summary: "observed, but nothing was checked: the case declares no expectations"
                    .into(),
                ..verdict(r#"{"caseId":"c","status":"unchecked"}"#)
            };
            apply(&mut v, &[broken("j1", required), broken("j2", required)]);
            assert_eq!(v.status, CaseStatus::Errored, "required: {required}");
            assert_eq!(v.recommendation, Recommendation::Reject);
            assert!(
                v.summary.starts_with("none of its 2 assertions could be checked: assertion `j1` could not be checked: bad score; assertion `j2`"),
                "{}",
                v.summary
            );
            assert!(!v.summary.contains("declares no expectations"));
        }
        // Only optional ones, some of them checked: still unchecked (they
        // inform), and the summary says it has assertions.
        let mut v = Verdict {
            status: CaseStatus::Unchecked,
            recommendation: Recommendation::Defer,
            ..verdict(r#"{"caseId":"c","status":"unchecked"}"#)
        };
        apply(&mut v, &[outcome("a", true, false), broken("j", false)]);
        assert_eq!(v.status, CaseStatus::Unchecked);
        assert!(
            v.summary.starts_with(
                "observed, but nothing required was checked: its 2 assertions are optional"
            ),
            "{}",
            v.summary
        );
        assert!(
            v.summary
                .contains("optional assertion `j` could not be checked"),
            "{}",
            v.summary
        );
    }

    #[test]
    fn assertions_check_a_case_its_preset_left_unchecked() {
        let unchecked = || Verdict {
            status: CaseStatus::Unchecked,
            recommendation: Recommendation::Defer,
            ..verdict(r#"{"caseId":"c","status":"unchecked"}"#)
        };
        let mut v = unchecked();
        apply(&mut v, &[outcome("a", true, true)]);
        assert_eq!(
            (v.status, v.recommendation),
            (CaseStatus::Passed, Recommendation::AcceptNow)
        );
        let body: Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(body["status"], "passed");
        let mut v = unchecked();
        apply(&mut v, &[outcome("a", false, true)]);
        assert_eq!(v.status, CaseStatus::Failed);
        let mut v = unchecked();
        apply(&mut v, &[]);
        assert_eq!(
            v.status,
            CaseStatus::Unchecked,
            "no assertion, still unchecked"
        );
    }

    #[test]
    fn members_keep_their_text_and_place() {
        let body = r#"{"a\"b": {"x": [1, 2.50]}, "status": "passed", "n": 1e3, "status": "again"}"#;
        let out = set_members(
            body,
            &[("status", "\"failed\"".into()), ("new", "[]".into())],
        )
        .unwrap();
        assert_eq!(
            out,
            r#"{"a\"b":{"x": [1, 2.50]},"status":"failed","n":1e3,"new":[]}"#
        );
        // Keys are written as serde_json writes them: an escape it would
        // not write is undone, a key without one is copied.
        assert_eq!(
            set_members(r#"{"\u0061": 1, "é\t": 2, "ü": 3}"#, &[]).unwrap(),
            r#"{"a":1,"é\t":2,"ü":3}"#
        );
        assert_eq!(
            set_members("{ }", &[("k", "1".into())]).unwrap(),
            r#"{"k":1}"#
        );
        assert_eq!(set_members("[1]", &[("k", "1".into())]), None);
        assert_eq!(set_members("null", &[("k", "1".into())]), None);
        assert_eq!(set_members(r#"{"a":1"#, &[("k", "1".into())]), None);
    }

    #[test]
    fn a_body_that_is_not_an_object_is_left_alone() {
        let mut v = verdict("null");
        apply(&mut v, &[outcome("a", false, true)]);
        assert_eq!(v.body, "null");
        assert_eq!(v.status, CaseStatus::Failed);
    }

    #[test]
    fn assertions_of_a_case_never_answered_are_not_evaluated() {
        let mut v = Verdict {
            status: CaseStatus::Errored,
            summary: "the provider failed: boom".into(),
            ..verdict(r#"{"caseId":"c","status":"errored","summary":"the provider failed: boom"}"#)
        };
        apply(&mut v, &[outcome("a", false, true)]);
        assert_eq!(v.status, CaseStatus::Errored);
        assert_eq!(v.summary, "the provider failed: boom");
        let body: serde_json::Value = serde_json::from_str(&v.body).unwrap();
        assert_eq!(body["assertions"][0]["status"], "not-evaluated");
        assert_eq!(body["assertions"][0]["score"], serde_json::Value::Null);
        assert!(body.get("assertionScore").is_none());
    }
}
