//! A JSON object's members in order, each value left as its JSON text: for
//! the places that edit or pick apart an object's top level without
//! building (or rebuilding) the values inside it.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The members of a JSON object, borrowed from its text.
pub struct Members<'a>(pub Vec<(String, &'a RawValue)>);

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
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
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
            .map(|(k, v)| (k.as_str(), v.get()))
            .collect();
        assert_eq!(
            shown,
            [("b", "[1, 2.50]"), ("a", r#"{"x": "y"}"#), ("b", "3")]
        );
        assert!(Members::of("[1]").is_none());
        assert!(Members::of(r#"{"a": 1"#).is_none());
    }
}
