//! A JSON object's members in order, each value left as its JSON text: for
//! the places that edit or pick apart an object's top level without
//! building (or rebuilding) the values inside it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The members of a JSON object, borrowed from its text: a key is borrowed
/// too unless it has an escape (then it is unescaped into its own string).
pub struct Members<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    /// The members of `text`, or `None` when it is not one JSON object.
    pub fn of(text: &'a str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

impl<'de> de::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(16));
                while let Some((Key(key), value)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    members.push((key, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// A member's key, borrowed from the text when it has no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(key.to_string())))
            }
            fn visit_string<E: de::Error>(self, key: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_order_and_text() {
        let members = Members::of(r#"{"b": [1, 2.50], "a": {"x": "y"}, "b": 3}"#).unwrap();
        let shown: Vec<(&str, &str)> = members
            .0
            .iter()
            .map(|(k, v)| (k.as_ref(), v.get()))
            .collect();
        assert_eq!(
            shown,
            [("b", "[1, 2.50]"), ("a", r#"{"x": "y"}"#), ("b", "3")]
        );
        let escaped = Members::of(r#"{"a\"b": 1, "c": 2}"#).unwrap();
        assert!(matches!(&escaped.0[0].0, Cow::Owned(key) if key == "a\"b"));
        assert!(matches!(&escaped.0[1].0, Cow::Borrowed("c")));
        assert!(Members::of("[1]").is_none());
        assert!(Members::of(r#"{"a": 1"#).is_none());
    }
}
