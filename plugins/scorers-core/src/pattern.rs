//! `regex`: the output matches a pattern (Rust `regex` syntax, linear time).

use regex::{Regex, RegexBuilder};
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
        let fallback;
        let regex = match &self.compiled {
            Some(regex) => regex,
            None => {
                fallback = compile(
                    &as_text(reference(None, expected)?),
                    &self.flags,
                    "expected",
                )?;
                &fallback
            }
        };
        Ok(Verdict::check(regex.is_match(output), || {
            format!(
                "expected the output to match /{}/{}, got {}",
                regex.as_str(),
                self.flags,
                excerpt(output, EXCERPT_CHARS)
            )
        }))
    }
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
}
