//! Compact JSON text of values the host builds (written into a byte buffer,
//! which is faster than `Display`), for records and identities.

use serde::Serialize;

/// `value` as compact JSON text.
pub fn to_text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("host values serialize to JSON")
}

/// An object of `members`, in order, as compact JSON text, without building
/// the object (values may be [`serde_json::Value`]s or raw JSON text,
/// [`serde_json::value::RawValue`]).
pub fn object_text<'a, V: Serialize + ?Sized + 'a>(
    members: impl Iterator<Item = (&'a str, &'a V)>,
) -> String {
    let mut out = Vec::with_capacity(64);
    serde::Serializer::collect_map(&mut serde_json::Serializer::new(&mut out), members)
        .expect("a JSON map serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn members_are_written_in_order_as_an_object() {
        let (a, b) = (json!([1, "x\"y"]), json!(null));
        assert_eq!(
            object_text([("b", &a), ("a", &b)].into_iter()),
            r#"{"b":[1,"x\"y"],"a":null}"#
        );
        assert_eq!(
            object_text(std::iter::empty::<(&str, &serde_json::Value)>()),
            "{}"
        );
        assert_eq!(to_text(&json!({"k": [1.5]})), r#"{"k":[1.5]}"#);
    }
}
