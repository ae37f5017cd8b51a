//! Compact JSON text of a [`serde_json::Value`], byte-for-byte what
//! `serde_json::to_string` writes, built for WebAssembly.
//!
//! Every packet a preset returns crosses the boundary as JSON text, so a
//! run serializes each case several times. `serde_json` escapes strings one
//! byte at a time through a lookup table; here a string is scanned eight
//! bytes at a time and copied in runs, which makes serialization several
//! times faster in a guest, where the byte loop is the hot spot.

use std::fmt::Write;
use std::ops::Range;

use serde_json::Value;

/// `value` as compact JSON text (the same bytes as `serde_json::to_string`).
pub fn to_text(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(&mut out, value);
    out
}

/// The JSON text of an object, with where each member's key (quoted) and
/// value are in it, so a later object that carries some of those members
/// unchanged can copy their text ([`to_text_carrying`]).
pub struct Written {
    pub text: String,
    members: Vec<(Range<usize>, Range<usize>)>,
}

/// `value` as compact JSON text (as [`to_text`]), with its top-level
/// members' places when it is an object.
pub fn to_text_with_members(value: &Value) -> Written {
    let Value::Object(map) = value else {
        return Written {
            text: to_text(value),
            members: Vec::new(),
        };
    };
    let mut text = String::with_capacity(128);
    let mut members = Vec::with_capacity(map.len());
    write_object(&mut text, map, |out, key, item| {
        let start = out.len();
        write_value(out, item);
        members.push((key, start..out.len()));
    });
    Written { text, members }
}

/// `value` as compact JSON text (as [`to_text`]), where each of the first
/// `carried` members of the object `value` is a member of the object
/// `source` was written from, unchanged: its text is copied from
/// `source.text` instead of being written again. A carried key that
/// `source` lacks is written as usual.
pub fn to_text_carrying(value: &Value, carried: usize, source: &Written) -> String {
    let Value::Object(map) = value else {
        return to_text(value);
    };
    let mut out = String::with_capacity(source.text.len() + 128);
    // Carried members usually keep their order: search on from the last.
    let mut next = 0;
    let mut index = 0;
    write_object(&mut out, map, |out, key, item| {
        let n = source.members.len();
        let found = (index < carried)
            .then(|| {
                (0..n)
                    .map(|k| (next + k) % n)
                    .find(|&m| source.text[source.members[m].0.clone()] == out[key.clone()])
            })
            .flatten();
        index += 1;
        match found {
            Some(m) => {
                let text = &source.text[source.members[m].1.clone()];
                debug_assert_eq!(
                    text,
                    to_text(item),
                    "carried member {} was changed",
                    &out[key]
                );
                out.push_str(text);
                next = m + 1;
            }
            None => write_value(out, item),
        }
    });
    out
}

/// Writes `map` as a JSON object; `member` writes each member's value,
/// given where its quoted key was written in `out`.
fn write_object(
    out: &mut String,
    map: &serde_json::Map<String, Value>,
    mut member: impl FnMut(&mut String, Range<usize>, &Value),
) {
    out.push('{');
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let start = out.len();
        write_str(out, key);
        let key = start..out.len();
        out.push(':');
        member(out, key, item);
    }
    out.push('}');
}

/// Appends `value` as compact JSON text (what `serde_json::to_string`
/// writes).
pub fn write_value(out: &mut String, value: &Value) {
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
        Value::Object(map) => write_object(out, map, |out, _, item| write_value(out, item)),
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

/// Appends `s` as a JSON string literal, quoted and escaped as
/// `serde_json` escapes it.
pub fn write_str(out: &mut String, s: &str) {
    let at = out.len();
    // SAFETY: `write_escaped` writes ASCII bytes and runs of `s` that start
    // at its start or after an ASCII byte, and end before an ASCII byte or
    // at its end: on char boundaries, so `out` stays UTF-8.
    write_escaped(unsafe { out.as_mut_vec() }, s.as_bytes());
    debug_assert!(std::str::from_utf8(&out.as_bytes()[at..]).is_ok());
}

/// What each byte is escaped with after a `\`: 0 = not escaped, `u` =
/// `\u00XX`.
const ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // `start..` is the pending run of bytes copied as they are.
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
        for (j, &byte) in bytes.iter().enumerate().skip(i).take(8) {
            let escape = ESCAPES[usize::from(byte)];
            if escape == 0 {
                continue;
            }
            copy_run(out, &bytes[start..j]);
            if escape == b'u' {
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ]);
            } else {
                out.extend_from_slice(&[b'\\', escape]);
            }
            start = j + 1;
        }
        i += 8;
    }
    copy_run(out, &bytes[start..]);
    out.push(b'"');
}

/// Appends `run`: a short one byte by byte, since a guest's copy of a few
/// bytes costs more as a call out to the runtime's `memory.copy` than as
/// a loop.
fn copy_run(out: &mut Vec<u8>, run: &[u8]) {
    if run.len() < 16 {
        for &byte in run {
            out.push(byte);
        }
    } else {
        out.extend_from_slice(run);
    }
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
            // Dense escapes (JSON in a string) and runs either side of the
            // byte-by-byte limit, with multi-byte chars at their edges.
            r#"{"id": 0, "tags": ["a", "b"], "body": "x\ny"}"#,
            "é✓é✓é✓é✓é✓é✓é✓é\"\t✓é✓é✓é✓é✓é✓é✓é✓é✓é✓é✓é✓é✓é\\",
            "0123456789abcde\"0123456789abcdef\"🎉0123456789ab\n",
        ] {
            let value = Value::String(s.into());
            assert_eq!(to_text(&value), serde_json::to_string(&value).unwrap());
        }
    }

    #[test]
    fn carried_members_are_copied_from_the_source_text() {
        let source = json!({
            "caseId": "c-1",
            "observed": {"finalText": "say \"hi\"\n", "messages": [{"role": "user"}]},
            "n": 1.5,
            "quote\"key": [true, null],
        });
        let written = to_text_with_members(&source);
        assert_eq!(written.text, serde_json::to_string(&source).unwrap());
        // Carried members in any order, a carried key the source lacks (written
        // as usual), and members past `carried` (never looked up).
        let body = json!({
            "quote\"key": [true, null],
            "observed": {"finalText": "say \"hi\"\n", "messages": [{"role": "user"}]},
            "absent": "x",
            "caseId": "c-1",
            "zz": 2,
        });
        // `zz` (not the source's) comes last in insertion and in key order.
        for carried in 0..=4 {
            assert_eq!(
                to_text_carrying(&body, carried, &written),
                serde_json::to_string(&body).unwrap(),
                "carried {carried}"
            );
        }
        // Not an object: written as usual, whatever the source.
        let list = json!([1, "a"]);
        assert_eq!(to_text_carrying(&list, 2, &written), "[1,\"a\"]");
        assert_eq!(to_text_with_members(&list).text, "[1,\"a\"]");
    }

    #[test]
    fn a_member_past_its_carried_count_is_written_from_its_value() {
        // `n` differs from the source's: outside the carried prefix it is
        // written from the body, never copied.
        let written = to_text_with_members(&json!({"a": "1", "n": 1}));
        let body = json!({"a": "1", "n": 2});
        assert_eq!(to_text_carrying(&body, 1, &written), r#"{"a":"1","n":2}"#);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "carried member \"n\" was changed")]
    fn a_changed_carried_member_is_caught_in_debug_builds() {
        let written = to_text_with_members(&json!({"n": 1}));
        to_text_carrying(&json!({"n": 2}), 1, &written);
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
