//! `eval compare`: two runs of one suite through different harnesses (say
//! the `anthropic` API and `claude -p`) checked against the cross-runtime
//! rules (seed 000, "CLI runtime parity"), case by case.
//!
//! - MUST be byte-equal: `surface`, `preset`, `fixtureRef`, `caseId`;
//! - MUST be present and non-empty on both sides: `provider`, `model`,
//!   `harness`, `mode`, `durationMs`, `observed.messages`,
//!   `observed.finalText`;
//! - MAY differ, reported with each side's harness: the final text, the
//!   model, token usage, cost and its source, duration.
//!
//! A case in only one run is listed (`onlyInA`, `onlyInB`), not a
//! violation: a suite gains and loses cases between runs, and `eval
//! compare` reports them as new and removed ([`crate::report::diff`] holds
//! the comparison of verdicts this check is part of).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::eval::EvalError;

pub const SCHEMA: &str = "cautilus.run_comparison.v1";

/// Fields that must be byte-equal across harnesses.
const EQUAL: &[&str] = &["surface", "preset", "fixtureRef", "caseId"];
/// Fields that must be present and non-empty on both sides.
const PRESENT: &[&str] = &["provider", "model", "harness", "mode", "durationMs"];
/// Fields that may differ; each difference is reported with its harness.
const MAY_DIFFER: &[&str] = &[
    "model",
    "durationMs",
    "firstByteMs",
    "usage",
    "costUsd",
    "costSource",
];

/// The observed packet of a run directory (or the packet file itself).
fn observed(path: &Path) -> Result<(PathBuf, Value), EvalError> {
    let file = if path.is_dir() {
        path.join("eval-observed.json")
    } else {
        path.to_path_buf()
    };
    let error = |message: String| EvalError::Input {
        path: file.clone(),
        message,
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        error(format!(
            "cannot read it ({e}); give a run directory of `cautilus eval test` or its eval-observed.json"
        ))
    })?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| error(format!("not valid JSON: {e}")))?;
    if !value.get("evaluations").is_some_and(Value::is_array) {
        return Err(error(
            "has no `evaluations` list: not an observed packet".into(),
        ));
    }
    Ok((file, value))
}

/// Compares the runs at `a` and `b`; the report is `cautilus.run_comparison.v1`.
pub fn compare(a: &Path, b: &Path) -> Result<Value, EvalError> {
    let (file_a, a) = observed(a)?;
    let (file_b, b) = observed(b)?;
    Ok(compare_packets(&file_a, &a, &file_b, &b))
}

fn evaluations(packet: &Value) -> Vec<&Value> {
    packet["evaluations"]
        .as_array()
        .map(|l| l.iter().collect())
        .unwrap_or_default()
}

fn non_empty(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        Some(Value::Object(map)) => !map.is_empty(),
        Some(_) => true,
    }
}

/// The comparison of two observed packets.
pub fn compare_packets(file_a: &Path, a: &Value, file_b: &Path, b: &Value) -> Value {
    let mut violations: Vec<String> = Vec::new();
    for key in ["surface", "preset"] {
        if a.get(key) != b.get(key) {
            violations.push(format!(
                "`{key}` differs between the packets ({} vs {})",
                a.get(key).unwrap_or(&Value::Null),
                b.get(key).unwrap_or(&Value::Null)
            ));
        }
    }
    let case_id = |e: &Value| {
        e.get("caseId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let in_b: Map<String, Value> = evaluations(b)
        .into_iter()
        .map(|e| (case_id(e), e.clone()))
        .collect();
    let ids_a: Vec<String> = evaluations(a).into_iter().map(case_id).collect();
    let mut cases = Vec::new();
    let mut only_in_a = Vec::new();
    for ea in evaluations(a) {
        let id = case_id(ea);
        let Some(eb) = in_b.get(&id) else {
            only_in_a.push(id);
            continue;
        };
        cases.push(compare_case(&id, ea, eb, &mut violations));
    }
    let only_in_b: Vec<&String> = in_b.keys().filter(|id| !ids_a.contains(id)).collect();
    let harness = |packet: &Value| {
        evaluations(packet)
            .first()
            .and_then(|e| e.get("harness").cloned())
            .unwrap_or(Value::Null)
    };
    json!({
        "schemaVersion": SCHEMA,
        "a": {"packet": file_a.display().to_string(), "harness": harness(a)},
        "b": {"packet": file_b.display().to_string(), "harness": harness(b)},
        "holds": violations.is_empty(),
        "violations": violations,
        "cases": cases,
        "onlyInA": only_in_a,
        "onlyInB": only_in_b,
    })
}

/// The comparison as a person reads it (the runs' text escaped for a
/// terminal).
pub fn print(out: &mut impl std::io::Write, report: &Value) -> std::io::Result<()> {
    use crate::term::inline;
    let text = |value: &Value| inline(value.as_str().unwrap_or("")).into_owned();
    let harness = |side: &str| inline(report[side]["harness"].as_str().unwrap_or("?")).into_owned();
    writeln!(
        out,
        "comparing {} ({}) with {} ({})",
        text(&report["a"]["packet"]),
        harness("a"),
        text(&report["b"]["packet"]),
        harness("b")
    )?;
    print_rules(out, report)
}

/// The case-by-case check of one pair of packets, as [`print`] shows it
/// after its first line.
pub fn print_rules(out: &mut impl std::io::Write, report: &Value) -> std::io::Result<()> {
    use crate::term::inline;
    let text = |value: &Value| inline(value.as_str().unwrap_or("")).into_owned();
    for case in report["cases"].as_array().into_iter().flatten() {
        let id = text(&case["caseId"]);
        let mark = if case["holds"] == true {
            "  OK  "
        } else {
            "  FAIL"
        };
        writeln!(out, "{mark}  {id}")?;
        for violation in case["violations"].as_array().into_iter().flatten() {
            writeln!(out, "        must: {}", text(violation))?;
        }
        if let Some(differs) = case["mayDiffer"].as_object() {
            for (field, sides) in differs {
                let sides: Vec<String> = sides
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(h, v)| format!("{}: {}", inline(h), report_excerpt(v)))
                    .collect();
                writeln!(
                    out,
                    "        may differ: {} ({})",
                    inline(field),
                    inline(&sides.join("; "))
                )?;
            }
        }
    }
    for violation in report["violations"].as_array().into_iter().flatten() {
        if !violation.as_str().unwrap_or("").starts_with("case `") {
            writeln!(out, "  must: {}", text(violation))?;
        }
    }
    let broken = report["violations"].as_array().map_or(0, Vec::len);
    if broken == 0 {
        writeln!(out, "the cross-runtime rules hold")
    } else {
        writeln!(out, "{broken} rule(s) broken")
    }
}

fn compare_case(id: &str, a: &Value, b: &Value, violations: &mut Vec<String>) -> Value {
    let tag = |e: &Value| {
        e.get("harness")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    let (mut ha, mut hb) = (tag(a), tag(b));
    if ha == hb {
        // Two runs of one harness: tell the sides apart.
        ha.push_str(" (first)");
        hb.push_str(" (second)");
    }
    let mut rules = Vec::new();
    for key in EQUAL {
        if a.get(*key) != b.get(*key) {
            rules.push(format!("`{key}` must be byte-equal across harnesses"));
        }
    }
    for (side, e, harness) in [("first", a, &ha), ("second", b, &hb)] {
        let mut missing: Vec<&str> = PRESENT
            .iter()
            .copied()
            .filter(|key| !non_empty(e.get(*key)))
            .collect();
        for (path, name) in [
            ("/observed/messages", "observed.messages"),
            ("/observed/finalText", "observed.finalText"),
        ] {
            if !non_empty(e.pointer(path)) {
                missing.push(name);
            }
        }
        if !missing.is_empty() {
            rules.push(format!(
                "the {side} run ({harness}) lacks {}",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for rule in &rules {
        violations.push(format!("case `{id}`: {rule}"));
    }
    let mut differs = Map::new();
    let mut fields: Vec<(&str, Option<&Value>, Option<&Value>)> = MAY_DIFFER
        .iter()
        .map(|key| (*key, a.get(*key), b.get(*key)))
        .collect();
    fields.push((
        "observed.finalText",
        a.pointer("/observed/finalText"),
        b.pointer("/observed/finalText"),
    ));
    for (key, va, vb) in fields {
        if va != vb {
            differs.insert(
                key.to_string(),
                json!({ ha.clone(): va.cloned().unwrap_or(Value::Null),
                        hb.clone(): vb.cloned().unwrap_or(Value::Null) }),
            );
        }
    }
    json!({"caseId": id, "holds": rules.is_empty(), "violations": rules, "mayDiffer": differs})
}

/// A JSON value in one line of at most 80 characters, for reports.
fn report_excerpt(value: &Value) -> String {
    let text = match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(79).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evaluation(harness: &str, text: &str, fixture_ref: &str) -> Value {
        json!({"caseId": "c1", "surface": "app", "preset": "chat", "fixtureRef": fixture_ref,
               "provider": "anthropic", "model": "m", "harness": harness, "mode": "messaging",
               "durationMs": 10,
               "observed": {"messages": [{"role": "user", "content": "hi"}], "finalText": text}})
    }

    fn packet(evaluations: Vec<Value>) -> Value {
        json!({"surface": "app", "preset": "chat", "evaluations": evaluations})
    }

    #[test]
    fn differing_answers_may_differ_and_are_tagged_with_their_harness() {
        let a = packet(vec![evaluation("anthropic-api", "Hello", "f.yaml")]);
        let b = packet(vec![evaluation("claude_code", "Hi there", "f.yaml")]);
        let report = compare_packets(Path::new("a"), &a, Path::new("b"), &b);
        assert_eq!(report["holds"], true, "{report}");
        assert_eq!(
            report["cases"][0]["mayDiffer"]["observed.finalText"],
            json!({"anthropic-api": "Hello", "claude_code": "Hi there"})
        );
    }

    #[test]
    fn identity_must_be_equal_and_runtime_fields_present() {
        let a = packet(vec![evaluation("anthropic-api", "Hello", "f.yaml")]);
        let mut other = evaluation("claude_code", "", "other.yaml");
        other.as_object_mut().unwrap().remove("durationMs");
        let b = packet(vec![other, json!({"caseId": "extra"})]);
        let report = compare_packets(Path::new("a"), &a, Path::new("b"), &b);
        assert_eq!(report["holds"], false);
        let violations = report["violations"].to_string();
        assert!(
            violations.contains("`fixtureRef` must be byte-equal"),
            "{violations}"
        );
        assert!(
            violations
                .contains("the second run (claude_code) lacks `durationMs`, `observed.finalText`"),
            "{violations}"
        );
        // A case in one run only is listed, not a broken rule.
        assert!(!violations.contains("`extra`"), "{violations}");
        assert_eq!(report["onlyInB"], json!(["extra"]));
    }
}
