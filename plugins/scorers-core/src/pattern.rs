//! `regex`: the output matches a pattern (Rust `regex` syntax, linear time).
//!
//! A pattern that scores many outputs (a suite-level assertion) is compiled
//! with every engine `regex` has, lazy DFA included. A pattern used once (a
//! case's own assertion, or the case's `expected` as the pattern) is built
//! without the DFAs and the one-pass engine: same syntax and answers, a
//! fraction of the build time, and the search over one output does not
//! need them. A pattern that is plain text (with `^`/`$` anchors and
//! escaped punctuation at most, no flags that change its meaning) is not
//! built at all: it is matched as the text it spells ([`Literal`]).

use regex::{Regex, RegexBuilder};
use regex_automata::meta;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;
use serde::Deserialize;
use serde_json::Value;

use crate::{ConfigError, EXCERPT_CHARS, Verdict, as_text, excerpt, found_at, reference};

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
            let pattern = as_text(pattern);
            if Literal::parse(&pattern, &flags).is_some() {
                return Ok(()); // plain text always parses
            }
            regex_syntax::ParserBuilder::new()
                .case_insensitive(flags.contains('i'))
                .multi_line(flags.contains('m'))
                .dot_matches_new_line(flags.contains('s'))
                .ignore_whitespace(flags.contains('x'))
                .swap_greed(flags.contains('U'))
                .build()
                .parse(&pattern)
                .map_err(|e| ConfigError::new("value", format!("invalid regex: {e}")))?;
        }
        Ok(())
    }

    pub fn score(&self, output: &str, expected: Option<&Value>) -> Result<Verdict, ConfigError> {
        match &self.compiled {
            Some(regex) => Ok(verdict(
                regex.find(output).map(|m| m.range()),
                regex.as_str(),
                &self.flags,
                output,
            )),
            None => {
                let pattern = as_text(reference(None, expected)?);
                let matched = built(&pattern, &self.flags, "expected")?
                    .find(output)
                    .map(|m| m.range());
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
        let matched = match Literal::parse(&pattern, &flags) {
            Some(literal) => literal.find(output),
            None => built(&pattern, &flags, path)?
                .find(output)
                .map(|m| m.range()),
        };
        Ok(verdict(matched, &pattern, &flags, output))
    }
}

/// A pattern that spells plain text: optionally anchored at the start
/// (`^`) and the end (`$`), its characters verbatim or escaped the way the
/// `regex` syntax takes a superfluous escape (`\.`, `\ `, `\-`). Such a
/// pattern matches exactly where its text occurs, so it needs no regex.
#[derive(Debug, PartialEq)]
struct Literal {
    text: String,
    start: bool,
    end: bool,
}

impl Literal {
    /// Longest pattern taken as text (a longer one is built, so the
    /// engine's size limit still applies as it would).
    const MAX_LEN: usize = 4096;

    /// The text `pattern` spells, when it is plain text under `flags`
    /// (none, or only those that cannot change what text matches: `s`
    /// and `U` concern `.` and repetitions, `g` is ignored).
    fn parse(pattern: &str, flags: &str) -> Option<Self> {
        if pattern.len() > Self::MAX_LEN || flags.chars().any(|f| !"sUg".contains(f)) {
            return None;
        }
        let (start, rest) = match pattern.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let mut text = String::with_capacity(rest.len());
        let mut end = false;
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(escaped) if regex_syntax::is_escapeable_character(escaped) => {
                        text.push(escaped)
                    }
                    _ => return None, // `\d`, `\n`, `\x41`, `\<`, a trailing `\`
                },
                '$' if chars.as_str().is_empty() => end = true,
                '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$' => {
                    return None;
                }
                c => text.push(c),
            }
        }
        Some(Self { text, start, end })
    }

    /// Where the text occurs in `haystack`, as the anchors allow.
    fn find(&self, haystack: &str) -> Option<std::ops::Range<usize>> {
        let len = self.text.len();
        let at = match (self.start, self.end) {
            (true, true) => (haystack == self.text).then_some(0),
            (true, false) => haystack.starts_with(&self.text).then_some(0),
            (false, true) => haystack.ends_with(&self.text).then(|| haystack.len() - len),
            (false, false) => haystack.find(&self.text),
        }?;
        Some(at..at + len)
    }

    #[cfg(test)]
    fn is_match(&self, haystack: &str) -> bool {
        self.find(haystack).is_some()
    }
}

/// The verdict of a search: where the pattern matched, if it did.
fn verdict(
    matched: Option<std::ops::Range<usize>>,
    pattern: &str,
    flags: &str,
    output: &str,
) -> Verdict {
    let found = matched.clone();
    Verdict::explain(
        matched.is_some(),
        || {
            let range = found.unwrap_or_default();
            let text = output.get(range.clone()).unwrap_or_default();
            format!(
                "/{pattern}/{flags} matched: {}",
                found_at(text, output, range.start)
            )
        },
        || {
            format!(
                "expected the output to match /{pattern}/{flags}, got {}",
                excerpt(output, EXCERPT_CHARS)
            )
        },
    )
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

/// At most this many bytes of built patterns are kept ([`built`]).
const KEPT_BYTES: usize = 8 << 20;

/// Most patterns kept ([`built`]).
const KEPT: usize = 1024;

std::thread_local! {
    /// Patterns built for cases' own assertions, kept for the next case that
    /// uses the same one (suites repeat their house patterns across cases),
    /// keyed by flags and pattern, with the bytes they hold. Dropped all
    /// at once when a bound is reached.
    static BUILT: std::cell::RefCell<(std::collections::HashMap<String, meta::Regex>, usize)> =
        std::cell::RefCell::default();
}

/// `pattern` built for one search ([`compile_once`]), or the same pattern
/// built for an earlier case. A pattern is kept unless it alone holds
/// more than a sixteenth of [`KEPT_BYTES`]; an invalid one is not kept
/// (its error is cheap to find again).
fn built(pattern: &str, flags: &str, path: &str) -> Result<meta::Regex, ConfigError> {
    let key = format!("{flags}\0{pattern}");
    if let Some(regex) = BUILT.with(|kept| kept.borrow().0.get(&key).cloned()) {
        return Ok(regex);
    }
    let regex = compile_once(pattern, flags, path)?;
    let bytes = regex.memory_usage() + key.len();
    if bytes <= KEPT_BYTES / 16 {
        BUILT.with(|kept| {
            let (map, held) = &mut *kept.borrow_mut();
            if map.len() >= KEPT || *held + bytes > KEPT_BYTES {
                map.clear();
                *held = 0;
            }
            map.insert(key, regex.clone());
            *held += bytes;
        });
    }
    Ok(regex)
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
    fn plain_text_patterns_match_as_the_compiled_regex_does() {
        let patterns = [
            "",
            "^",
            "$",
            "^$",
            "abc",
            "^abc",
            "abc$",
            "^abc$",
            "^item 3: plu",
            r#"^\{"id": 0"#,
            r#"^\{\"id\": 0"#,
            r"a\.b",
            r"\^a",
            r"a\$",
            r"\$",
            r"^\$$",
            r"\ x\-y\&z\~\#",
            r"%\%",
            "é✓ x",
            "^Ελλ",
            "a#b c",
            // not plain text: built as a regex
            "a]b",
            "a}b",
            "a.b",
            "a+",
            "(a)",
            "a|b",
            "[ab]",
            "a{2}",
            "^^a",
            "a$b",
            r"\d",
            r"\n",
            r"\x41",
            r"\<a",
            r"a\",
            r"\b",
            "(?i)abc",
        ];
        let haystacks = [
            "",
            "abc",
            "xabc",
            "abcx",
            "a.b",
            "a+b",
            "^a",
            "a$",
            "$",
            "item 3: plugin",
            "{\"id\": 0, \"t\": 1}",
            " x-y&z~#",
            "%%",
            "é✓ x",
            "Ελληνικά",
            "a]b",
            "a}b",
            "a#b c",
            "aab",
            "1",
            "\n",
            "A",
            "a",
            "$x",
            "abc\n",
            "x\nabc",
            "abc\r\n",
            "\nabc\n",
        ];
        // Every printable ASCII character escaped, and the text it may spell.
        let escaped: Vec<String> = (b'!'..=b'~')
            .map(|c| format!("a\\{}b", char::from(c)))
            .collect();
        let spelled: Vec<String> = (b' '..=b'~')
            .map(|c| format!("xa{}b", char::from(c)))
            .collect();
        let haystacks: Vec<&str> = haystacks
            .into_iter()
            .chain(spelled.iter().map(String::as_str))
            .collect();
        for pattern in patterns
            .into_iter()
            .chain(escaped.iter().map(String::as_str))
        {
            for flags in ["", "g", "s", "U", "sUg", "i", "m", "x"] {
                let literal = Literal::parse(pattern, flags);
                let Ok(regex) = compile(pattern, flags, "value") else {
                    assert_eq!(literal, None, "{pattern:?} does not compile");
                    continue;
                };
                let Some(literal) = literal else { continue };
                assert!(
                    flags.chars().all(|f| "sUg".contains(f)),
                    "{pattern:?} /{flags}: taken as text under a flag that changes it"
                );
                // The builder a pattern used once would otherwise go to.
                let once = compile_once(pattern, flags, "value").expect("it compiles");
                for &haystack in &haystacks {
                    assert_eq!(
                        literal.is_match(haystack),
                        regex.is_match(haystack),
                        "{pattern:?} /{flags} on {haystack:?}"
                    );
                    assert_eq!(
                        literal.is_match(haystack),
                        once.is_match(haystack),
                        "{pattern:?} /{flags} on {haystack:?} (one-shot build)"
                    );
                }
            }
        }
        let text = |p: &str| Literal::parse(p, "").map(|l| (l.start, l.text, l.end));
        assert_eq!(text(r"^a\.b$"), Some((true, "a.b".to_string(), true)));
        assert_eq!(text(r"\$"), Some((false, "$".to_string(), false)));
        for not_text in ["a.b", r"\d", r"a\", "a$b", "(?i)a", r"\<"] {
            assert_eq!(text(not_text), None, "{not_text:?}");
        }
        assert_eq!(Literal::parse(&"a".repeat(Literal::MAX_LEN + 1), ""), None);
    }

    #[test]
    fn patterns_kept_across_cases_answer_as_built_ones_past_the_bound() {
        // More patterns than are kept, twice over: every answer is the one
        // a newly built pattern gives, and the invalid one stays an error.
        let once = |pattern: &str, flags: &str, output: &str| {
            RegexScorer::score_once(
                serde_json::from_value(json!({"value": pattern, "flags": flags})).unwrap(),
                output,
                None,
            )
            .map(|v| v.passed)
            .map_err(|e| e.message)
        };
        for round in 0..2 {
            for i in 0..KEPT + 50 {
                let pattern = format!(r"item {i}\b|x{{{}}}", i % 7);
                let output = format!("item {} here", i + round);
                let fresh = compile(&pattern, "i", "value").unwrap().is_match(&output);
                assert_eq!(once(&pattern, "i", &output), Ok(Some(fresh)), "{pattern}");
            }
            assert!(once("(bad", "", "x").unwrap_err().contains("invalid regex"));
        }
        BUILT.with(|kept| {
            let (map, held) = &*kept.borrow();
            assert!(map.len() <= KEPT && *held <= KEPT_BYTES);
        });
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
            json!({"value": "^hello"}),
            json!({"value": "x\\nHELLO", "flags": "s"}),
            json!({"value": "hello$", "flags": "i"}),
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
