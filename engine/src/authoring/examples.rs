//! The examples file of a scorer project (`examples.yaml`, or JSON): example
//! answers and what the scorer should make of each, read by `cautilus plugin
//! test` and `cautilus pack test`.
//!
//! ```yaml
//! scorer: mentions-all          # optional when the component serves one scorer
//! config: {value: world}        # the config of every example without its own
//! examples:
//!   - name: mentions the word
//!     output: hello world
//!     expect: {pass: true, score: 1}
//!   - name: misses it
//!     output: hello there
//!     expected: world           # the case's expected value as text (`expectedJson:` any value)
//!     input: say hello          # the case's input, as text
//!     expect: {pass: false, detail: "expected"}
//!   - name: bad config is refused
//!     config: {value: 3, extra: 1}
//!     output: x
//!     expect: {error: "extra"}
//! ```
//!
//! The file is someone's input: it is read up to [`MAX_BYTES`], nested at
//! most 64 levels, its YAML aliases bounded, and every problem is reported
//! with the file, the JSON path (`examples[2].expect.pas`) and what to write.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::fixture::nesting::Syntax;

/// The largest examples file read.
pub const MAX_BYTES: u64 = 1024 * 1024;
/// The most examples one file may hold.
pub const MAX_EXAMPLES: usize = 10_000;
/// The longest example name, in characters.
const MAX_NAME_CHARS: usize = 200;

/// The file names looked for in a project, in this order.
pub const FILE_NAMES: &[&str] = &["examples.yaml", "examples.yml", "examples.json"];

/// A problem with an examples file, at a JSON path (empty: the whole file).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {}{message}", file.display(), if path.is_empty() { String::new() } else { format!("{path}: ") })]
pub struct ExamplesError {
    pub file: PathBuf,
    pub path: String,
    pub message: String,
}

/// A parsed examples file.
#[derive(Debug, Clone, PartialEq)]
pub struct ExamplesFile {
    pub file: PathBuf,
    /// The scorer id every example runs unless it names its own.
    pub scorer: Option<String>,
    pub examples: Vec<Example>,
}

/// One example answer and its expected outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub name: String,
    /// Its JSON path in the file (`examples[3]`).
    pub at: String,
    pub scorer: Option<String>,
    /// The scorer config (its own, else the file's; null when neither).
    pub config: Value,
    pub output: String,
    /// The case's expected value (`expected` as a JSON string, or `expectedJson`).
    pub expected: Option<Value>,
    pub input: Option<String>,
    pub expect: Expect,
}

/// What an example expects; at least one field is set, and `error`
/// excludes the others.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Expect {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreExpect>,
    /// Text the score's detail contains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Text the error contains (the scorer refused the config or failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An expected score value: equal within [`SCORE_TOLERANCE`], or within bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ScoreExpect {
    Exactly(f64),
    Within {
        #[serde(skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        max: Option<f64>,
    },
}

/// How far an actual score may be from an exact expected one.
pub const SCORE_TOLERANCE: f64 = 1e-9;

const TOP_KEYS: &[&str] = &["scorer", "config", "examples"];
const EXAMPLE_KEYS: &[&str] = &[
    "name",
    "scorer",
    "config",
    "output",
    "expected",
    "expectedJson",
    "input",
    "expect",
];
const EXPECT_KEYS: &[&str] = &["pass", "score", "detail", "error"];
const RANGE_KEYS: &[&str] = &["min", "max"];

/// The examples file in `dir` ([`FILE_NAMES`]), if there is one.
pub fn find_in(dir: &Path) -> Option<PathBuf> {
    FILE_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

/// Reads and checks the examples file `file`.
pub fn read(file: &Path) -> Result<ExamplesFile, ExamplesError> {
    let error = |message: String| ExamplesError {
        file: file.to_path_buf(),
        path: String::new(),
        message,
    };
    let opened =
        crate::regular_file::open(file).map_err(|e| error(format!("cannot read it: {e}")))?;
    let Some(opened) = opened else {
        return Err(error(
            "no such file; write one (see `cautilus plugin test --help`) or pass --examples FILE"
                .into(),
        ));
    };
    let mut bytes = Vec::new();
    opened
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(error(format!(
            "larger than {} KiB, the limit for an examples file",
            MAX_BYTES >> 10
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        error(format!(
            "not UTF-8 text (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse(file, &text)
}

/// Parses the text of an examples file; `file` names it in errors and
/// chooses the syntax (`.json` is JSON, anything else YAML).
pub fn parse(file: &Path, text: &str) -> Result<ExamplesFile, ExamplesError> {
    let syntax = match file.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("json") => Syntax::Json,
        _ => Syntax::Yaml,
    };
    let value = crate::fixture::parse_text(file, text, syntax).map_err(|e| ExamplesError {
        file: e.file,
        path: e.path,
        message: e.message,
    })?;
    Checker { file }.file(&value)
}

struct Checker<'a> {
    file: &'a Path,
}

impl Checker<'_> {
    fn error(&self, path: &str, message: impl Into<String>) -> ExamplesError {
        ExamplesError {
            file: self.file.to_path_buf(),
            path: path.to_string(),
            message: message.into(),
        }
    }

    fn file(&self, value: &Value) -> Result<ExamplesFile, ExamplesError> {
        let top = self.object("", value, TOP_KEYS)?;
        let scorer = self.text_opt("scorer", top.get("scorer"))?;
        let config = self.config("config", top.get("config"))?;
        let Some(list) = top.get("examples") else {
            return Err(self.error(
                "examples",
                "missing: list the example answers, each with `name`, `output` and `expect`",
            ));
        };
        let Value::Array(list) = list else {
            return Err(self.error("examples", format!("expected a list, got {}", kind(list))));
        };
        if list.is_empty() {
            return Err(self.error("examples", "empty: give at least one example"));
        }
        if list.len() > MAX_EXAMPLES {
            return Err(self.error(
                "examples",
                format!(
                    "{} examples, more than the {MAX_EXAMPLES} one file may hold",
                    list.len()
                ),
            ));
        }
        let mut names = BTreeSet::new();
        let mut examples = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let example = self.example(&format!("examples[{i}]"), item, &config)?;
            if !names.insert(example.name.clone()) {
                return Err(self.error(
                    &format!("examples[{i}].name"),
                    format!(
                        "`{}` names an earlier example too; names must be unique",
                        example.name
                    ),
                ));
            }
            examples.push(example);
        }
        Ok(ExamplesFile {
            file: self.file.to_path_buf(),
            scorer,
            examples,
        })
    }

    fn example(&self, at: &str, value: &Value, config: &Value) -> Result<Example, ExamplesError> {
        let map = self.object(at, value, EXAMPLE_KEYS)?;
        let name = self
            .text_opt(&format!("{at}.name"), map.get("name"))?
            .ok_or_else(|| self.error(&format!("{at}.name"), "missing: name the example"))?;
        if name.trim().is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(self.error(
                &format!("{at}.name"),
                format!("must be 1 to {MAX_NAME_CHARS} characters, not blank"),
            ));
        }
        let output = self
            .text_opt(&format!("{at}.output"), map.get("output"))?
            .ok_or_else(|| {
                self.error(
                    &format!("{at}.output"),
                    "missing: the answer to score, as text",
                )
            })?;
        let expected = match (map.get("expected"), map.get("expectedJson")) {
            (Some(_), Some(_)) => {
                return Err(self.error(
                    &format!("{at}.expectedJson"),
                    "give `expected` (text) or `expectedJson` (any value), not both",
                ));
            }
            (Some(text), None) => self
                .text_opt(&format!("{at}.expected"), Some(text))?
                .map(Value::String),
            (None, json) => json.cloned(),
        };
        let Some(expect) = map.get("expect") else {
            return Err(self.error(
                &format!("{at}.expect"),
                "missing: say what the scorer should give, e.g. `expect: {pass: true}`",
            ));
        };
        Ok(Example {
            name,
            at: at.to_string(),
            scorer: self.text_opt(&format!("{at}.scorer"), map.get("scorer"))?,
            config: match map.get("config") {
                Some(own) => self.config(&format!("{at}.config"), Some(own))?,
                None => config.clone(),
            },
            output,
            expected,
            input: self.text_opt(&format!("{at}.input"), map.get("input"))?,
            expect: self.expect(&format!("{at}.expect"), expect)?,
        })
    }

    fn expect(&self, at: &str, value: &Value) -> Result<Expect, ExamplesError> {
        let map = self.object(at, value, EXPECT_KEYS)?;
        if map.is_empty() {
            return Err(self.error(at, "empty: give `pass`, `score`, `detail` or `error`"));
        }
        let pass = match map.get("pass") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(self.error(
                    &format!("{at}.pass"),
                    format!("expected true or false, got {}", kind(other)),
                ));
            }
        };
        let error = self.text_opt(&format!("{at}.error"), map.get("error"))?;
        if error.is_some() && map.len() > 1 {
            return Err(self.error(
                &format!("{at}.error"),
                "an example that expects an error expects nothing else (no score is given)",
            ));
        }
        Ok(Expect {
            pass,
            score: self.score(&format!("{at}.score"), map.get("score"))?,
            detail: self.text_opt(&format!("{at}.detail"), map.get("detail"))?,
            error,
        })
    }

    fn score(&self, at: &str, value: Option<&Value>) -> Result<Option<ScoreExpect>, ExamplesError> {
        let number = |at: &str, value: &Value| {
            value
                .as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| self.error(at, format!("expected a number, got {}", kind(value))))
        };
        match value {
            None => Ok(None),
            Some(range @ Value::Object(_)) => {
                let map = self.object(at, range, RANGE_KEYS)?;
                let bound = |key: &str| {
                    map.get(key)
                        .map(|v| number(&format!("{at}.{key}"), v))
                        .transpose()
                };
                let (min, max) = (bound("min")?, bound("max")?);
                match (min, max) {
                    (None, None) => Err(self.error(at, "give `min`, `max` or both")),
                    (Some(lo), Some(hi)) if lo > hi => {
                        Err(self.error(at, format!("min {lo} is above max {hi}")))
                    }
                    _ => Ok(Some(ScoreExpect::Within { min, max })),
                }
            }
            Some(value) => Ok(Some(ScoreExpect::Exactly(number(at, value)?))),
        }
    }

    fn config(&self, at: &str, value: Option<&Value>) -> Result<Value, ExamplesError> {
        match value {
            None | Some(Value::Null) => Ok(Value::Null),
            Some(value @ Value::Object(_)) => Ok(value.clone()),
            Some(other) => Err(self.error(
                at,
                format!(
                    "expected the scorer config as an object, got {}",
                    kind(other)
                ),
            )),
        }
    }

    fn text_opt(&self, at: &str, value: Option<&Value>) -> Result<Option<String>, ExamplesError> {
        match value {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(self.error(at, format!("expected text, got {}", kind(other)))),
        }
    }

    /// `value` as an object whose keys are all in `allowed`.
    fn object<'v>(
        &self,
        at: &str,
        value: &'v Value,
        allowed: &[&str],
    ) -> Result<&'v Map<String, Value>, ExamplesError> {
        let Value::Object(map) = value else {
            return Err(self.error(at, format!("expected an object, got {}", kind(value))));
        };
        if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            let near = allowed
                .iter()
                .min_by_key(|a| strsim::damerau_levenshtein(a, key))
                .filter(|a| strsim::damerau_levenshtein(a, key) <= 2)
                .map(|a| format!(" (did you mean `{a}`?)"))
                .unwrap_or_default();
            return Err(self.error(
                &path,
                format!("unknown key{near}; allowed: {}", allowed.join(", ")),
            ));
        }
        Ok(map)
    }
}

/// What kind of JSON value `value` is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_yaml(text: &str) -> Result<ExamplesFile, String> {
        parse(Path::new("examples.yaml"), text).map_err(|e| e.to_string())
    }

    const GOOD: &str = "scorer: s\nconfig: {value: world}\nexamples:\n  - name: a\n    output: hello world\n    expect: {pass: true, score: 1}\n  - name: b\n    output: x\n    expected: y\n    config: {value: 3}\n    expect: {error: value}\n  - name: c\n    output: x\n    expectedJson: {k: [1]}\n    expect: {score: {min: 0.5}}\n";

    #[test]
    fn a_good_file_parses_with_defaults_applied() {
        let file = parse_yaml(GOOD).unwrap();
        assert_eq!(file.scorer.as_deref(), Some("s"));
        let [a, b, c] = file.examples.as_slice() else {
            panic!()
        };
        assert_eq!(a.config, serde_json::json!({"value": "world"}));
        assert_eq!(a.expect.pass, Some(true));
        assert_eq!(a.expect.score, Some(ScoreExpect::Exactly(1.0)));
        assert_eq!(b.config, serde_json::json!({"value": 3}));
        assert_eq!(b.expected, Some(Value::String("y".into())));
        assert_eq!(b.expect.error.as_deref(), Some("value"));
        assert_eq!(c.expected, Some(serde_json::json!({"k": [1]})));
        assert_eq!(
            c.expect.score,
            Some(ScoreExpect::Within {
                min: Some(0.5),
                max: None
            })
        );
        assert_eq!(c.at, "examples[2]");
    }

    #[test]
    fn bad_files_name_the_path_and_what_to_write() {
        let cases = [
            (
                GOOD.replace("pass: true", "pas: true"),
                "examples.yaml: examples[0].expect.pas: unknown key (did you mean `pass`?); allowed: pass, score, detail, error",
            ),
            (
                GOOD.replace("name: b", "name: a"),
                "examples[1].name: `a` names an earlier example too",
            ),
            (
                GOOD.replace("pass: true", "pass: yes please"),
                "examples[0].expect.pass: expected true or false, got text",
            ),
            (
                GOOD.replace("output: hello world", "output: [1]"),
                "examples[0].output: expected text, got a list",
            ),
            (
                GOOD.replace("    output: x\n    expected: y", "    expected: y"),
                "examples[1].output: missing",
            ),
            (
                GOOD.replace("{error: value}", "{error: value, pass: false}"),
                "examples[1].expect.error: an example that expects an error",
            ),
            (
                GOOD.replace("{min: 0.5}", "{min: 0.5, max: 0.1}"),
                "examples[2].expect.score: min 0.5 is above max 0.1",
            ),
            (
                GOOD.replace("{min: 0.5}", "{mn: 0.5}"),
                "examples[2].expect.score.mn: unknown key",
            ),
            (
                GOOD.replace("{pass: true, score: 1}", "{}"),
                "examples[0].expect: empty",
            ),
            (
                GOOD.replace("config: {value: world}", "config: [1]"),
                "config: expected the scorer config as an object",
            ),
            (
                GOOD.replace("scorer: s", "scorers: s"),
                "examples.yaml: scorers: unknown key (did you mean `scorer`?)",
            ),
            ("examples: []".into(), "examples: empty"),
            (
                "- 1".into(),
                "examples.yaml: expected an object, got a list",
            ),
            ("a: [".into(), "not valid YAML"),
            (
                format!(
                    "examples:\n  - name: {}\n    output: x\n    expect: {{pass: true}}\n",
                    "n".repeat(201)
                ),
                "examples[0].name: must be 1 to 200",
            ),
        ];
        for (text, expected) in cases {
            let error = parse_yaml(&text).unwrap_err();
            assert!(error.contains(expected), "{expected:?} not in {error}");
        }
    }

    #[test]
    fn json_files_read_as_json_and_hostile_ones_are_refused() {
        let file = parse(
            Path::new("examples.json"),
            r#"{"examples": [{"name": "a", "output": "x", "expect": {"pass": false}}]}"#,
        )
        .unwrap();
        assert_eq!(file.examples[0].expect.pass, Some(false));
        let deep = format!("examples: {}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse_yaml(&deep).unwrap_err().contains("nested more than"));
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
        assert!(parse_yaml(laughs).unwrap_err().contains("aliases"));
    }

    #[test]
    fn missing_and_oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read(&dir.path().join("examples.yaml")).unwrap_err();
        assert!(missing.to_string().contains("no such file"), "{missing}");
        let big = dir.path().join("big.yaml");
        std::fs::write(&big, "#".repeat(MAX_BYTES as usize + 1)).unwrap();
        assert!(read(&big).unwrap_err().to_string().contains("larger than"));
        std::fs::write(dir.path().join("examples.json"), "{}").unwrap();
        assert_eq!(find_in(dir.path()), Some(dir.path().join("examples.json")));
    }
}
