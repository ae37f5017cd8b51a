//! JSON checks: `is-json` (optionally against a JSON Schema) and
//! `json-diff` (recursive partial credit against a reference), and how
//! every scorer reads an answer as JSON ([`syntax`], [`parse`]).
//!
//! Whether a text is JSON is decided at any depth: [`syntax`] is
//! `serde_json`'s check of a value it skips, which keeps its open lists
//! and objects on a heap stack (one byte each) instead of recursing, so it
//! has no depth limit and cannot overflow a component's small stack. It
//! accepts exactly RFC 8259's grammar (numbers of any size, `\u` escapes
//! of lone surrogates). A parsed [`Value`] is another matter: `serde_json`
//! refuses to nest one past [`MAX_PARSE_DEPTH`] levels (it recurses), nor
//! holds a number past `f64` or a lone surrogate. A check that needs the
//! value of such an answer (a schema, a diff) is [`ScoreError::Unchecked`]
//! with the reason, so the assertion is `errored`, never failed or passed.

use serde::Deserialize;
use serde_json::Value;

use crate::{ConfigError, EXCERPT_CHARS, ScoreError, Verdict, excerpt, reference};

/// The deepest nesting `serde_json` parses into a value (its recursion
/// limit is 128 levels; the 128th is refused).
pub const MAX_PARSE_DEPTH: usize = 127;

/// Whether `text` is one JSON value (RFC 8259), at any depth.
pub fn syntax(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).map(|_| ())
}

/// A text read as JSON.
#[derive(Debug)]
pub enum Parsed {
    Value(Value),
    /// Not JSON, and why.
    NotJson(serde_json::Error),
    /// Valid JSON that cannot be held as a value, and why.
    Unparsable(String),
}

/// Reads `text` as a JSON value, telling text that is not JSON from JSON
/// the parser cannot hold.
pub fn parse(text: &str) -> Parsed {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Parsed::Value(value),
        Err(error) => match syntax(text) {
            Err(error) => Parsed::NotJson(error),
            Ok(()) => Parsed::Unparsable(unparsable(text, &error)),
        },
    }
}

/// Why valid JSON did not parse: its depth, else what `serde_json` said.
fn unparsable(text: &str, error: &serde_json::Error) -> String {
    let deep = depth(text);
    if deep > MAX_PARSE_DEPTH {
        format!(
            "it is valid JSON nested {deep} levels deep, and this scorer parses a value at most {MAX_PARSE_DEPTH} deep"
        )
    } else {
        format!("it is valid JSON, but not one this scorer can hold as a value ({error})")
    }
}

/// How deeply the lists and objects of a JSON text nest (one pass, outside
/// strings).
pub fn depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text.as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// How deeply `value` nests (a scalar is 0).
pub fn value_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn not_json(error: &serde_json::Error, output: &str) -> Verdict {
    Verdict::fail(format!(
        "the output is not JSON ({error}): {}",
        excerpt(output, EXCERPT_CHARS)
    ))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsJsonConfig {
    /// A JSON Schema the output must satisfy (alias: `schema`).
    #[serde(default, alias = "schema")]
    pub value: Option<Value>,
}

/// `is-json` with its schema compiled once.
pub struct IsJson {
    validator: Option<jsonschema::Validator>,
}

impl IsJson {
    pub fn new(config: IsJsonConfig) -> Result<Self, ConfigError> {
        let validator = match config.value {
            None => None,
            Some(schema) => {
                if !schema.is_object() && !schema.is_boolean() {
                    return Err(ConfigError::new(
                        "value",
                        format!("a JSON Schema must be an object or a boolean, got {schema}"),
                    ));
                }
                Some(jsonschema::validator_for(&schema).map_err(|e| {
                    ConfigError::new("value", format!("not a valid JSON Schema: {e}"))
                })?)
            }
        };
        Ok(Self { validator })
    }

    /// Passes JSON at any depth; with a schema, the value must satisfy it
    /// ([`ScoreError::Unchecked`] when the value cannot be parsed).
    pub fn score(&self, output: &str) -> Result<Verdict, ScoreError> {
        let text = output.trim();
        let Some(validator) = &self.validator else {
            return Ok(match syntax(text) {
                Ok(()) => Verdict {
                    detail: Some(format!(
                        "the output is JSON: {}",
                        excerpt(text, EXCERPT_CHARS)
                    )),
                    ..Verdict::pass()
                },
                Err(error) => not_json(&error, output),
            });
        };
        let parsed = match parse(text) {
            Parsed::Value(value) => value,
            Parsed::NotJson(error) => return Ok(not_json(&error, output)),
            Parsed::Unparsable(why) => {
                return Err(ScoreError::Unchecked(format!(
                    "the output cannot be checked against the schema: {why}"
                )));
            }
        };
        let errors: Vec<String> = validator
            .iter_errors(&parsed)
            .take(5)
            .map(|e| {
                let at = e.instance_path().to_string();
                format!("{}: {e}", if at.is_empty() { "$".to_string() } else { at })
            })
            .collect();
        Ok(Verdict::explain(
            errors.is_empty(),
            || {
                format!(
                    "the output is JSON that matches the schema: {}",
                    excerpt(text, EXCERPT_CHARS)
                )
            },
            || format!("the JSON does not match the schema: {}", errors.join("; ")),
        ))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonDiffConfig {
    #[serde(default)]
    pub value: Option<Value>,
    /// Pass when the similarity is at least this (default 1: identical).
    #[serde(default)]
    pub threshold: Option<f64>,
    /// Numbers within this absolute difference count as equal.
    #[serde(default)]
    pub numeric_tolerance: Option<f64>,
    /// Keys present in the output but not the reference do not count against it.
    #[serde(default)]
    pub ignore_extra_keys: bool,
}

pub fn validate_diff(config: &JsonDiffConfig) -> Result<(), ConfigError> {
    if let Some(t) = config.threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(ConfigError::new(
            "threshold",
            format!("must be between 0 and 1, got {t}"),
        ));
    }
    if let Some(t) = config.numeric_tolerance
        && t < 0.0
    {
        return Err(ConfigError::new(
            "numeric_tolerance",
            format!("must not be negative, got {t}"),
        ));
    }
    Ok(())
}

/// Scores the output (parsed as JSON) against the reference.
///
/// Objects score the mean over their keys (a missing key scores 0; an extra
/// key scores 0 unless `ignore_extra_keys`), arrays the mean over positions
/// (the longer length counts), scalars 1 when equal; a type mismatch is 0.
pub fn json_diff(
    config: &JsonDiffConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ScoreError> {
    let reference = reference(config.value.as_ref(), expected)?;
    // A reference given as a string holding JSON (e.g. `--expected '{"a":1}'`) is parsed.
    let parsed_reference;
    let reference = match reference {
        Value::String(s) => match parse(s) {
            Parsed::Value(v) => {
                parsed_reference = v;
                &parsed_reference
            }
            Parsed::NotJson(_) => reference,
            Parsed::Unparsable(why) => {
                return Err(ScoreError::Unchecked(format!(
                    "the reference cannot be compared: {why}"
                )));
            }
        },
        other => other,
    };
    let actual = match parse(output.trim()) {
        Parsed::Value(value) => value,
        Parsed::NotJson(error) => return Ok(not_json(&error, output)),
        Parsed::Unparsable(why) => {
            return Err(ScoreError::Unchecked(format!(
                "the output cannot be compared: {why}"
            )));
        }
    };
    let mut diffs = Vec::new();
    let similarity = compare(config, reference, &actual, "$", &mut diffs);
    let threshold = config.threshold.unwrap_or(1.0);
    let passed = similarity >= threshold;
    Ok(Verdict {
        value: Some(similarity),
        passed: Some(passed),
        detail: Some(if diffs.is_empty() {
            format!("similarity {similarity:.3} (need {threshold}): the JSON equals the reference")
        } else {
            let shown: Vec<&str> = diffs.iter().take(5).map(String::as_str).collect();
            let more = if diffs.len() > 5 {
                format!(" (and {} more)", diffs.len() - 5)
            } else {
                String::new()
            };
            format!(
                "similarity {similarity:.3} (need {threshold}); {}{more}",
                shown.join("; ")
            )
        }),
    })
}

fn compare(
    config: &JsonDiffConfig,
    want: &Value,
    got: &Value,
    path: &str,
    diffs: &mut Vec<String>,
) -> f64 {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let mut total = 0.0;
            let mut count = 0usize;
            for (key, wv) in w {
                count += 1;
                let child = format!("{path}.{key}");
                match g.get(key) {
                    Some(gv) => total += compare(config, wv, gv, &child, diffs),
                    None => diffs.push(format!("{child}: missing (expected {})", short(wv))),
                }
            }
            if !config.ignore_extra_keys {
                for key in g.keys().filter(|k| !w.contains_key(*k)) {
                    count += 1;
                    diffs.push(format!("{path}.{key}: unexpected key"));
                }
            }
            if count == 0 {
                1.0
            } else {
                total / count as f64
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            let len = w.len().max(g.len());
            if len == 0 {
                return 1.0;
            }
            let mut total = 0.0;
            for i in 0..len {
                let child = format!("{path}[{i}]");
                match (w.get(i), g.get(i)) {
                    (Some(wv), Some(gv)) => total += compare(config, wv, gv, &child, diffs),
                    (Some(wv), None) => {
                        diffs.push(format!("{child}: missing (expected {})", short(wv)))
                    }
                    (None, Some(_)) => diffs.push(format!("{child}: unexpected element")),
                    (None, None) => {}
                }
            }
            total / len as f64
        }
        (Value::Number(w), Value::Number(g)) => {
            let (w, g) = (
                w.as_f64().unwrap_or(f64::NAN),
                g.as_f64().unwrap_or(f64::NAN),
            );
            if (w - g).abs() <= config.numeric_tolerance.unwrap_or(0.0) {
                1.0
            } else {
                diffs.push(format!("{path}: expected {w}, got {g}"));
                0.0
            }
        }
        (w, g) if w == g => 1.0,
        (w, g) => {
            diffs.push(format!("{path}: expected {}, got {}", short(w), short(g)));
            0.0
        }
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        None => text,
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn is_json_with_schema() {
        let s = IsJson::new(IsJsonConfig {
            value: Some(json!({"type": "object", "required": ["a"]})),
        })
        .unwrap();
        assert_eq!(s.score(r#"{"a": 1}"#).unwrap().passed, Some(true));
        let v = s.score(r#"{"b": 1}"#).unwrap();
        assert_eq!(v.passed, Some(false));
        assert!(v.detail.unwrap().contains("\"a\" is a required property"));
        assert_eq!(s.score("not json").unwrap().passed, Some(false));
        let bad = IsJson::new(IsJsonConfig {
            value: Some(json!({"type": 12})),
        });
        assert_eq!(bad.err().unwrap().path, "value");
        let bad = IsJson::new(IsJsonConfig {
            value: Some(json!("string")),
        });
        assert_eq!(bad.err().unwrap().path, "value");
    }

    fn nested(depth: usize, inner: &str) -> String {
        format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn json_at_any_depth_is_json() {
        let plain = IsJson::new(IsJsonConfig { value: None }).unwrap();
        let schema = IsJson::new(IsJsonConfig {
            value: Some(json!({"type": "array"})),
        })
        .unwrap();
        for depth in [
            1,
            MAX_PARSE_DEPTH,
            MAX_PARSE_DEPTH + 1,
            128,
            10_000,
            1_000_000,
        ] {
            let deep = nested(depth, "1");
            assert_eq!(depth_of(&deep), depth);
            assert_eq!(plain.score(&deep).unwrap().passed, Some(true), "{depth}");
            for broken in [
                nested(depth, "1,"),
                format!("{}]", nested(depth, "")),
                format!("{}{}", "[".repeat(depth), "]".repeat(depth - 1)),
                nested(depth, "\"x"),
            ] {
                let verdict = plain.score(&broken).unwrap();
                assert_eq!(verdict.passed, Some(false), "{depth}");
                assert!(verdict.detail.unwrap().contains("not JSON"));
                assert_eq!(schema.score(&broken).unwrap().passed, Some(false));
            }
            match schema.score(&deep) {
                Ok(verdict) => {
                    assert!(depth <= MAX_PARSE_DEPTH, "{depth}");
                    assert_eq!(verdict.passed, Some(true));
                }
                Err(ScoreError::Unchecked(why)) => {
                    assert!(depth > MAX_PARSE_DEPTH, "{depth}: {why}");
                    assert!(
                        why.contains(&format!("nested {depth} levels deep")),
                        "{why}"
                    );
                }
                Err(other) => panic!("{other:?}"),
            }
        }
        // Valid JSON that serde_json cannot hold: checked as JSON, not
        // as a value.
        for text in ["1e400", r#""\ud800""#, r#"{"a": [1e999]}"#] {
            assert_eq!(plain.score(text).unwrap().passed, Some(true), "{text}");
            assert!(matches!(schema.score(text), Err(ScoreError::Unchecked(_))));
        }
        // Brackets inside strings do not count.
        assert_eq!(depth_of(r#"["[[[\"{", {"a": "]]"}]"#), 2);
    }

    fn depth_of(text: &str) -> usize {
        depth(text)
    }

    #[test]
    fn json_diff_of_json_past_the_parser_is_unchecked() {
        let c: JsonDiffConfig = serde_json::from_value(json!({"value": [1]})).unwrap();
        let deep = nested(500, "1");
        assert!(matches!(
            json_diff(&c, &deep, None),
            Err(ScoreError::Unchecked(why)) if why.contains("nested 500 levels deep")
        ));
        assert_eq!(
            json_diff(&c, &nested(500, "1,"), None).unwrap().passed,
            Some(false)
        );
        let by_string: JsonDiffConfig = serde_json::from_value(json!({"value": deep})).unwrap();
        assert!(matches!(
            json_diff(&by_string, "[1]", None),
            Err(ScoreError::Unchecked(why)) if why.starts_with("the reference")
        ));
    }

    #[test]
    fn json_diff_gives_partial_credit() {
        let c: JsonDiffConfig =
            serde_json::from_value(json!({"value": {"a": 1, "b": {"c": 2, "d": 3}}})).unwrap();
        let v = json_diff(&c, r#"{"a": 1, "b": {"c": 2, "d": 4}}"#, None).unwrap();
        assert!((v.value.unwrap() - 0.75).abs() < 1e-9);
        assert_eq!(v.passed, Some(false));
        assert!(v.detail.unwrap().contains("$.b.d: expected 3, got 4"));
        let exact = json_diff(&c, r#"{"b": {"d": 3, "c": 2}, "a": 1}"#, None).unwrap();
        assert_eq!(
            (exact.value, exact.passed, exact.detail),
            (
                Some(1.0),
                Some(true),
                Some("similarity 1.000 (need 1): the JSON equals the reference".into())
            )
        );
    }

    #[test]
    fn json_diff_parses_string_references() {
        let c: JsonDiffConfig = serde_json::from_value(json!({})).unwrap();
        let v = json_diff(&c, "[1,2]", Some(&json!("[1,2,3]"))).unwrap();
        assert!((v.value.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    }
}
