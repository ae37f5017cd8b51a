//! A cassette file (`cautilus.cassette.v1`) on disk: read within a size
//! cap, held as its text with the byte range of each entry by key (an entry
//! is parsed only when a call hits it), and written back whole, entry by
//! entry, to a temporary file renamed into place.
//!
//! The cap ([`DEFAULT_MAX_MIB`], raised with `--max-cassette-mib`) bounds
//! what a cassette handed over in a pull request makes a run read: a
//! regular file past it is refused by its size before it is read, and a
//! file that does not tell its size (a device such as `/dev/zero`, a pipe)
//! is read no further than the cap. Held this way a cassette costs about
//! its size in memory (its text once, and a key and a range per entry);
//! held as a JSON tree it cost about 17 times its size.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::eval::EvalError;

/// The schema id of a cassette file.
pub const SCHEMA: &str = "cautilus.cassette.v1";

/// The largest cassette file read by default, in MiB.
pub const DEFAULT_MAX_MIB: u64 = 256;
/// The flag that raises it.
pub const MAX_FLAG: &str = "--max-cassette-mib";

/// A call key (the sha256 of a normalized request) as bytes.
type Key = [u8; 32];

/// `key` as bytes when it is a call key: 64 lowercase hex digits.
fn parse_key(key: &str) -> Option<Key> {
    let mut bytes = [0u8; 32];
    let lowercase = key
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (lowercase && hex::decode_to_slice(key, &mut bytes).is_ok()).then_some(bytes)
}

/// The entries of a cassette file as read: its text and where each entry's
/// JSON lies in it (48 bytes an entry; an entry is at least 69 bytes of
/// text, so the index never outgrows the file).
#[derive(Debug, Default)]
pub struct Stored {
    text: String,
    /// (key, start, end) of each entry in `text`, sorted by key, one per
    /// key (the last one written, as a JSON reader keeps).
    index: Vec<(Key, usize, usize)>,
    /// The file's `recordedAt`.
    pub recorded_at: Option<String>,
}

impl Stored {
    /// The JSON text of the entry under `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        let key = parse_key(key)?;
        let at = self.index.binary_search_by(|e| e.0.cmp(&key)).ok()?;
        let (_, start, end) = self.index[at];
        Some(&self.text[start..end])
    }

    /// Every entry's key (lowercase hex) and JSON text, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (String, &str)> {
        self.index
            .iter()
            .map(|(key, start, end)| (hex::encode(key), &self.text[*start..*end]))
    }
}

/// The file's members a run reads before any call: the rest is skipped.
#[derive(Deserialize)]
struct View<'a> {
    #[serde(rename = "schemaVersion", default)]
    schema_version: Option<Value>,
    #[serde(rename = "recordedAt", default)]
    recorded_at: Option<Value>,
    #[serde(borrow, default)]
    entries: Option<&'a RawValue>,
}

/// Reads `entries` (a slice of the file's text) into the index, holding
/// nothing per entry but its key and range.
struct IndexVisitor {
    /// Where the file's text starts.
    base: usize,
    /// The most entries the object's length allows.
    most: usize,
}

impl<'de> serde::de::Visitor<'de> for IndexVisitor {
    type Value = Vec<(Key, usize, usize)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object of entries by call key")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // Reserved, not touched: pages are used only as entries come.
        let mut index = Vec::with_capacity(self.most);
        while let Some(key) = map.next_key::<String>()? {
            let raw: &'de RawValue = map.next_value()?;
            let Some(key) = parse_key(&key) else {
                return Err(serde::de::Error::custom(format!(
                    "`{key}` is not a call key (64 lowercase hex digits)"
                )));
            };
            let start = raw.get().as_ptr() as usize - self.base;
            index.push((key, start, start + raw.get().len()));
        }
        Ok(index)
    }
}

/// Reads the cassette at `path` (`None` when there is none), refusing one
/// larger than `max_bytes`. Errors are the message for the file.
pub fn read(path: &Path, max_bytes: u64) -> Result<Option<Stored>, String> {
    let Some(text) = read_text(path, max_bytes)? else {
        return Ok(None);
    };
    let (index, recorded_at) = {
        let view: View = serde_json::from_str(&text)
            .map_err(|e| format!("not a cassette (invalid JSON: {e})"))?;
        if view.schema_version.as_ref().and_then(Value::as_str) != Some(SCHEMA) {
            return Err(format!(
                "not a cassette: `schemaVersion` must be `{}`",
                SCHEMA
            ));
        }
        let entries = view
            .entries
            .filter(|e| e.get().starts_with('{'))
            .ok_or("not a cassette: `entries` must be an object")?;
        let mut reader = serde_json::Deserializer::from_str(entries.get());
        let visitor = IndexVisitor {
            base: text.as_ptr() as usize,
            most: entries.get().len() / 66 + 1,
        };
        let mut index = serde::Deserializer::deserialize_map(&mut reader, visitor)
            .map_err(|e| format!("not a cassette: `entries`: {e}"))?;
        // Sorted by key; a key twice is an edit (cautilus writes each once).
        index.sort_by_key(|e| e.0);
        if let Some(pair) = index.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(format!(
                "not a cassette as cautilus writes it: key {} appears twice in `entries`; record it again (`--replay refresh`)",
                hex::encode(pair[0].0)
            ));
        }
        let kept = index;
        let recorded_at = view
            .recorded_at
            .as_ref()
            .and_then(Value::as_str)
            .map(str::to_string);
        (kept, recorded_at)
    };
    Ok(Some(Stored {
        text,
        index,
        recorded_at,
    }))
}

/// The file's text, refused when its size is past `max_bytes` and read no
/// further than that (it may grow while read).
fn read_text(path: &Path, max_bytes: u64) -> Result<Option<String>, String> {
    let file = match crate::regular_file::open_unlinked(path) {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("cannot read the cassette: {e}")),
    };
    let size = file.metadata().map_or(0, |m| m.len());
    if size > max_bytes {
        return Err(too_large(Some(size), max_bytes));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size + 1).unwrap_or(0));
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the cassette: {e}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(None, max_bytes));
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        format!(
            "not a cassette (not UTF-8 text at byte {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn too_large(size: Option<u64>, max_bytes: u64) -> String {
    let cap = max_bytes >> 20;
    let what = match size {
        Some(size) => format!("the cassette is {size} bytes, more than the {cap} MiB"),
        None => format!("the cassette grew past {cap} MiB while read (reading stopped there),"),
    };
    format!(
        "{what} a cassette may be ({MAX_FLAG}, default {DEFAULT_MAX_MIB}); if you trust it, raise the cap with `{MAX_FLAG} <MiB>`, else record it again (`--replay refresh`) or give each suite its own (`--cassette NAME`)"
    )
}

/// Writes a cassette to `path` atomically, streamed: the `header` members,
/// then `entries` (key, entry JSON) as the last member, in the given
/// order. Entry texts are written as they are (so an entry read from a file
/// keeps its bytes); they must be JSON values.
pub fn write<'a, K: AsRef<str>>(
    path: &Path,
    header: &[(&str, Value)],
    entries: impl Iterator<Item = (K, &'a str)>,
) -> Result<(), EvalError> {
    let json = |value: &Value| serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    crate::eval::files::write_streamed(path, |out| {
        out.write_all(b"{\n")?;
        for (name, value) in header {
            let value = serde_json::to_string_pretty(value)
                .unwrap_or_else(|_| "null".into())
                .replace('\n', "\n  ");
            writeln!(out, "  {}: {value},", json(&Value::from(*name)))?;
        }
        out.write_all(b"  \"entries\": {")?;
        let mut first = true;
        for (key, entry) in entries {
            let separator = if first { "\n" } else { ",\n" };
            first = false;
            let key = json(&Value::from(key.as_ref()));
            write!(out, "{separator}    {key}: {entry}")?;
        }
        out.write_all(if first { b"}\n}\n" } else { b"\n  }\n}\n" })
    })
}

/// `entry` as pretty JSON indented to sit among a cassette's entries (a
/// JSON text has no raw line break inside a string, so every line break
/// is between tokens).
pub fn entry_text(entry: &Value) -> String {
    serde_json::to_string_pretty(entry)
        .expect("a JSON value serializes")
        .replace('\n', "\n    ")
}

/// What a run reads of an entry without parsing it whole: the model of its
/// observation and the kind and adapter of its request.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Summary {
    pub observation: Option<SummaryObservation>,
    pub request: Option<SummaryRequest>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct SummaryObservation {
    pub model: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct SummaryRequest {
    pub kind: Option<String>,
    pub adapter: Option<String>,
}

/// The summary of an entry's text (an entry that does not read as one has
/// an empty summary: it is refused when a call hits it).
pub fn summary(entry: &str) -> Summary {
    serde_json::from_str(entry).unwrap_or_default()
}

/// Whether an entry's stored `request` is `request`, this call's request
/// redacted as recording stores it (credential fields, `redact` paths and
/// this run's secrets made `[redacted]`): equal, objects member by member
/// in any order. Nothing in a stored request stands for anything else, so
/// an entry edited or moved under another key (even with its texts written
/// `[redacted]` by hand) answers no other request. A request that held a
/// secret this run was not given (rare: a fixture cannot read credentials)
/// does not match, and is recorded again.
pub fn same_request(stored: &Value, request: &Value) -> bool {
    stored == request
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(dir: &Path, text: &str) -> std::path::PathBuf {
        let path = dir.join("c.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn entries_are_indexed_by_key_and_read_back_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = ("a".repeat(64), "b".repeat(64), "c".repeat(64));
        let text = format!(
            r#"{{"schemaVersion": "cautilus.cassette.v1", "models": ["m"],
            "entries": {{"{b}": {{"request": {{"kind": "provider", "adapter": "x\"y"}}, "observation": {{"model": "m"}}}},
                        "{a}": [1, {{"nested": "\u00e9"}}]}},
            "recordedAt": "2026-01-01T00:00:00Z"}}"#
        );
        let stored = read(&file(dir.path(), &text), 1 << 20).unwrap().unwrap();
        assert_eq!(stored.get(&a), Some(r#"[1, {"nested": "\u00e9"}]"#));
        // A key twice is no cassette cautilus wrote.
        let twice = text.replace(&format!("\"{a}\": ["), &format!("\"{a}\": 0, \"{a}\": ["));
        let error = read(&file(dir.path(), &twice), 1 << 20).unwrap_err();
        assert!(error.contains("appears twice"), "{error}");
        assert_eq!(stored.get(&c), None);
        assert_eq!(stored.get("not a key"), None);
        let keys: Vec<String> = stored.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, [a.clone(), b.clone()]);
        assert_eq!(stored.recorded_at.as_deref(), Some("2026-01-01T00:00:00Z"));
        let b_entry = summary(stored.get(&b).unwrap());
        assert_eq!(b_entry.request.unwrap().adapter.as_deref(), Some("x\"y"));
        assert_eq!(b_entry.observation.unwrap().model.as_deref(), Some("m"));
        assert!(summary("[1]").request.is_none());

        // Written back (with one new entry) and read again: the same bytes.
        let out = dir.path().join("out/c.json");
        let added = entry_text(&json!({"request": {"kind": "model"}, "observation": {}}));
        let mut entries: Vec<(String, &str)> = stored.iter().collect();
        entries.push((c.clone(), &added));
        write(
            &out,
            &[
                ("schemaVersion", json!("cautilus.cassette.v1")),
                ("models", json!(["m"])),
            ],
            entries.into_iter(),
        )
        .unwrap();
        let written = std::fs::read_to_string(&out).unwrap();
        let value: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(value["entries"][&c]["request"]["kind"], "model");
        assert!(
            written.contains(&format!(
                "\n    \"{c}\": {{\n      \"request\": {{\n        \"kind\": \"model\""
            )),
            "{written}"
        );
        let again = read(&out, 1 << 20).unwrap().unwrap();
        assert_eq!(again.get(&a), stored.get(&a));
        assert_eq!(again.get(&b), stored.get(&b));
        write(
            &out,
            &[("schemaVersion", json!("cautilus.cassette.v1"))],
            std::iter::empty::<(&str, &str)>(),
        )
        .unwrap();
        let empty: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(empty["entries"], json!({}));
    }

    #[test]
    fn a_stored_request_is_exactly_the_redacted_request() {
        // This call's request, redacted as recording stores it.
        let request = json!({"kind": "provider", "model": "m", "messages": [
            {"role": "user", "content": "key [redacted] here"}],
            "settings": {"apiKey": "[redacted]", "n": 1.5}});
        assert!(same_request(&request, &request));
        let mut reordered = json!({"settings": {"n": 1.5, "apiKey": "[redacted]"}, "model": "m",
            "messages": [{"content": "key [redacted] here", "role": "user"}], "kind": "provider"});
        assert!(same_request(&reordered, &request), "members in any order");
        for edited in [
            json!({"kind": "provider", "model": "m2", "messages": [], "settings": {}}),
            json!({"kind": "provider", "model": "m", "messages": [
                {"role": "user", "content": "key [redacted] there"}],
                "settings": {"apiKey": "[redacted]", "n": 1.5}}),
            json!({"kind": "provider", "model": "m", "messages": [
                {"role": "user", "content": "key [redacted] here"}],
                "settings": {"apiKey": "[redacted]", "n": 1.5, "extra": 1}}),
            Value::Null,
            // Texts written `[redacted]` by hand stand for nothing else.
            json!("[redacted]"),
            json!({"kind": "provider", "model": "m", "messages": [
                {"role": "user", "content": "[redacted]"}],
                "settings": {"apiKey": "[redacted]", "n": 1.5}}),
            json!({"kind": "provider", "model": "[redacted]", "messages": [
                {"role": "user", "content": "key [redacted] here"}],
                "settings": {"apiKey": "[redacted]", "n": 1.5}}),
            json!({"kind": "provider", "model": "m", "messages": "[redacted]",
                "settings": {"apiKey": "[redacted]", "n": 1.5}}),
        ] {
            assert!(!same_request(&edited, &request), "{edited}");
        }
        reordered["settings"]["n"] = json!(1.25);
        assert!(!same_request(&reordered, &request));
    }

    #[test]
    fn what_is_not_a_cassette_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (text, error) in [
            ("{", "invalid JSON"),
            ("[]", "`schemaVersion` must be"),
            ("7", "invalid JSON"),
            (r#"{"entries": {}}"#, "`schemaVersion` must be"),
            (
                r#"{"schemaVersion": "cautilus.cassette.v1"}"#,
                "`entries` must be an object",
            ),
            (
                r#"{"schemaVersion": "cautilus.cassette.v1", "entries": [1]}"#,
                "`entries` must be an object",
            ),
            (
                r#"{"schemaVersion": "cautilus.cassette.v1", "entries": {"a": {}}}"#,
                "`a` is not a call key",
            ),
            (
                r#"{"schemaVersion": "cautilus.cassette.v1", "entries": {"a": }}"#,
                "invalid JSON",
            ),
        ] {
            let message = read(&file(dir.path(), text), 1 << 20).unwrap_err();
            assert!(message.contains(error), "{text}: {message}");
        }
        assert!(
            read(&dir.path().join("missing.json"), 1 << 20)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_file_past_the_cap_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(3 << 20)
            .unwrap();
        let message = read(&path, 2 << 20).unwrap_err();
        assert!(
            message.contains(&format!("{} bytes", 3 << 20))
                && message.contains("2 MiB")
                && message.contains(MAX_FLAG),
            "{message}"
        );
        #[cfg(unix)]
        {
            // A device never ends; a pipe would make opening wait.
            let message = read(Path::new("/dev/zero"), 1 << 20).unwrap_err();
            assert!(message.contains("not a regular file"), "{message}");
            let fifo = dir.path().join("fifo.json");
            let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid C string; mkfifo only creates the pipe.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
            let message = read(&fifo, 1 << 20).unwrap_err();
            assert!(message.contains("not a regular file"), "{message}");
            let message = read(dir.path(), 1 << 20).unwrap_err();
            assert!(message.contains("not a regular file"), "{message}");
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            let message = read(&link, 2 << 20).unwrap_err();
            assert!(message.contains("symbolic link"), "{message}");
        }
    }
}
