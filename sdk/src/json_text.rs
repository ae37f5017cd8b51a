//! Compact JSON text of a [`serde_json::Value`], byte-for-byte what
//! `serde_json::to_string` writes, built for WebAssembly.
//!
//! Every packet a preset returns crosses the boundary as JSON text, so a
//! run serializes each case several times. `serde_json` escapes strings one
//! byte at a time through a lookup table; here a string is scanned eight
//! bytes at a time and copied in runs, which makes serialization several
//! times faster in a guest, where the byte loop is the hot spot.

use std::fmt::Write;

use serde_json::Value;

/// `value` as compact JSON text (the same bytes as `serde_json::to_string`).
pub fn to_text(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        // `Number`'s Display is its JSON form (itoa / ryu, as serde_json).
        Value::Number(n) => write!(out, "{n}").expect("writing to a String"),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether any of the 8 bytes in `word` needs escaping: a control byte
/// (< 0x20), `"` or `\`. Exact (the borrow of the zero-byte test never
/// reports a byte that is not there).
fn needs_escape(word: u64) -> bool {
    let below = |n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word;
    let equal = |b: u8| {
        let x = word ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x
    };
    (below(0x20) | equal(b'"') | equal(b'\\')) & HIGH != 0
}

fn write_str(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push('"');
    // `start..i` is the pending run of bytes copied as they are.
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            if !needs_escape(word) {
                i += 8;
                continue;
            }
        }
        // A word with something to escape (or the tail): byte by byte.
        for j in i..(i + 8).min(bytes.len()) {
            let byte = bytes[j];
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0x00..=0x1f => "",
                _ => continue,
            };
            // Escaped bytes are ASCII, so `start..j` ends on a char boundary.
            out.push_str(&s[start..j]);
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(byte >> 4)]));
                out.push(char::from(HEX[usize::from(byte & 0xf)]));
            } else {
                out.push_str(escape);
            }
            start = j + 1;
        }
        i += 8;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strings_match_serde_json_for_every_byte_and_position() {
        // Every ASCII byte at every offset of a word, plus multi-byte chars.
        for byte in 0u8..0x80 {
            for offset in 0..12 {
                let s = format!("{}{}tail é✓", "x".repeat(offset), char::from(byte));
                let value = Value::String(s);
                assert_eq!(
                    to_text(&value),
                    serde_json::to_string(&value).unwrap(),
                    "byte {byte:#x} at {offset}"
                );
            }
        }
        for s in [
            "",
            "é",
            "\u{2028}\u{7f}",
            "\"\"\\\\",
            "naïve café ✓ 🎉 \u{1}",
        ] {
            let value = Value::String(s.into());
            assert_eq!(to_text(&value), serde_json::to_string(&value).unwrap());
        }
    }

    #[test]
    fn documents_match_serde_json() {
        let value = json!({
            "caseId": "c-1",
            "n": [0, -7, 18446744073709551615u64, 1.5, 1e300, -0.0, 0.1],
            "nested": {"a\nb": [null, true, false, {}, []], "": "x"},
            "text": "line 1\nline \"2\"\t\\",
        });
        assert_eq!(to_text(&value), serde_json::to_string(&value).unwrap());
    }
}
