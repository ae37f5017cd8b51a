//! A JSON object whose members keep the order a record writer gives them
//! (a score's first appearance, `k` = 1, 2, …) while its schema is that of a
//! map: what the record types use where a `BTreeMap` would re-sort what a
//! reader sees.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// Members in the order they were pushed; serialized as a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderedMap<T>(pub Vec<(String, T)>);

impl<T> Default for OrderedMap<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> FromIterator<(String, T)> for OrderedMap<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<T: Serialize> Serialize for OrderedMap<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<T: JsonSchema> JsonSchema for OrderedMap<T> {
    fn schema_name() -> Cow<'static, str> {
        BTreeMap::<String, T>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        BTreeMap::<String, T>::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        BTreeMap::<String, T>::json_schema(generator)
    }

    fn inline_schema() -> bool {
        BTreeMap::<String, T>::inline_schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_their_order_and_the_schema_is_a_maps() {
        let map: OrderedMap<f64> = [("b".to_string(), 1.0), ("a".to_string(), 0.5)]
            .into_iter()
            .collect();
        assert_eq!(serde_json::to_string(&map).unwrap(), r#"{"b":1.0,"a":0.5}"#);
        assert_eq!(
            schemars::schema_for!(OrderedMap<f64>),
            schemars::schema_for!(BTreeMap<String, f64>)
        );
    }
}
