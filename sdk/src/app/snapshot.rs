//! Snapshot baselines (C4): `expected.snapshot` compares the final text with
//! a golden file the host read into `expected.snapshotText`.
//!
//! A `.json` golden is compared structurally when both sides parse as JSON;
//! anything else is compared byte for byte (trailing newlines count). A
//! mismatch carries a unified diff.

use serde_json::{Value, json};
use similar::TextDiff;

/// Lines of context around each change in a diff.
const CONTEXT: usize = 3;

/// How an output differs from its golden file.
pub struct Mismatch {
    /// `text-equality` or `json-equality`.
    pub kind: &'static str,
    pub diff: String,
}

impl Mismatch {
    /// The summary's `snapshotDiff` entry.
    pub fn to_json(&self, golden: &str, actual: &str) -> Value {
        json!({"kind": self.kind, "expected": golden, "actual": actual, "diff": self.diff})
    }
}

/// Compares `actual` with the golden text of the file at `path`.
pub fn compare(path: &str, golden: &str, actual: &str) -> Result<(), Mismatch> {
    if path.ends_with(".json")
        && let (Ok(want), Ok(got)) = (
            serde_json::from_str::<Value>(golden),
            serde_json::from_str::<Value>(actual),
        )
    {
        if want == got {
            return Ok(());
        }
        let pretty =
            |v: &Value| serde_json::to_string_pretty(&sorted(v)).unwrap_or_default() + "\n";
        return Err(Mismatch {
            kind: "json-equality",
            diff: unified(path, &pretty(&want), &pretty(&got)),
        });
    }
    if golden == actual {
        return Ok(());
    }
    Err(Mismatch {
        kind: "text-equality",
        diff: unified(path, golden, actual),
    })
}

/// `value` with every object's keys in order, so a structural diff shows
/// changed values, not reordered keys.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn unified(path: &str, golden: &str, actual: &str) -> String {
    let diff = TextDiff::from_lines(golden, actual);
    let mut out = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .missing_newline_hint(true)
        .header(&format!("{path} (snapshot)"), "actual output")
        .to_string();
    if out.is_empty() {
        // Lines equal but bytes not (e.g. only `\r\n` vs `\n`).
        out = format!("the texts differ only in line endings or invisible bytes ({path})\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_byte_equal_and_a_mismatch_has_a_unified_diff() {
        assert!(compare("g.txt", "a\nb\n", "a\nb\n").is_ok());
        let m = compare("g.txt", "a\nb\n", "a\nc\n").unwrap_err();
        assert_eq!(m.kind, "text-equality");
        assert!(m.diff.contains("--- g.txt (snapshot)"), "{}", m.diff);
        assert!(m.diff.contains("-b\n+c\n"), "{}", m.diff);
        // A trailing newline counts.
        assert!(compare("g.txt", "a\n", "a").is_err());
    }

    #[test]
    fn json_goldens_compare_structurally() {
        assert!(compare("g.json", "{\"a\": 1, \"b\": [2]}\n", "{\"b\":[2],\"a\":1}").is_ok());
        let m = compare("g.json", "{\"a\": 1}", "{\"a\": 2}").unwrap_err();
        assert_eq!(m.kind, "json-equality");
        assert!(m.diff.contains("-  \"a\": 1\n+  \"a\": 2\n"), "{}", m.diff);
        // Output that is not JSON falls back to text equality.
        assert_eq!(
            compare("g.json", "{}", "not json").unwrap_err().kind,
            "text-equality"
        );
    }
}
