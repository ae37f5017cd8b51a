//! User-configured redaction (`redact` in cautilus.toml, `--redact`):
//! value-relative paths such as `customer.email` or `metadata.*.token`,
//! redacted wherever they resolve in what a run writes (the observed and
//! summary packets, the journal, hence experiment.json, and cassettes):
//! in inputs, outputs, expected values and assertion values alike. A
//! matched value becomes `"[redacted]"`.
//!
//! This adds to what is always redacted (credential-like fields at every
//! depth and the run's secret values, see `cassette`); it never changes
//! what a provider or a scorer is given, only what is kept.

use serde_json::Value;

const REDACTED: &str = "[redacted]";

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    /// `*`: any member of an object, any element of an array.
    Any,
}

/// The paths of a run, parsed once (from the config and `--redact`) and
/// recorded as the texts they were given as (`run.json`, for `--resume`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Vec<String>", into = "Vec<String>")]
pub struct Redaction {
    sources: Vec<String>,
    paths: Vec<Vec<Segment>>,
}

impl TryFrom<Vec<String>> for Redaction {
    type Error = String;
    fn try_from(paths: Vec<String>) -> Result<Self, String> {
        Self::parse(&paths)
    }
}

impl From<Redaction> for Vec<String> {
    fn from(redaction: Redaction) -> Self {
        redaction.sources
    }
}

impl Redaction {
    /// Parses `paths` (dotted keys; `*` matches any key or element).
    pub fn parse(paths: &[String]) -> Result<Self, String> {
        let mut parsed = Vec::with_capacity(paths.len());
        for path in paths {
            let segments: Vec<Segment> = path
                .split('.')
                .map(|s| match s {
                    "*" => Ok(Segment::Any),
                    "" => Err(format!(
                        "redact path `{path}` has an empty step; write keys joined by dots, e.g. `customer.email`"
                    )),
                    s if s.contains(['[', ']']) => Err(format!(
                        "redact path `{path}`: use `*` for array elements (`items.*.email`), not brackets"
                    )),
                    s => Ok(Segment::Key(s.to_string())),
                })
                .collect::<Result<_, _>>()?;
            if segments.iter().all(|s| *s == Segment::Any) {
                return Err(format!(
                    "redact path `{path}` names no key; it would redact everything"
                ));
            }
            parsed.push(segments);
        }
        Ok(Self {
            sources: paths.to_vec(),
            paths: parsed,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Redacts every path wherever it resolves in `value`, then every
    /// other occurrence of a redacted text (of 4 characters or more) inside
    /// the strings of `value` (a summary or an assertion's detail quoting
    /// the answer); true when something was redacted.
    pub fn apply(&self, value: &mut Value) -> bool {
        if self.paths.is_empty() {
            return false;
        }
        let mut removed = Vec::new();
        let mut changed = self.redact_paths(value, &mut removed);
        let removed = quoted_forms(removed);
        if !removed.is_empty() {
            changed |= scrub_strings(value, &removed);
        }
        changed
    }

    fn redact_paths(&self, value: &mut Value, removed: &mut Vec<String>) -> bool {
        let mut changed = false;
        for path in &self.paths {
            changed |= redact_at(value, path, removed);
        }
        match value {
            Value::Object(map) => {
                for item in map.values_mut() {
                    changed |= self.redact_paths(item, removed);
                }
            }
            Value::Array(items) => {
                for item in items {
                    changed |= self.redact_paths(item, removed);
                }
            }
            _ => {}
        }
        changed
    }

    /// One case's records redacted together (its observed evaluation, its
    /// verdict's body and its one-line summary), so a text redacted in one
    /// is scrubbed from all three; each is left as it was when nothing in
    /// it changed.
    pub fn apply_case(&self, observed: &mut String, body: &mut String, summary: &mut String) {
        if self.paths.is_empty() {
            return;
        }
        let parse = |text: &str| serde_json::from_str::<Value>(text).ok();
        let (Some(o), Some(b)) = (parse(observed), parse(body)) else {
            return;
        };
        let mut case = Value::Array(vec![o, b, Value::String(std::mem::take(summary))]);
        let changed = self.apply(&mut case);
        let Value::Array(mut parts) = case else {
            return;
        };
        if let Some(Value::String(s)) = parts.pop() {
            *summary = s;
        }
        if changed {
            if let Some(b) = parts.pop() {
                *body = b.to_string();
            }
            if let Some(o) = parts.pop() {
                *observed = o.to_string();
            }
        }
    }

    /// A JSON Lines text (an agent's transcript) redacted as one document,
    /// so a text redacted on one line is scrubbed from every line; lines
    /// that are not JSON are scrubbed as text.
    pub fn apply_jsonl(&self, text: &str) -> String {
        if self.paths.is_empty() {
            return text.to_string();
        }
        let mut lines: Vec<Value> = text
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.to_string()))
            })
            .collect();
        let mut all = Value::Array(std::mem::take(&mut lines));
        self.apply(&mut all);
        let Value::Array(lines) = all else {
            return String::new();
        };
        let mut out = String::with_capacity(text.len());
        for line in lines {
            match line {
                Value::String(raw) => out.push_str(&raw),
                other => out.push_str(&other.to_string()),
            }
            out.push('\n');
        }
        out
    }

    /// `text` (a JSON document) redacted, or `None` when nothing matched
    /// (or it is not JSON), so callers keep the original text.
    pub fn apply_text(&self, text: &str) -> Option<String> {
        if self.paths.is_empty() {
            return None;
        }
        let mut value: Value = serde_json::from_str(text).ok()?;
        self.apply(&mut value).then(|| value.to_string())
    }
}

/// Redacts `path` rooted at `value`, keeping the texts it removed.
fn redact_at(value: &mut Value, path: &[Segment], removed: &mut Vec<String>) -> bool {
    let Some((first, rest)) = path.split_first() else {
        if value.as_str() == Some(REDACTED) {
            return false;
        }
        collect_strings(value, removed);
        *value = Value::String(REDACTED.into());
        return true;
    };
    match (first, value) {
        (Segment::Key(key), Value::Object(map)) => map
            .get_mut(key)
            .is_some_and(|v| redact_at(v, rest, removed)),
        (Segment::Any, Value::Object(map)) => map
            .values_mut()
            .fold(false, |changed, v| redact_at(v, rest, removed) | changed),
        (Segment::Any, Value::Array(items)) => items
            .iter_mut()
            .fold(false, |changed, v| redact_at(v, rest, removed) | changed),
        _ => false,
    }
}

/// Every string (and number) inside `value`.
fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Characters a quoted text shares with its original before a scrub takes
/// the rest of the match too (an excerpt cut short, a diff's line).
const PREFIX: usize = 24;

/// The forms in which a redacted text may be quoted elsewhere in a case:
/// as it is, `{:?}`-escaped (failure excerpts), and line by line (diffs),
/// each at least 4 characters, longest first.
fn quoted_forms(texts: Vec<String>) -> Vec<String> {
    let mut forms = Vec::new();
    for text in texts {
        let escaped = text.escape_debug().to_string();
        for line in text.lines().filter(|l| l.trim().chars().count() >= 8) {
            forms.push(line.trim().to_string());
            forms.push(line.trim().escape_debug().to_string());
        }
        forms.push(escaped);
        forms.push(text);
    }
    forms.retain(|text| text.chars().count() >= 4);
    forms.sort_by_key(|text| std::cmp::Reverse(text.len()));
    forms.dedup();
    forms
}

/// `s` with `text` replaced, and with any run that starts like `text`
/// (its first [`PREFIX`] characters, then as far as both agree: an
/// excerpt cut short) replaced too.
fn scrub_one(s: &str, text: &str) -> Option<String> {
    let head: String = text.chars().take(PREFIX).collect();
    let needle = if head.len() < text.len() {
        head.as_str()
    } else {
        text
    };
    if !s.contains(needle) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(needle) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let shared: usize = tail
            .char_indices()
            .zip(text.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, c), _)| i + c.len_utf8());
        out.push_str(REDACTED);
        rest = &tail[shared.max(needle.len())..];
    }
    out.push_str(rest);
    Some(out)
}

/// Replaces each of `texts` (longest first) inside every string of `value`.
fn scrub_strings(value: &mut Value, texts: &[String]) -> bool {
    match value {
        Value::String(s) => {
            let mut changed = false;
            for text in texts {
                if let Some(scrubbed) = scrub_one(s, text) {
                    *s = scrubbed;
                    changed = true;
                }
            }
            changed
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| scrub_strings(v, texts) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, v| scrub_strings(v, texts) | changed),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redaction(paths: &[&str]) -> Redaction {
        Redaction::parse(&paths.iter().map(|p| p.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn paths_are_redacted_wherever_they_resolve() {
        let r = redaction(&["customer.email", "items.*.token"]);
        let mut v = json!({
            "input": {"customer": {"email": "a@b.c", "name": "Ada"}},
            "expected": {"customer": {"email": "a@b.c"}},
            "assertions": [{"value": {"customer": {"email": "x@y.z"}}}],
            "observed": {"items": [{"token": "t1"}, {"token": "t2", "keep": 1}]},
            "customer": "not an object",
        });
        assert!(r.apply(&mut v));
        assert_eq!(
            v["input"]["customer"],
            json!({"email": "[redacted]", "name": "Ada"})
        );
        assert_eq!(v["expected"]["customer"]["email"], "[redacted]");
        assert_eq!(
            v["assertions"][0]["value"]["customer"]["email"],
            "[redacted]"
        );
        assert_eq!(
            v["observed"]["items"],
            json!([{"token": "[redacted]"}, {"token": "[redacted]", "keep": 1}])
        );
        assert_eq!(v["customer"], "not an object");
        assert!(!r.apply(&mut v), "a second pass finds nothing new");
    }

    #[test]
    fn a_redacted_text_quoted_elsewhere_is_scrubbed_too() {
        let r = redaction(&["finalText"]);
        let mut v = json!({
            "finalText": "Ada Lovelace, 1815",
            "summary": "expected \"x\", got \"Ada Lovelace, 1815\"",
            "assertions": [{"detail": "got \"Ada Lovelace, 1815\""}],
            "other": {"finalText": "no"},
        });
        assert!(r.apply(&mut v));
        assert_eq!(v["summary"], "expected \"x\", got \"[redacted]\"");
        assert_eq!(v["assertions"][0]["detail"], "got \"[redacted]\"");
        assert_eq!(
            v["other"]["finalText"], "[redacted]",
            "short texts: the field only"
        );
    }

    #[test]
    fn a_case_is_redacted_across_its_records_and_summary() {
        let r = redaction(&["finalText"]);
        let mut observed = r#"{"observed":{"finalText":"secret plan"}}"#.to_string();
        let mut body = r#"{"expected":{"finalText":"x"},"n":1}"#.to_string();
        let mut summary = "got \"secret plan\"".to_string();
        r.apply_case(&mut observed, &mut body, &mut summary);
        assert_eq!(observed, r#"{"observed":{"finalText":"[redacted]"}}"#);
        assert_eq!(body, r#"{"expected":{"finalText":"[redacted]"},"n":1}"#);
        assert_eq!(summary, "got \"[redacted]\"");
        let mut untouched = r#"{"a": 1}"#.to_string();
        let mut also = r#"{"b": 2}"#.to_string();
        let mut line = "fine".to_string();
        redaction(&["zzz"]).apply_case(&mut untouched, &mut also, &mut line);
        assert_eq!(
            (untouched.as_str(), also.as_str(), line.as_str()),
            (r#"{"a": 1}"#, r#"{"b": 2}"#, "fine")
        );
    }

    #[test]
    fn cut_escaped_and_diffed_quotes_of_a_redacted_text_are_scrubbed() {
        let r = redaction(&["finalText"]);
        let long = format!("Dear \"Ada\",\nyour balance is 1234.\n{}", "x".repeat(300));
        let excerpt = format!("got \"{}…\"", &long.escape_debug().to_string()[..160]);
        let mut v = json!({
            "finalText": long,
            "summary": excerpt,
            "snapshotDiff": {"diff": "@@ -1 +1 @@\n-Dear Bob,\n+Dear \"Ada\",\n your balance is 1234.\n"},
            "n": {"finalText": 123456},
            "detail": "the number 123456 was wrong",
        });
        assert!(r.apply(&mut v));
        let text = v.to_string();
        for leaked in ["Ada", "balance is 1234", "xxxxxxxx", "123456"] {
            assert!(!text.contains(leaked), "{leaked} in {text}");
        }
        assert!(text.contains("Dear Bob"), "unrelated text stays: {text}");
    }

    #[test]
    fn a_transcript_is_redacted_across_its_lines() {
        let r = redaction(&["message.text"]);
        let text = "{\"message\":{\"text\":\"the secret plan\"}}\nnot json: the secret plan\n{\"echo\":\"the secret plan!\"}\n";
        let out = r.apply_jsonl(text);
        assert!(!out.contains("secret plan"), "{out}");
        assert_eq!(out.lines().count(), 3);
        assert_eq!(Redaction::default().apply_jsonl(text), text);
    }

    #[test]
    fn nothing_matched_leaves_the_text_alone() {
        let r = redaction(&["customer.email"]);
        assert_eq!(r.apply_text(r#"{"a": 1}"#), None);
        assert_eq!(
            r.apply_text(r#"{"customer": {"email": "e"}}"#).as_deref(),
            Some(r#"{"customer":{"email":"[redacted]"}}"#)
        );
        assert_eq!(
            Redaction::default().apply_text(r#"{"customer": {"email": "e"}}"#),
            None
        );
    }

    #[test]
    fn bad_paths_say_how_to_write_them() {
        for (path, says) in [
            ("customer..email", "empty step"),
            ("items[0].email", "not brackets"),
            ("*", "names no key"),
            ("", "empty step"),
        ] {
            let error = Redaction::parse(&[path.to_string()]).unwrap_err();
            assert!(error.contains(says), "{path}: {error}");
        }
    }
}
