//! The syntax of one assertion: `{type, ...config, name?, weight?,
//! required?}` or a plain-string criterion for the judge, split into what
//! the host reads and the scorer's config (kept as a view of the
//! assertion, written as JSON text once).

use serde_json::{Map, Value, json};

/// Keys of an assertion the host reads; everything else is scorer config.
const ASSERTION_KEYS: &[&str] = &["type", "name", "weight", "required"];

/// The built-in scorer that grades natural-language criteria.
pub(in crate::eval) const JUDGE: &str = "judge";

/// An assertion split into what the host reads and the scorer config.
pub(in crate::eval) struct Parsed<'a> {
    pub(in crate::eval) reference: String,
    pub(in crate::eval) config: AssertionConfig<'a>,
    pub(in crate::eval) name: Option<String>,
    pub(in crate::eval) weight: f64,
    pub(in crate::eval) required: bool,
}

/// The scorer config of an assertion: the criterion of a plain string, or
/// the assertion's object without the keys the host reads (never copied
/// unless a check needs it as a value).
pub(in crate::eval) enum AssertionConfig<'a> {
    Criterion(&'a str),
    Fields(&'a Map<String, Value>),
}

impl AssertionConfig<'_> {
    fn entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        let fields = match self {
            Self::Fields(object) => Some(object),
            Self::Criterion(_) => None,
        };
        fields
            .into_iter()
            .flat_map(|object| object.iter())
            .filter(|(k, _)| !ASSERTION_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.as_str(), v))
    }

    /// The config as compact JSON text (what identifies it in a suite).
    pub(in crate::eval) fn text(&self) -> String {
        match self {
            Self::Criterion(criterion) => json!({ "criteria": criterion }).to_string(),
            Self::Fields(_) => crate::json_text::object_text(self.entries()),
        }
    }

    /// The config as a JSON object.
    pub(in crate::eval) fn value(&self) -> Value {
        match self {
            Self::Criterion(criterion) => json!({ "criteria": criterion }),
            Self::Fields(_) => Value::Object(
                self.entries()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            ),
        }
    }

    /// Whether it holds a key the host takes off a scorer's config.
    pub(in crate::eval) fn has_host_keys(&self) -> bool {
        self.entries()
            .any(|(k, _)| crate::plugin::scorer::HOST_KEYS.contains(&k))
    }
}

/// Splits an assertion into its type, scorer config, name, weight and
/// whether it is required.
pub(in crate::eval) fn parse<'a>(
    raw: &'a Value,
    at: &(impl std::fmt::Display + ?Sized),
) -> Result<Parsed<'a>, (String, String)> {
    let problem = |path: String, message: String| (path, message);
    if let Value::String(criterion) = raw {
        if criterion.trim().is_empty() {
            return Err(problem(
                at.to_string(),
                "an empty criterion; write what a good answer does, or use `{type: <scorer>, ...}`"
                    .into(),
            ));
        }
        return Ok(Parsed {
            reference: JUDGE.into(),
            config: AssertionConfig::Criterion(criterion),
            name: Some(criterion.clone()),
            weight: 1.0,
            required: true,
        });
    }
    let Some(object) = raw.as_object() else {
        return Err(problem(
            at.to_string(),
            "an assertion is an object `{type: <scorer>, ...config}` or a plain-string criterion for the judge".into(),
        ));
    };
    // One pass over the members (a lookup per key would hash each).
    let (mut kind, mut name, mut weight, mut required) = (None, None, None, None);
    for (key, value) in object {
        match key.as_str() {
            "type" => kind = Some(value),
            "name" => name = Some(value),
            "weight" => weight = Some(value),
            "required" => required = Some(value),
            _ => {}
        }
    }
    let reference = match kind {
        Some(Value::String(t)) if !t.trim().is_empty() => t.clone(),
        _ => {
            return Err(problem(
                format!("{at}.type"),
                "is missing: name a scorer (e.g. `contains`, `regex`, `./my_scorer.wasm`)".into(),
            ));
        }
    };
    let name = match name {
        None | Some(Value::Null) => None,
        Some(Value::String(n)) => Some(n.clone()),
        Some(_) => return Err(problem(format!("{at}.name"), "must be a string".into())),
    };
    let weight = match weight {
        None | Some(Value::Null) => 1.0,
        Some(w) => match w.as_f64().filter(|w| *w >= 0.0 && w.is_finite()) {
            Some(w) => w,
            None => {
                return Err(problem(
                    format!("{at}.weight"),
                    "must be a non-negative number".into(),
                ));
            }
        },
    };
    let required = match required {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(problem(
                format!("{at}.required"),
                "must be true or false".into(),
            ));
        }
    };
    Ok(Parsed {
        reference,
        config: AssertionConfig::Fields(object),
        name,
        weight,
        required,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_is_the_assertion_without_the_host_keys_written_as_json() {
        let raw = json!({"type": "regex", "value": "^a\"b", "name": "n", "weight": 2,
                         "required": false, "negate": true, "flags": {"i": [1, 2.5, null]}});
        let parsed = parse(&raw, "assertions[0]").unwrap();
        let expected = json!({"value": "^a\"b", "negate": true, "flags": {"i": [1, 2.5, null]}});
        assert_eq!(parsed.config.text(), expected.to_string());
        assert_eq!(parsed.config.value(), expected);
        assert!(parsed.config.has_host_keys());
        let plain = json!({"type": "contains", "value": "x"});
        let parsed = parse(&plain, "assertions[1]").unwrap();
        assert_eq!(parsed.config.text(), r#"{"value":"x"}"#);
        assert!(!parsed.config.has_host_keys());
        let criterion = json!("is polite");
        let parsed = parse(&criterion, "assertions[2]").unwrap();
        assert_eq!(parsed.config.text(), r#"{"criteria":"is polite"}"#);
        assert_eq!(parsed.reference, JUDGE);
    }
}
