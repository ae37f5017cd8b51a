//! Property tests of cassette loading ([`crate::eval::provider::cassette_file`]): a
//! cassette as a run writes it, with entries of any JSON under keys that
//! are and are not call keys, then damaged (cut short, a byte changed,
//! bytes inserted, a span repeated) and read under a size cap. Reading
//! never panics; a file past the cap is refused naming the flag that
//! raises it; whatever is accepted holds only call keys, each once and in
//! order (a key twice is refused), whose entries are JSON values exactly as they stand in the file;
//! and an undamaged cassette reads back byte for byte.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::eval::provider::cassette_file::{MAX_FLAG, read, write};

/// A key: a call key (64 lowercase hex digits) most of the time, else
/// something a hand may have written.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[0-9a-f]{64}",
        1 => "[0-9A-F]{64}",
        1 => "[0-9a-z \"\\\\]{0,70}",
    ]
}

/// Any JSON value, a few levels deep, with strings that need escaping.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(|f| json!(f)),
        "(?s).{0,24}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map("(?s).{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A change to a file's bytes.
#[derive(Debug, Clone)]
enum Damage {
    None,
    Cut(usize),
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Repeat(usize, usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        2 => Just(Damage::None),
        1 => any::<usize>().prop_map(Damage::Cut),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Damage::Set(at, b)),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Damage::Insert(at, bytes)),
        1 => (any::<usize>(), 1usize..200).prop_map(|(at, len)| Damage::Repeat(at, len)),
    ]
}

fn apply(bytes: &mut Vec<u8>, damage: &Damage) {
    let at = |i: usize| i % (bytes.len() + 1);
    match damage {
        Damage::None => {}
        Damage::Cut(i) => bytes.truncate(at(*i)),
        Damage::Set(i, b) => {
            if !bytes.is_empty() {
                let i = i % bytes.len();
                bytes[i] = *b;
            }
        }
        Damage::Insert(i, new) => {
            let i = at(*i);
            bytes.splice(i..i, new.iter().copied());
        }
        Damage::Repeat(i, len) => {
            let i = at(*i);
            let end = (i + len).min(bytes.len());
            let span = bytes[i..end].to_vec();
            bytes.splice(i..i, span);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_cassette_is_read_whole_or_refused_and_what_is_read_is_what_it_holds(
        entries in proptest::collection::vec((key(), value()), 0..12),
        damage in damage(),
        cap in prop_oneof![Just(u64::MAX >> 1), 64u64..4096],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let texts: Vec<(String, String)> = entries
            .iter()
            .map(|(k, v)| (k.clone(), crate::eval::provider::cassette_file::entry_text(v)))
            .collect();
        write(
            &path,
            &[
                ("schemaVersion", json!(crate::eval::provider::cassette::SCHEMA)),
                ("recordedAt", json!("2026-11-26T00:00:00Z")),
            ],
            texts.iter().map(|(k, t)| (k.as_str(), t.as_str())),
        )
        .unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        apply(&mut bytes, &damage);
        std::fs::write(&path, &bytes).unwrap();

        let outcome = read(&path, cap);
        let all_keys = texts.iter().all(|(k, _)| {
            k.len() == 64 && k.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if bytes.len() as u64 > cap {
            let error = outcome.err().unwrap_or_default();
            prop_assert!(error.contains(MAX_FLAG), "{}", error);
            return Ok(());
        }
        let unique = {
            let mut keys: Vec<&str> = texts.iter().map(|(k, _)| k.as_str()).collect();
            keys.sort_unstable();
            keys.windows(2).all(|pair| pair[0] != pair[1])
        };
        if matches!(damage, Damage::None) {
            // Undamaged: read exactly when every key is a call key, once,
            // each entry byte for byte.
            prop_assert_eq!(outcome.is_ok(), all_keys && unique, "{:?}", outcome.as_ref().err());
            if let Ok(stored) = outcome {
                let stored = stored.unwrap();
                let mut want: std::collections::BTreeMap<&str, &str> = Default::default();
                for (k, t) in &texts {
                    want.insert(k, t);
                }
                let got: Vec<(String, &str)> = stored.iter().collect();
                prop_assert_eq!(got.len(), want.len());
                for ((k, t), (wk, wt)) in got.iter().zip(&want) {
                    prop_assert_eq!(k.as_str(), *wk);
                    prop_assert_eq!(t, wt);
                }
                prop_assert_eq!(stored.recorded_at.as_deref(), Some("2026-11-26T00:00:00Z"));
            }
            return Ok(());
        }
        // Damaged: refused with a message, or read; what is read holds
        // call keys in order, each entry a JSON value as it stands.
        match outcome {
            Err(error) => prop_assert!(!error.is_empty()),
            Ok(None) => prop_assert!(false, "a file that exists was read as none"),
            Ok(Some(stored)) => {
                let text = String::from_utf8(bytes).unwrap();
                let mut last: Option<String> = None;
                for (k, entry) in stored.iter() {
                    prop_assert!(k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
                    prop_assert!(last.as_deref() < Some(k.as_str()), "keys in order, once");
                    prop_assert_eq!(stored.get(&k), Some(entry));
                    prop_assert!(serde_json::from_str::<serde::de::IgnoredAny>(entry).is_ok(), "{}", entry);
                    prop_assert!(text.contains(entry));
                    last = Some(k);
                }
            }
        }
    }
}
