//! `regex`: the output matches a pattern (Rust `regex` syntax, linear time).
//!
//! A pattern that scores many outputs (a suite-level assertion) is compiled
//! with every engine `regex` has, lazy DFA included. A pattern used once (a
//! case's own assertion, or the case's `expected` as the pattern) is built
//! without the DFAs and the one-pass engine: same syntax and answers, a
//! fraction of the build time, and the search over one output does not
//! need them.

use regex::{Regex, RegexBuilder};
use regex_automata::meta;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;
use serde::Deserialize;
use serde_json::Value;

use crate::{ConfigError, EXCERPT_CHARS, Verdict, as_text, excerpt, reference};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegexConfig {
    #[serde(default)]
    pub value: Option<Value>,
    /// Any of `i` (ignore case), `m` (multi-line), `s` (dot matches newline),
    /// `x` (verbose), `U` (swap greed); `g` is accepted and ignored.
    #[serde(default)]
    pub flags: Option<String>,
}

/// A regex scorer with its configured pattern compiled once.
#[derive(Debug)]
pub struct RegexScorer {
    compiled: Option<Regex>,
    flags: String,
}

impl RegexScorer {
    pub fn new(config: RegexConfig) -> Result<Self, ConfigError> {
        let flags = check_flags(config.flags)?;
        let compiled = match &config.value {
            Some(pattern) => Some(compile(&as_text(pattern), &flags, "value")?),
            None => None,
        };
        Ok(Self { compiled, flags })
    }

    /// Checks a config as [`RegexScorer::new`] would, by parsing the
    /// pattern without compiling it (several times cheaper).
    pub fn check(config: RegexConfig) -> Result<(), ConfigError> {
        let flags = check_flags(config.flags)?;
        if let Some(pattern) = &config.value {
            regex_syntax::ParserBuilder::new()
                .case_insensitive(flags.contains('i'))
                .multi_line(flags.contains('m'))
                .dot_matches_new_line(flags.contains('s'))
                .ignore_whitespace(flags.contains('x'))
                .swap_greed(flags.contains('U'))
                .build()
                .parse(&as_text(pattern))
                .map_err(|e| ConfigError::new("value", format!("invalid regex: {e}")))?;
        }
        Ok(())
    }

    pub fn score(&self, output: &str, expected: Option<&Value>) -> Result<Verdict, ConfigError> {
        match &self.compiled {
            Some(regex) => Ok(verdict(
                regex.is_match(output),
                regex.as_str(),
                &self.flags,
                output,
            )),
            None => {
                let pattern = as_text(reference(None, expected)?);
                let matched = compile_once(&pattern, &self.flags, "expected")?.is_match(output);
                Ok(verdict(matched, &pattern, &self.flags, output))
            }
        }
    }

    /// Scores one output with `config` used this once: what
    /// `new(config)?.score(..)` answers, built for a single search.
    pub fn score_once(
        config: RegexConfig,
        output: &str,
        expected: Option<&Value>,
    ) -> Result<Verdict, ConfigError> {
        let flags = check_flags(config.flags)?;
        let (pattern, path) = match &config.value {
            Some(pattern) => (as_text(pattern), "value"),
            None => (as_text(reference(None, expected)?), "expected"),
        };
        let matched = compile_once(&pattern, &flags, path)?.is_match(output);
        Ok(verdict(matched, &pattern, &flags, output))
    }
}

fn verdict(matched: bool, pattern: &str, flags: &str, output: &str) -> Verdict {
    Verdict::check(matched, || {
        format!(
            "expected the output to match /{pattern}/{flags}, got {}",
            excerpt(output, EXCERPT_CHARS)
        )
    })
}

fn check_flags(flags: Option<String>) -> Result<String, ConfigError> {
    let flags = flags.unwrap_or_default();
    for flag in flags.chars() {
        if !"imsxUg".contains(flag) {
            return Err(ConfigError::new(
                "flags",
                format!("unknown regex flag `{flag}`; use any of i, m, s, x, U"),
            ));
        }
    }
    Ok(flags)
}

fn compile(pattern: &str, flags: &str, path: &str) -> Result<Regex, ConfigError> {
    RegexBuilder::new(pattern)
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        .ignore_whitespace(flags.contains('x'))
        .swap_greed(flags.contains('U'))
        .build()
        .map_err(|e| ConfigError::new(path, format!("invalid regex: {e}")))
}

/// `pattern` built for one search: the PikeVM and the bounded
/// backtracker only (no lazy or full DFA, so no reverse NFA; no one-pass
/// DFA), with the syntax and size limit `regex` uses.
fn compile_once(pattern: &str, flags: &str, path: &str) -> Result<meta::Regex, ConfigError> {
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .hybrid(false)
                .dfa(false)
                .onepass(false)
                .which_captures(WhichCaptures::Implicit)
                .nfa_size_limit(Some(10 * (1 << 20))),
        )
        .syntax(
            syntax::Config::new()
                .case_insensitive(flags.contains('i'))
                .multi_line(flags.contains('m'))
                .dot_matches_new_line(flags.contains('s'))
                .ignore_whitespace(flags.contains('x'))
                .swap_greed(flags.contains('U')),
        )
        .build(pattern)
        .map_err(|e| ConfigError::new(path, format!("invalid regex: {}", describe(&e))))
}

/// A meta build error as `regex` words it (the syntax error itself).
fn describe(error: &meta::BuildError) -> String {
    match error.syntax_error() {
        Some(syntax) => syntax.to_string(),
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scorer(v: Value) -> Result<RegexScorer, ConfigError> {
        RegexScorer::new(serde_json::from_value(v).unwrap())
    }

    #[test]
    fn flags_apply() {
        let s = scorer(json!({"value": "^hello$", "flags": "im"})).unwrap();
        assert_eq!(s.score("x\nHELLO\ny", None).unwrap().passed, Some(true));
        let s = scorer(json!({"value": "^hello$"})).unwrap();
        assert_eq!(s.score("x\nHELLO\ny", None).unwrap().passed, Some(false));
    }

    #[test]
    fn check_accepts_and_refuses_what_new_does() {
        for config in [
            json!({"value": "^hello$", "flags": "im"}),
            json!({"value": "(unclosed"}),
            json!({"value": "a", "flags": "q"}),
            json!({"value": "\\p{Greek}+"}),
            json!({"value": "(?x) a # comment", "flags": "x"}),
            json!({}),
        ] {
            let parsed = || serde_json::from_value::<RegexConfig>(config.clone()).unwrap();
            assert_eq!(
                RegexScorer::check(parsed()).map_err(|e| e.path),
                RegexScorer::new(parsed()).map(drop).map_err(|e| e.path),
                "{config}"
            );
        }
    }

    #[test]
    fn bad_pattern_and_flag_name_the_field() {
        assert_eq!(
            scorer(json!({"value": "(unclosed"})).unwrap_err().path,
            "value"
        );
        assert_eq!(
            scorer(json!({"value": "a", "flags": "q"}))
                .unwrap_err()
                .path,
            "flags"
        );
    }

    #[test]
    fn a_pattern_used_once_answers_as_a_compiled_one() {
        let outputs = ["x\nHELLO\ny", "hello", "Ελληνικά", "", "a1b2", "{\"k\": 1}"];
        for config in [
            json!({"value": "^hello$", "flags": "im"}),
            json!({"value": "^hello$"}),
            json!({"value": "\\p{Greek}+"}),
            json!({"value": "(?x) a \\d # comment"}),
            json!({"value": "^\\{\"k\\\": \\d"}),
            json!({"value": "\\bhello\\b", "flags": "U"}),
            json!({}),
            json!({"value": "(unclosed"}),
            json!({"value": "a", "flags": "q"}),
        ] {
            let parsed = || serde_json::from_value::<RegexConfig>(config.clone()).unwrap();
            for output in outputs {
                for expected in [None, Some(json!("^a\\d")), Some(json!("(bad"))] {
                    let reused =
                        RegexScorer::new(parsed()).and_then(|s| s.score(output, expected.as_ref()));
                    let once = RegexScorer::score_once(parsed(), output, expected.as_ref());
                    let answer = |r: Result<Verdict, ConfigError>| {
                        r.map(|v| (v.passed, v.detail))
                            .map_err(|e| (e.path, e.message))
                    };
                    assert_eq!(answer(once), answer(reused), "{config} on {output:?}");
                }
            }
        }
    }
}
