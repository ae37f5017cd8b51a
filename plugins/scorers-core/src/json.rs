//! JSON checks: `is-json` (optionally against a JSON Schema) and
//! `json-diff` (recursive partial credit against a reference).

use serde::Deserialize;
use serde_json::Value;

use crate::{ConfigError, EXCERPT_CHARS, Verdict, excerpt, reference};

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

    pub fn score(&self, output: &str) -> Verdict {
        let parsed: Value = match serde_json::from_str(output.trim()) {
            Ok(v) => v,
            Err(e) => {
                return Verdict::fail(format!(
                    "the output is not JSON ({e}): {}",
                    excerpt(output, EXCERPT_CHARS)
                ));
            }
        };
        let Some(validator) = &self.validator else {
            return Verdict::pass();
        };
        let errors: Vec<String> = validator
            .iter_errors(&parsed)
            .take(5)
            .map(|e| {
                let at = e.instance_path().to_string();
                format!("{}: {e}", if at.is_empty() { "$".to_string() } else { at })
            })
            .collect();
        Verdict::check(errors.is_empty(), || {
            format!("the JSON does not match the schema: {}", errors.join("; "))
        })
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
) -> Result<Verdict, ConfigError> {
    let reference = reference(config.value.as_ref(), expected)?;
    // A reference given as a string holding JSON (e.g. `--expected '{"a":1}'`) is parsed.
    let parsed_reference;
    let reference = match reference {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v) => {
                parsed_reference = v;
                &parsed_reference
            }
            Err(_) => reference,
        },
        other => other,
    };
    let actual: Value = match serde_json::from_str(output.trim()) {
        Ok(v) => v,
        Err(e) => {
            return Ok(Verdict::fail(format!(
                "the output is not JSON ({e}): {}",
                excerpt(output, EXCERPT_CHARS)
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
        detail: (!diffs.is_empty()).then(|| {
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
        assert_eq!(s.score(r#"{"a": 1}"#).passed, Some(true));
        let v = s.score(r#"{"b": 1}"#);
        assert_eq!(v.passed, Some(false));
        assert!(v.detail.unwrap().contains("\"a\" is a required property"));
        assert_eq!(s.score("not json").passed, Some(false));
        let bad = IsJson::new(IsJsonConfig {
            value: Some(json!({"type": 12})),
        });
        assert_eq!(bad.err().unwrap().path, "value");
        let bad = IsJson::new(IsJsonConfig {
            value: Some(json!("string")),
        });
        assert_eq!(bad.err().unwrap().path, "value");
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
            (Some(1.0), Some(true), None)
        );
    }

    #[test]
    fn json_diff_parses_string_references() {
        let c: JsonDiffConfig = serde_json::from_value(json!({})).unwrap();
        let v = json_diff(&c, "[1,2]", Some(&json!("[1,2,3]"))).unwrap();
        assert!((v.value.unwrap() - 2.0 / 3.0).abs() < 1e-9);
    }
}
