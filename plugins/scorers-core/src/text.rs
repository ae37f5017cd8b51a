//! String checks: equals, contains (and case-insensitive), contains-any,
//! contains-all, starts-with, ends-with.

use serde::Deserialize;
use serde_json::Value;

use crate::json::{Parsed, parse, value_depth};
use crate::{
    ConfigError, EXCERPT_CHARS, ScoreError, Verdict, as_text, excerpt, found_at, reference,
};

/// The config of every string check: the reference (`value`, else the
/// case's `expected`) and whether to ignore case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextConfig {
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default)]
    pub ignore_case: bool,
}

/// `equals`: the trimmed output equals the reference. A non-string
/// reference (object, array, number) is compared structurally with the
/// output parsed as JSON; an output that is JSON the parser cannot hold
/// fails when it nests deeper than the reference (it cannot equal it),
/// else is [`ScoreError::Unchecked`].
pub fn equals(
    config: &TextConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ScoreError> {
    let reference = reference(config.value.as_ref(), expected)?;
    let seen = output.trim();
    Ok(match reference {
        Value::String(want) => {
            let want = want.trim();
            let ok = if config.ignore_case {
                fold(seen) == fold(want)
            } else {
                seen == want
            };
            Verdict::explain(
                ok,
                || format!("the output is exactly {}", excerpt(seen, EXCERPT_CHARS)),
                || {
                    format!(
                        "expected exactly {}, got {}",
                        excerpt(want, EXCERPT_CHARS),
                        excerpt(seen, EXCERPT_CHARS)
                    )
                },
            )
        }
        structured => match parse(seen) {
            Parsed::Value(parsed) => Verdict::explain(
                &parsed == structured,
                || {
                    format!(
                        "the output is the JSON {}",
                        excerpt(&structured.to_string(), EXCERPT_CHARS)
                    )
                },
                || {
                    format!(
                        "expected JSON {}, got {}",
                        excerpt(&structured.to_string(), EXCERPT_CHARS),
                        excerpt(seen, EXCERPT_CHARS)
                    )
                },
            ),
            Parsed::NotJson(e) => Verdict::fail(format!(
                "expected JSON {}, but the output is not JSON ({e}): {}",
                excerpt(&structured.to_string(), EXCERPT_CHARS),
                excerpt(seen, EXCERPT_CHARS)
            )),
            Parsed::Unparsable(why) => {
                let deep = crate::json::depth(seen);
                if deep <= value_depth(structured) {
                    return Err(ScoreError::Unchecked(format!(
                        "the output cannot be compared: {why}"
                    )));
                }
                Verdict::fail(format!(
                    "expected JSON {}, got JSON nested {deep} levels deep (deeper than it): {}",
                    excerpt(&structured.to_string(), EXCERPT_CHARS),
                    excerpt(seen, EXCERPT_CHARS)
                ))
            }
        },
    })
}

/// `contains` / `icontains`.
pub fn contains(
    config: &TextConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ConfigError> {
    let needle = as_text(reference(config.value.as_ref(), expected)?);
    let at = if config.ignore_case {
        let hay = fold(output);
        hay.find(&fold(&needle)).map(|at| (at, hay))
    } else {
        output.find(&needle).map(|at| (at, String::new()))
    };
    let ok = at.is_some();
    Ok(Verdict::explain(
        ok,
        || {
            let (at, folded) = at.unwrap_or_default();
            let hay = if config.ignore_case {
                folded.as_str()
            } else {
                output
            };
            found_at(&needle, hay, at)
        },
        || {
            format!(
                "expected the output to contain {}{}, got {}",
                excerpt(&needle, EXCERPT_CHARS),
                if config.ignore_case {
                    " (ignoring case)"
                } else {
                    ""
                },
                excerpt(output, EXCERPT_CHARS)
            )
        },
    ))
}

/// The needles of `contains-any` / `contains-all`: `value` is a list of
/// strings (a single string counts as a list of one).
fn needles(config: &TextConfig, expected: Option<&Value>) -> Result<Vec<String>, ConfigError> {
    let source = if config.value.is_some() {
        "value"
    } else {
        "expected"
    };
    match reference(config.value.as_ref(), expected)? {
        Value::Array(items) if items.is_empty() => Err(ConfigError::new(
            "value",
            format!("`{source}` is an empty list; give at least one string"),
        )),
        Value::Array(items) => Ok(items.iter().map(as_text).collect()),
        Value::String(s) => Ok(vec![s.clone()]),
        other => Err(ConfigError::new(
            "value",
            format!("`{source}` must be a list of strings, got {other}"),
        )),
    }
}

fn found(config: &TextConfig, output: &str, needles: &[String]) -> Vec<bool> {
    if config.ignore_case {
        let hay = fold(output);
        needles.iter().map(|n| hay.contains(&fold(n))).collect()
    } else {
        needles
            .iter()
            .map(|n| output.contains(n.as_str()))
            .collect()
    }
}

/// Passes when any needle occurs. Value is 1 or 0.
pub fn contains_any(
    config: &TextConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ConfigError> {
    let needles = needles(config, expected)?;
    let hits = found(config, output, &needles);
    let first = hits.iter().position(|h| *h);
    Ok(Verdict::explain(
        first.is_some(),
        || {
            let needle = &needles[first.unwrap_or_default()];
            if config.ignore_case {
                let hay = fold(output);
                found_at(needle, &hay, hay.find(&fold(needle)).unwrap_or_default())
            } else {
                found_at(
                    needle,
                    output,
                    output.find(needle.as_str()).unwrap_or_default(),
                )
            }
        },
        || {
            format!(
                "expected the output to contain any of {needles:?}, got {}",
                excerpt(output, EXCERPT_CHARS)
            )
        },
    ))
}

/// Passes when every needle occurs. Value is the fraction found.
pub fn contains_all(
    config: &TextConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ConfigError> {
    let needles = needles(config, expected)?;
    let hits = found(config, output, &needles);
    let missing: Vec<&str> = needles
        .iter()
        .zip(&hits)
        .filter(|(_, h)| !**h)
        .map(|(n, _)| n.as_str())
        .collect();
    let value = (needles.len() - missing.len()) as f64 / needles.len() as f64;
    Ok(Verdict {
        value: Some(value),
        passed: Some(missing.is_empty()),
        detail: Some(if missing.is_empty() {
            format!("found every one of {needles:?}")
        } else {
            format!(
                "missing {missing:?} in output {}",
                excerpt(output, EXCERPT_CHARS)
            )
        }),
    })
}

/// `starts-with` / `ends-with` (on the trimmed output).
pub fn starts_with(
    config: &TextConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ConfigError> {
    affix(config, output, expected, true)
}

pub fn ends_with(
    config: &TextConfig,
    output: &str,
    expected: Option<&Value>,
) -> Result<Verdict, ConfigError> {
    affix(config, output, expected, false)
}

fn affix(
    config: &TextConfig,
    output: &str,
    expected: Option<&Value>,
    start: bool,
) -> Result<Verdict, ConfigError> {
    let want = as_text(reference(config.value.as_ref(), expected)?);
    let seen = output.trim();
    let (hay, needle) = if config.ignore_case {
        (fold(seen), fold(&want))
    } else {
        (seen.to_string(), want.clone())
    };
    let ok = if start {
        hay.starts_with(&needle)
    } else {
        hay.ends_with(&needle)
    };
    Ok(Verdict::explain(
        ok,
        || {
            format!(
                "the output {} {}",
                if start { "starts with" } else { "ends with" },
                excerpt(&want, EXCERPT_CHARS)
            )
        },
        || {
            format!(
                "expected the output to {} {}, got {}",
                if start { "start with" } else { "end with" },
                excerpt(&want, EXCERPT_CHARS),
                excerpt(seen, EXCERPT_CHARS)
            )
        },
    ))
}

fn fold(text: &str) -> String {
    text.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_pass_says_what_it_found_for_a_negated_assertion_to_report() {
        let c: TextConfig = cfg(json!({"value": "foo"}));
        let out = "a é foo and foo";
        assert_eq!(
            contains(&c, out, None).unwrap().detail.as_deref(),
            Some("found \"foo\" at char 4")
        );
        let c: TextConfig = cfg(json!({"value": "FOO", "ignore_case": true}));
        assert_eq!(
            contains(&c, out, None).unwrap().detail.as_deref(),
            Some("found \"FOO\" at char 4")
        );
        let c: TextConfig = cfg(json!({"value": ["zzz", "and"]}));
        assert_eq!(
            contains_any(&c, out, None).unwrap().detail.as_deref(),
            Some("found \"and\" at char 8")
        );
        let c: TextConfig = cfg(json!({"value": ["a", "foo"]}));
        assert!(
            contains_all(&c, out, None)
                .unwrap()
                .detail
                .unwrap()
                .starts_with("found every one of")
        );
        let c: TextConfig = cfg(json!({"value": "a é"}));
        assert_eq!(
            starts_with(&c, out, None).unwrap().detail.as_deref(),
            Some("the output starts with \"a é\"")
        );
        let c: TextConfig = cfg(json!({"value": "a é foo and foo"}));
        assert!(
            equals(&c, out, None)
                .unwrap()
                .detail
                .unwrap()
                .starts_with("the output is exactly")
        );
        // A failure still says what was missing.
        let c: TextConfig = cfg(json!({"value": "bar"}));
        assert!(
            contains(&c, out, None)
                .unwrap()
                .detail
                .unwrap()
                .starts_with("expected the output to contain")
        );
    }

    #[test]
    fn equals_trims_and_compares_json() {
        let c: TextConfig = cfg(json!({"value": "Hello"}));
        assert_eq!(equals(&c, "  Hello\n", None).unwrap().passed, Some(true));
        assert_eq!(equals(&c, "hello", None).unwrap().passed, Some(false));
        let c: TextConfig = cfg(json!({"value": {"a": [1, 2]}}));
        assert_eq!(
            equals(&c, r#"{ "a": [1,2] }"#, None).unwrap().passed,
            Some(true)
        );
        assert!(
            equals(&c, "nope", None)
                .unwrap()
                .detail
                .unwrap()
                .contains("not JSON")
        );
        // JSON nested past the parser: deeper than the reference, so not it.
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let verdict = equals(&c, &deep, None).unwrap();
        assert_eq!(verdict.passed, Some(false));
        assert!(verdict.detail.unwrap().contains("nested 300 levels deep"));
        // Valid JSON the parser cannot hold, no deeper than the reference:
        // unchecked, not failed.
        let c: TextConfig = cfg(json!({"value": [1]}));
        assert!(matches!(
            equals(&c, "[1e400]", None),
            Err(ScoreError::Unchecked(_))
        ));
    }

    #[test]
    fn value_falls_back_to_expected() {
        let c: TextConfig = cfg(json!({}));
        assert_eq!(
            contains(&c, "abc", Some(&json!("b"))).unwrap().passed,
            Some(true)
        );
        assert_eq!(contains(&c, "abc", None).unwrap_err().path, "value");
    }

    #[test]
    fn icontains_folds_unicode() {
        let c: TextConfig = cfg(json!({"value": "STRASSE É", "ignore_case": true}));
        assert_eq!(
            contains(&c, "la strasse é", None).unwrap().passed,
            Some(true)
        );
    }

    #[test]
    fn contains_all_gives_partial_credit() {
        let c: TextConfig = cfg(json!({"value": ["a", "b", "c", "d"]}));
        let v = contains_all(&c, "a c", None).unwrap();
        assert_eq!(v.value, Some(0.5));
        assert_eq!(v.passed, Some(false));
        assert!(v.detail.unwrap().contains(r#"["b", "d"]"#));
        let c: TextConfig = cfg(json!({"value": []}));
        assert_eq!(contains_any(&c, "x", None).unwrap_err().path, "value");
    }

    #[test]
    fn affixes_trim() {
        let c: TextConfig = cfg(json!({"value": "Yes"}));
        assert_eq!(
            starts_with(&c, "  Yes, indeed", None).unwrap().passed,
            Some(true)
        );
        let c: TextConfig = cfg(json!({"value": "."}));
        assert_eq!(ends_with(&c, "done.\n", None).unwrap().passed, Some(true));
    }
}
