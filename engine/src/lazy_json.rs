//! A JSON value kept as its text until something looks at it.
//!
//! A preset's suite contract carries JSON Schemas (most of the bytes of a
//! kept description, [`crate::plugin`]'s `described`). A process reads the
//! kept descriptions of every built-in but uses one preset's schemas, so
//! building all of them as [`Value`]s was most of the time spent reading
//! what the built-ins said about themselves. A [`LazyValue`] read from JSON
//! text keeps the text (checked to be JSON) and parses it on first use;
//! one made from a [`Value`] is that value.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON value, parsed from its text when first used (see the module
/// docs). Derefs to the [`Value`].
pub struct LazyValue {
    /// The text it was read from, when it was read.
    text: Option<Box<RawValue>>,
    value: OnceLock<Value>,
}

impl LazyValue {
    /// The value (parsed now, the first time).
    pub fn get(&self) -> &Value {
        self.value.get_or_init(|| match &self.text {
            Some(text) => parse(text.get()),
            None => Value::Null,
        })
    }
}

/// The value of JSON text already checked to be JSON. Parsing it again can
/// fail only where the text nests deeper than a [`Value`] may (the text was
/// written from a value, so only a hand-edited file does that): such a
/// schema becomes `false`, which accepts nothing, rather than a schema that
/// accepts everything.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| {
        eprintln!(
            "warning: a kept JSON Schema cannot be read back ({e}); it accepts nothing (delete the cache's `described` directory to describe the built-ins again)"
        );
        Value::Bool(false)
    })
}

impl From<Value> for LazyValue {
    fn from(value: Value) -> Self {
        Self {
            text: None,
            value: OnceLock::from(value),
        }
    }
}

impl Default for LazyValue {
    fn default() -> Self {
        Value::Null.into()
    }
}

impl Deref for LazyValue {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.get()
    }
}

impl Clone for LazyValue {
    fn clone(&self) -> Self {
        match (self.value.get(), &self.text) {
            (None, Some(text)) => Self {
                text: Some(text.clone()),
                value: OnceLock::new(),
            },
            _ => self.get().clone().into(),
        }
    }
}

impl fmt::Debug for LazyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// As the value (parsed first if it was not): a [`RawValue`] written by
/// any serializer but `serde_json`'s would not be the value.
impl Serialize for LazyValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(serializer)
    }
}

/// Keeps the text: only JSON text (`serde_json` reading a string, slice or
/// reader) can be read this way, which is how kept descriptions are read.
impl<'de> Deserialize<'de> for LazyValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self {
            text: Some(Box::<RawValue>::deserialize(deserializer)?),
            value: OnceLock::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize, Deserialize, Clone, Debug)]
    struct Holder {
        name: String,
        schema: LazyValue,
    }

    #[test]
    fn read_from_text_it_parses_on_use_and_writes_back_the_same() {
        let text = r#"{"name":"n","schema":{"type":"object","properties":{"a":{"minLength":1}}}}"#;
        let holder: Holder = serde_json::from_str(text).unwrap();
        assert!(holder.schema.value.get().is_none(), "not parsed yet");
        let copy = holder.clone();
        assert_eq!(serde_json::to_string(&holder).unwrap(), text);
        assert_eq!(holder.schema["properties"]["a"]["minLength"], 1);
        assert_eq!(serde_json::to_string(&holder).unwrap(), text);
        assert_eq!(copy.schema.get(), holder.schema.get());
        assert_eq!(
            *copy.schema,
            json!({"type":"object","properties":{"a":{"minLength":1}}})
        );
    }

    #[test]
    fn made_from_a_value_it_is_that_value() {
        let lazy = LazyValue::from(json!([1, {"b": null}]));
        assert_eq!(lazy.get(), &json!([1, {"b": null}]));
        assert_eq!(
            serde_json::to_value(&lazy).unwrap(),
            json!([1, {"b": null}])
        );
        assert!(LazyValue::default().is_null());
    }

    #[test]
    fn text_that_is_not_json_is_refused_when_read() {
        assert!(serde_json::from_str::<Holder>(r#"{"name":"n","schema":{"a":}}"#).is_err());
        assert!(serde_json::from_str::<Holder>(r#"{"name":"n"}"#).is_err());
    }

    #[test]
    fn text_nested_deeper_than_a_value_may_becomes_a_schema_accepting_nothing() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let text = format!(r#"{{"name":"n","schema":{deep}}}"#);
        let holder: Holder = serde_json::from_str(&text).unwrap();
        assert_eq!(holder.schema.get(), &Value::Bool(false));
    }
}
