//! Every built-in scorer through the real host: passing, failing, edge cases
//! (empty output, Unicode, 2 MB output) and invalid configs.

use serde_json::{Value, json};

use crate::support::{input, score, session};

struct Case {
    scorer: &'static str,
    config: Value,
    output: &'static str,
    expected: Option<Value>,
    passed: bool,
    value: f64,
}

fn case(
    scorer: &'static str,
    config: Value,
    output: &'static str,
    passed: bool,
    value: f64,
) -> Case {
    Case {
        scorer,
        config,
        output,
        expected: None,
        passed,
        value,
    }
}

#[test]
fn every_builtin_scorer_passes_and_fails() {
    let cases = [
        case("equals", json!({"value": "Paris"}), "  Paris\n", true, 1.0),
        case(
            "equals",
            json!({"value": "Paris"}),
            "Paris, France",
            false,
            0.0,
        ),
        case(
            "equals",
            json!({"value": {"a": 1}}),
            r#"{"a":1}"#,
            true,
            1.0,
        ),
        case(
            "contains",
            json!({"value": "42"}),
            "The answer is 42.",
            true,
            1.0,
        ),
        case(
            "contains",
            json!({"value": "43"}),
            "The answer is 42.",
            false,
            0.0,
        ),
        case(
            "icontains",
            json!({"value": "PARIS"}),
            "i love paris",
            true,
            1.0,
        ),
        case(
            "icontains",
            json!({"value": "rome"}),
            "i love paris",
            false,
            0.0,
        ),
        case(
            "contains-any",
            json!({"value": ["cat", "dog"]}),
            "a dog barks",
            true,
            1.0,
        ),
        case(
            "contains-any",
            json!({"value": ["cat", "cow"]}),
            "a dog barks",
            false,
            0.0,
        ),
        case(
            "contains-all",
            json!({"value": ["dog", "barks"]}),
            "a dog barks",
            true,
            1.0,
        ),
        case(
            "contains-all",
            json!({"value": ["dog", "cat", "cow", "barks"]}),
            "a dog barks",
            false,
            0.5,
        ),
        case(
            "starts-with",
            json!({"value": "Yes"}),
            "  Yes, sure",
            true,
            1.0,
        ),
        case(
            "starts-with",
            json!({"value": "No"}),
            "Yes, sure",
            false,
            0.0,
        ),
        case(
            "ends-with",
            json!({"value": "done."}),
            "All done.\n",
            true,
            1.0,
        ),
        case("ends-with", json!({"value": "!"}), "All done.", false, 0.0),
        case(
            "regex",
            json!({"value": "^order #\\d+$", "flags": "im"}),
            "x\nORDER #12\ny",
            true,
            1.0,
        ),
        case(
            "regex",
            json!({"value": "^order #\\d+$"}),
            "x\nORDER #12\ny",
            false,
            0.0,
        ),
        case(
            "levenshtein",
            json!({"value": "kitten", "max_distance": 3}),
            "sitting",
            true,
            1.0 - 3.0 / 7.0,
        ),
        case(
            "levenshtein",
            json!({"value": "kitten"}),
            "sitting",
            false,
            1.0 - 3.0 / 7.0,
        ),
        case("is-json", json!({}), r#"{"ok": true}"#, true, 1.0),
        case(
            "is-json",
            json!({"value": {"type": "object", "required": ["id"]}}),
            r#"{"ok": true}"#,
            false,
            0.0,
        ),
        case(
            "json-diff",
            json!({"value": {"a": 1, "b": [1, 2]}}),
            r#"{"b":[1,2],"a":1}"#,
            true,
            1.0,
        ),
        case(
            "json-diff",
            json!({"value": {"a": 1, "b": 2}}),
            r#"{"a":1,"b":3}"#,
            false,
            0.5,
        ),
    ];
    for c in cases {
        let s = score(c.scorer, c.config.clone(), c.output, c.expected.clone());
        assert_eq!(
            s.passed,
            Some(c.passed),
            "{} {} on {:?}: {s:?}",
            c.scorer,
            c.config,
            c.output
        );
        let value = s.value.expect("a value");
        assert!(
            (value - c.value).abs() < 1e-9,
            "{} value {value} != {}",
            c.scorer,
            c.value
        );
        assert_eq!(s.name, c.scorer);
        if !c.passed {
            let detail = s.detail.unwrap_or_default();
            assert!(!detail.is_empty(), "{} failure without detail", c.scorer);
        }
    }
}

#[test]
fn failure_detail_names_what_was_expected_and_seen() {
    let s = score(
        "contains",
        json!({"value": "refund"}),
        "We cannot help with that.",
        None,
    );
    let detail = s.detail.unwrap();
    assert!(detail.contains("\"refund\""), "{detail}");
    assert!(detail.contains("We cannot help with that."), "{detail}");
    let s = score(
        "json-diff",
        json!({"value": {"a": {"b": 1}}}),
        r#"{"a":{"b":2}}"#,
        None,
    );
    assert!(s.detail.unwrap().contains("$.a.b: expected 1, got 2"));
}

#[test]
fn value_falls_back_to_expected() {
    for scorer in [
        "equals",
        "contains",
        "icontains",
        "starts-with",
        "ends-with",
        "regex",
        "levenshtein",
    ] {
        let s = score(scorer, json!({}), "hello", Some(json!("hello")));
        assert_eq!(s.passed, Some(true), "{scorer}: {s:?}");
    }
    let s = score("contains-all", json!({}), "a b", Some(json!(["a", "b"])));
    assert_eq!(s.passed, Some(true));
    let s = score("json-diff", json!({}), r#"{"a":1}"#, Some(json!({"a": 1})));
    assert_eq!(s.passed, Some(true));
}

#[test]
fn missing_value_and_expected_is_a_config_error() {
    let mut session = session("contains", json!({})).unwrap();
    let error = session.score(&input("hello", None)).unwrap_err();
    assert!(error.is_definition_error(), "{error}");
    assert!(
        error.to_string().contains("invalid config at `value`"),
        "{error}"
    );
}

#[test]
fn empty_output_is_scored_not_crashed() {
    let expectations = [
        ("equals", json!({"value": ""}), true),
        ("contains", json!({"value": "x"}), false),
        ("icontains", json!({"value": ""}), true),
        ("contains-any", json!({"value": ["x"]}), false),
        ("contains-all", json!({"value": ["x"]}), false),
        ("starts-with", json!({"value": "x"}), false),
        ("ends-with", json!({"value": "x"}), false),
        ("regex", json!({"value": "^$"}), true),
        ("levenshtein", json!({"value": ""}), true),
        ("is-json", json!({}), false),
        ("json-diff", json!({"value": {}}), false),
    ];
    for (scorer, config, passed) in expectations {
        let s = score(scorer, config, "", None);
        assert_eq!(s.passed, Some(passed), "{scorer}: {s:?}");
    }
}

#[test]
fn unicode_is_handled_by_characters() {
    assert_eq!(
        score(
            "contains",
            json!({"value": "日本語"}),
            "これは日本語です",
            None
        )
        .passed,
        Some(true)
    );
    assert_eq!(
        score("icontains", json!({"value": "ÉCOLE"}), "à l'école", None).passed,
        Some(true)
    );
    assert_eq!(
        score("starts-with", json!({"value": "🚀"}), "🚀 launch", None).passed,
        Some(true)
    );
    let s = score(
        "levenshtein",
        json!({"value": "héllo wörld", "max_distance": 2}),
        "hello world",
        None,
    );
    assert_eq!(s.passed, Some(true), "{s:?}");
    assert!((s.value.unwrap() - (1.0 - 2.0 / 11.0)).abs() < 1e-9);
    assert_eq!(
        score("regex", json!({"value": "^\\p{Han}+$"}), "漢字", None).passed,
        Some(true)
    );
    // Failure excerpts cut on character boundaries.
    let long = "é".repeat(500);
    let s = score(
        "contains",
        json!({"value": "zzz"}),
        Box::leak(long.into_boxed_str()),
        None,
    );
    assert!(s.detail.unwrap().contains("bytes in all"));
}

#[test]
fn two_megabyte_outputs_are_scored() {
    let mut big = "lorem ipsum ".repeat(2 * 1024 * 1024 / 12);
    big.push_str("NEEDLE");
    let big: &'static str = Box::leak(big.into_boxed_str());
    assert_eq!(
        score("contains", json!({"value": "NEEDLE"}), big, None).passed,
        Some(true)
    );
    assert_eq!(
        score("regex", json!({"value": "NEEDLE$"}), big, None).passed,
        Some(true)
    );
    assert_eq!(
        score("ends-with", json!({"value": "NEEDLE"}), big, None).passed,
        Some(true)
    );
    assert_eq!(
        score("levenshtein", json!({"value": "short"}), big, None).passed,
        Some(false)
    );
    let array: Vec<u32> = (0..350_000).collect();
    let json_text: &'static str =
        Box::leak(serde_json::to_string(&array).unwrap().into_boxed_str());
    assert!(json_text.len() > 2_000_000);
    assert_eq!(
        score(
            "is-json",
            json!({"value": {"type": "array"}}),
            json_text,
            None
        )
        .passed,
        Some(true)
    );
    let s = score("json-diff", json!({"value": array}), json_text, None);
    assert_eq!(s.passed, Some(true));
    let s = score("equals", json!({"value": "x"}), big, None);
    assert!(
        s.detail.unwrap().len() < 1_000,
        "the failure detail is an excerpt"
    );
}

#[test]
fn invalid_configs_are_definition_errors_naming_the_field() {
    let cases = [
        ("regex", json!({"value": "(unclosed"}), "value"),
        ("regex", json!({"value": "a", "flags": "q"}), "flags"),
        ("is-json", json!({"value": {"type": 12}}), "value"),
        ("is-json", json!({"value": "not a schema"}), "value"),
        (
            "levenshtein",
            json!({"value": "a", "threshold": 2}),
            "threshold",
        ),
        (
            "levenshtein",
            json!({"value": "a", "max_distance": -1}),
            "max_distance",
        ),
        (
            "json-diff",
            json!({"value": {}, "numeric_tolerance": -1}),
            "numeric_tolerance",
        ),
        ("contains", json!({"valeu": "typo"}), "valeu"),
        ("contains-any", json!({"value": []}), "value"),
        ("equals", json!({"value": "a", "negate": "yes"}), "negate"),
    ];
    for (scorer, config, field) in cases {
        let error = match session(scorer, config.clone()) {
            Err(error) => error,
            // contains-any validates its list when it scores.
            Ok(mut s) => s.score(&input("x", None)).unwrap_err(),
        };
        assert!(error.is_definition_error(), "{scorer} {config}: {error}");
        assert!(
            error.to_string().contains(&format!("at `{field}`")),
            "{scorer} {config}: {error}"
        );
    }
}

#[test]
fn any_scorer_can_be_negated() {
    for (scorer, config, output) in [
        ("contains", json!({"value": "x", "negate": true}), "y"),
        ("regex", json!({"value": "^a", "negate": true}), "b"),
        ("is-json", json!({"negate": true}), "not json"),
        (
            "levenshtein",
            json!({"value": "abc", "negate": true}),
            "xyz",
        ),
    ] {
        let s = score(scorer, config, output, None);
        assert_eq!(s.passed, Some(true), "{scorer}: {s:?}");
        assert_eq!(s.value, Some(1.0), "{scorer}: {s:?}");
    }
    let s = score("contains", json!({"value": "x", "negate": true}), "x", None);
    assert_eq!((s.passed, s.value), (Some(false), Some(0.0)));
    assert!(s.detail.unwrap().starts_with("negated"));
}

#[test]
fn one_session_scores_many_inputs_and_batches() {
    let mut s = session("contains", json!({"value": "ok"})).unwrap();
    let inputs: Vec<_> = (0..100)
        .map(|i| input(if i % 2 == 0 { "ok" } else { "no" }, None))
        .collect();
    let results = s.score_batch(&inputs);
    assert_eq!(results.len(), 100);
    let passed = results
        .iter()
        .filter(|r| r.as_ref().unwrap().passed == Some(true))
        .count();
    assert_eq!(passed, 50);
}

#[test]
fn no_captured_output_is_not_applicable() {
    let mut s = session("contains", json!({"value": "x"})).unwrap();
    let none = cautilus::plugin::ScoreInput::from_output("c", None);
    let score = s.score(&none).unwrap();
    assert_eq!((score.value, score.passed), (None, None));
    assert!(score.detail.unwrap().contains("no final text"));
}
