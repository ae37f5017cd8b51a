//! `translate`'s fast path ([`Preset::translate_written`]): the plan of a
//! well-formed case written straight from its text, with no JSON values in
//! between.
//!
//! It takes a case only when nothing in it can be a problem: the fields of
//! its shape with the types they must have, and an `expected` that is
//! exactly `{"finalText": "…"}` (snapshots and sources go the long way).
//! Anything else is left to [`crate::app::translate`], which names every problem
//! at its path.
//!
//! The case's members are copied as they stand in its text, which the host
//! writes with `serde_json` (compact, canonical escapes and numbers): the
//! same bytes reading and writing them again gives (`float_roundtrip` keeps
//! a number's digits). The tests hold both paths to the same plans.
//!
//! [`Preset::translate_written`]: crate::preset::Preset::translate_written

use std::borrow::Cow;

use crate::Message;
use crate::json::write_str;
use crate::preset::WrittenPlan;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::app::Shape;

/// A fixture case's fields (see `cases::case_fields`), kept as text. A
/// member given as `null` is `Some("null")`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case<'a> {
    #[serde(rename = "caseId", borrow)]
    case_id: &'a RawValue,
    #[serde(rename = "displayName", borrow, default, deserialize_with = "present")]
    display_name: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    provider: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    model: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    system: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    input: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    messages: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    expected: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    metadata: Option<&'a RawValue>,
}

/// A member that is there, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The only `expected` taken here.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected<'a> {
    #[serde(rename = "finalText", borrow)]
    final_text: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    role: String,
    content: String,
}

/// The plan `translate` gives a well-formed `case` (its text); `None` when
/// the case is not one this path takes (see the module docs).
pub fn translate_written(
    shape: Shape,
    suite: &Map<String, Value>,
    case: &str,
) -> Option<WrittenPlan> {
    let case: Case = serde_json::from_str(case).ok()?;
    let case_id = non_empty_string(case.case_id)?;
    let provider = text_field(case.provider, suite, "provider")?;
    let model = text_field(case.model, suite, "model")?;
    let system = text_field(case.system, suite, "system")?;
    let display_name = text_field(case.display_name, suite, "displayName")?;
    let named = |field: &Option<(Cow<str>, String)>| {
        field.as_ref().is_some_and(|(_, v)| !v.trim().is_empty())
    };
    if !named(&provider) || !named(&model) {
        return None;
    }

    let mut body = String::with_capacity(256);
    body.push_str("{\"caseId\":");
    body.push_str(case.case_id.get());
    body.push_str(",\"displayName\":");
    match &display_name {
        Some((text, _)) => body.push_str(text),
        None => body.push_str(case.case_id.get()),
    }
    for (key, field) in [
        ("provider", &provider),
        ("model", &model),
        ("system", &system),
    ] {
        body.push_str(",\"");
        body.push_str(key);
        body.push_str("\":");
        body.push_str(field.as_ref().map_or("null", |(text, _)| text));
    }
    let (messages, input) = match shape {
        Shape::Prompt => {
            if case.messages.is_some() {
                return None;
            }
            let raw = case.input?;
            let text = non_empty_string(raw)?;
            body.push_str(",\"input\":");
            body.push_str(raw.get());
            let turn = Message {
                role: "user".into(),
                content: text,
            };
            (vec![turn], Some(raw.get().to_string()))
        }
        Shape::Chat => {
            if case.input.is_some() {
                return None;
            }
            let raw = case.messages?;
            let turns: Vec<Turn> = serde_json::from_str(raw.get()).ok()?;
            let well_formed = turns.last().is_some_and(|t| t.role == "user")
                && turns.iter().all(|t| {
                    matches!(t.role.as_str(), "user" | "assistant") && !t.content.trim().is_empty()
                });
            if !well_formed {
                return None;
            }
            body.push_str(",\"messages\":");
            body.push_str(raw.get());
            let turns = turns
                .into_iter()
                .map(|t| Message {
                    role: t.role,
                    content: t.content,
                })
                .collect();
            (turns, None)
        }
    };
    let (expected, reference) = match case.expected {
        None => (None, None),
        Some(raw) => {
            let expected: Expected = serde_json::from_str(raw.get()).ok()?;
            non_empty_string(expected.final_text)?;
            body.push_str(",\"expected\":");
            body.push_str(raw.get());
            let reference = expected.final_text.get().to_string();
            (Some(raw.get().to_string()), Some(reference))
        }
    };
    match case.metadata {
        Some(raw) if raw.get() == "null" => {}
        Some(raw) if raw.get().starts_with('{') => {
            body.push_str(",\"metadata\":");
            body.push_str(raw.get());
        }
        Some(_) => return None,
        None => {}
    }
    body.push('}');
    Some(WrittenPlan {
        case_id,
        body,
        messages,
        system: system.map(|(_, value)| value),
        provider: provider.map(|(_, value)| value),
        model: model.map(|(_, value)| value),
        input,
        expected,
        reference,
        repeat_count: 1,
    })
}

/// A string field of the case, else of the suite: (its text as the body
/// writes it, its value), `Some(None)` for null or absent, `None` for
/// anything but a string (a problem `translate` names).
fn text_field<'a>(
    raw: Option<&'a RawValue>,
    suite: &Map<String, Value>,
    key: &str,
) -> Option<Option<(Cow<'a, str>, String)>> {
    match raw {
        Some(raw) if raw.get() == "null" => Some(None),
        Some(raw) => {
            let value: String = serde_json::from_str(raw.get()).ok()?;
            Some(Some((Cow::Borrowed(raw.get()), value)))
        }
        None => match suite.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(value)) => {
                let mut text = String::with_capacity(value.len() + 2);
                write_str(&mut text, value);
                Some(Some((Cow::Owned(text), value.clone())))
            }
            Some(_) => None,
        },
    }
}

/// The string `raw` holds, when it is one with more than whitespace.
fn non_empty_string(raw: &RawValue) -> Option<String> {
    let text: String = serde_json::from_str(raw.get()).ok()?;
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use crate::json::to_text;
    use serde_json::json;

    use super::*;
    use crate::app::translate;

    fn suite_of(value: Value) -> Map<String, Value> {
        serde_json::from_value(value).unwrap()
    }

    /// Whether the fast path took `case`; when it did, its plan is the one
    /// `translate` gives.
    fn taken(shape: Shape, suite: &Map<String, Value>, case: &Value) -> bool {
        let Some(plan) = translate_written(shape, suite, &to_text(case)) else {
            return false;
        };
        // As the SDK's `translate` export reads the case text.
        let parsed: Value = serde_json::from_str(&to_text(case)).unwrap();
        let reference = translate(shape, suite, &parsed, "cases[0]")
            .unwrap_or_else(|e| panic!("{case}: taken, but translate says {e:?}"));
        assert_eq!(
            format!("{plan:?}"),
            format!("{:?}", reference.written()),
            "{case}"
        );
        true
    }

    #[test]
    fn well_formed_cases_get_the_plans_translate_gives() {
        let suites = [
            suite_of(json!({"provider": "fixture", "model": "m"})),
            suite_of(
                json!({"provider": "fixture", "model": "m", "system": "be \"brief\"",
                         "displayName": "suite name"}),
            ),
        ];
        let prompt = [
            json!({"caseId": "c-1", "input": "say \"hi\"\n\u{1F600}"}),
            json!({"caseId": "c-2", "displayName": "Two", "input": "q", "system": "s",
                   "provider": "openai", "model": "gpt", "expected": {"finalText": "a \"b\""},
                   "metadata": {"k": [1, null, "é"], "n": 1.5}}),
            json!({"caseId": "c-3", "displayName": null, "system": null, "metadata": null,
                   "input": "q"}),
            json!({"caseId": "c-4", "displayName": "", "system": "", "input": "q"}),
            json!({"caseId": "c-5", "displayName": "Five", "input": "q",
                   "metadata": {"w": 0.09144338512092887, "x": 7.370437700706684e208}}),
        ];
        let chat = [
            json!({"caseId": "c-1", "messages": [{"role": "user", "content": "hi \"x\""}]}),
            json!({"caseId": "c-2", "messages": [
                {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                {"content": "c", "role": "user"}],
                "expected": {"finalText": "c"}, "metadata": {}}),
        ];
        // A suite value the cases do not use is not looked at.
        let unused = suite_of(json!({"provider": "fixture", "model": "m", "displayName": 7}));
        for case in &prompt[1..] {
            assert!(taken(Shape::Prompt, &unused, case), "{case}");
        }
        assert!(!taken(Shape::Prompt, &unused, &prompt[0]));
        for suite in &suites {
            for case in &prompt {
                assert!(taken(Shape::Prompt, suite, case), "{case}");
            }
            for case in &chat {
                assert!(taken(Shape::Chat, suite, case), "{case}");
            }
        }
    }

    #[test]
    fn cases_with_a_problem_or_a_rarer_shape_are_left_to_translate() {
        let suite = suite_of(json!({"provider": "fixture", "model": "m"}));
        let prompt = [
            // Valid, but not taken here.
            json!({"caseId": "c", "input": "q", "expected": {"snapshot": "g.txt", "snapshotText": "x"}}),
            json!({"caseId": "c", "input": "q", "expected": {"sources": ["s"]}}),
            json!({"caseId": "c", "input": "q", "expected": {"finalText": "a", "sources": ["s"]}}),
            // Problems.
            json!({"caseId": "c", "input": "q", "expected": null}),
            json!({"caseId": "c", "input": "q", "expected": {"finalText": " "}}),
            json!({"caseId": "c", "input": "q", "unknown": 1}),
            json!({"caseId": "", "input": "q"}),
            json!({"caseId": 7, "input": "q"}),
            json!({"input": "q"}),
            json!({"caseId": "c", "input": "  "}),
            json!({"caseId": "c", "input": 3}),
            json!({"caseId": "c", "input": "q", "provider": null}),
            json!({"caseId": "c", "input": "q", "model": " "}),
            json!({"caseId": "c", "input": "q", "system": 1}),
            json!({"caseId": "c", "input": "q", "displayName": []}),
            json!({"caseId": "c", "input": "q", "metadata": [1]}),
            json!({"caseId": "c", "messages": [{"role": "user", "content": "q"}]}),
            json!({"caseId": "c", "input": "q", "messages": null}),
            json!({"caseId": "c", "input": "q", "expected": {"finalText": 3}}),
        ];
        for case in &prompt {
            assert!(!taken(Shape::Prompt, &suite, case), "{case}");
        }
        let chat = [
            json!({"caseId": "c", "input": "q"}),
            json!({"caseId": "c", "messages": []}),
            json!({"caseId": "c", "messages": [{"role": "assistant", "content": "a"}]}),
            json!({"caseId": "c", "messages": [{"role": "system", "content": "a"}, {"role": "user", "content": "q"}]}),
            json!({"caseId": "c", "messages": [{"role": "user", "content": " "}]}),
            json!({"caseId": "c", "messages": [{"role": "user", "content": "q", "name": "x"}]}),
            json!({"caseId": "c", "messages": [{"role": "user"}]}),
            json!({"caseId": "c", "messages": "q"}),
            json!({"caseId": "c", "messages": [{"role": "user", "content": "q"}], "input": null}),
        ];
        for case in &chat {
            assert!(!taken(Shape::Chat, &suite, case), "{case}");
        }
        // Duplicate members, which a value keeps the last of: left to
        // `translate`.
        for text in [
            r#"{"caseId":"c","caseId":"d","input":"q"}"#,
            r#"{"caseId":"c","input":"q","expected":{"finalText":"a","finalText":"b"}}"#,
        ] {
            assert!(
                translate_written(Shape::Prompt, &suite, text).is_none(),
                "{text}"
            );
        }
        let text = r#"{"caseId":"c","messages":[{"role":"user","role":"user","content":"q"}]}"#;
        assert!(translate_written(Shape::Chat, &suite, text).is_none());
        // The suite's own values are checked too.
        for given in [
            json!({"provider": 1, "model": "m"}),
            json!({"provider": "p"}),
            json!({"provider": "p", "model": "m", "system": false}),
        ] {
            let case = json!({"caseId": "c", "input": "q"});
            assert!(!taken(Shape::Prompt, &suite_of(given), &case));
        }
    }
}
