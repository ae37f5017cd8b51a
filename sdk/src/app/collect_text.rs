//! `collect`'s fast path ([`Preset::collect_written`]): the evaluation and
//! its summary entry written straight to text for the common case, with no
//! JSON values in between.
//!
//! The common case is a case the provider answered: every sample succeeded,
//! the first one returned a conversation and a final text and no structured
//! output, and every MUST-be-present field is there. Anything else (an
//! error, a blocker, a missing field, a transcript rebuilt from the case, an
//! expectation that cannot be checked) goes through [`crate::app::collect`] and
//! [`crate::app::evaluate`], which name what is wrong.
//!
//! The case's own members (`caseId`, `displayName`, `input`, `expected`,
//! `metadata`) are copied as they stand in the case's text, which is the
//! compact JSON `translate` wrote with the SDK's writer: the same bytes
//! reading and writing them again gives (`float_roundtrip` keeps a number's
//! digits). The tests hold both paths to the same output.
//!
//! [`Preset::collect_written`]: crate::preset::Preset::collect_written

use crate::json::{write_str, write_value};
use crate::preset::packet::run_field_list;
use crate::preset::{CaseRun, Verdict};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::app::Shape;
use crate::app::summary::{expectation, judge};

/// The members of a normalized case (see `cases::check_case`) that
/// `collect` moves, kept as text; it reads no others.
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(rename = "caseId", borrow)]
    case_id: &'a RawValue,
    #[serde(rename = "displayName", borrow, default)]
    display_name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    expected: Option<&'a RawValue>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

/// The observed evaluation of `case` (the text of a normalized case) and
/// its verdict, as `evaluate(collect(case, run))` gives them; `None` when
/// the case is not the common one (see the module docs).
pub fn collect_written(shape: Shape, case: &str, run: &CaseRun) -> Option<(String, Verdict)> {
    let body: Body = serde_json::from_str(case).ok()?;
    let case_id: String = serde_json::from_str(body.case_id.get()).ok()?;
    if case_id.trim().is_empty() || run.samples.iter().any(|s| s.outcome.is_err()) {
        return None;
    }
    let observation = run.samples.first()?.outcome.as_ref().ok()?;
    let final_text = observation.final_text.as_deref()?;
    let answered = !final_text.trim().is_empty()
        && !observation.messages.is_empty()
        && observation
            .messages
            .iter()
            .all(|m| !m.role.trim().is_empty() && !m.content.trim().is_empty());
    if !answered || observation.structured.is_some() {
        return None;
    }
    // app/prompt records its input (the user's turn); app/chat has none.
    let input = match shape {
        Shape::Prompt => {
            let raw = body.input?;
            let text: String = serde_json::from_str(raw.get()).ok()?;
            if text.trim().is_empty() {
                return None;
            }
            Some((raw, text))
        }
        Shape::Chat => None,
    };
    let fields = run_field_list(run);
    let field = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
    let identified = ["provider", "model", "harness", "mode"].iter().all(|key| {
        field(key)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    });
    let messaging = field("mode").and_then(Value::as_str) == Some("messaging");
    if !identified || !messaging || fields.iter().any(|(_, v)| v.is_null()) {
        return None;
    }
    let expected: Option<Value> = match body.expected {
        Some(raw) => Some(serde_json::from_str(raw.get()).ok()?),
        None => None,
    };
    let judged = judge(expectation(expected.as_ref()).ok()?, final_text);

    let mut text = String::with_capacity(case.len() + 2 * final_text.len() + 512);
    text.push_str("{\"caseId\":");
    text.push_str(body.case_id.get());
    if let Some(name) = body.display_name {
        text.push_str(",\"displayName\":");
        text.push_str(name.get());
    }
    text.push_str(",\"surface\":\"app\",\"preset\":");
    write_str(&mut text, shape.preset());
    text.push_str(",\"fixtureRef\":");
    write_str(&mut text, &run.fixture_ref);
    for (key, value) in &fields {
        text.push(',');
        write_str(&mut text, key);
        text.push(':');
        write_value(&mut text, value);
    }
    text.push_str(",\"observed\":{\"messages\":[");
    // The answer is usually the last message: its escaped text is copied
    // for `finalText`, as the user's turn is copied from `input`.
    let mut answer = None;
    for (j, message) in observation.messages.iter().enumerate() {
        if j > 0 {
            text.push(',');
        }
        text.push_str("{\"role\":");
        write_str(&mut text, &message.role);
        text.push_str(",\"content\":");
        let start = text.len();
        match &input {
            Some((raw, input)) if *input == message.content => text.push_str(raw.get()),
            _ if message.content == final_text => {
                if let Some(range) = answer.clone() {
                    text.extend_from_within(range);
                } else {
                    write_str(&mut text, final_text);
                    answer = Some(start..text.len());
                }
            }
            _ => write_str(&mut text, &message.content),
        }
        text.push('}');
    }
    text.push_str("],\"finalText\":");
    match answer {
        Some(range) => text.extend_from_within(range),
        None => write_str(&mut text, final_text),
    }
    if let Some((raw, _)) = &input {
        text.push_str(",\"input\":");
        text.push_str(raw.get());
    }
    text.push('}');
    for (key, raw) in [("expected", body.expected), ("metadata", body.metadata)] {
        if let Some(raw) = raw {
            text.push_str(",\"");
            text.push_str(key);
            text.push_str("\":");
            text.push_str(raw.get());
        }
    }
    text.push('}');

    // The summary entry: every member of the evaluation (all are carried),
    // then what `evaluate` adds (the SDK appends `status` and `summary`).
    let (status, summary, added) = judged.into_entry(None);
    let mut entry = String::with_capacity(text.len() + 64);
    entry.push_str(&text[..text.len() - 1]);
    for (key, value) in &added {
        entry.push(',');
        write_str(&mut entry, key);
        entry.push(':');
        write_value(&mut entry, value);
    }
    entry.push('}');
    Some((text, Verdict::written(case_id, status, summary, entry)))
}

#[cfg(test)]
mod tests {
    use crate::json::to_text;
    use crate::preset::{Sample, status_name};
    use crate::{Message, Observation, Usage};
    use serde_json::{Map, json};

    use super::*;
    use crate::app::{collect, evaluate, translate};

    fn message(role: &str, content: &str) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }

    fn run(samples: Vec<Result<Observation, String>>) -> CaseRun {
        CaseRun {
            case_id: "c".into(),
            fixture_ref: "suite \"a\".json".into(),
            provider: "fixture".into(),
            model: Some("m".into()),
            harness: "fixture-backend".into(),
            mode: "messaging".into(),
            samples: samples
                .into_iter()
                .map(|outcome| Sample {
                    outcome,
                    duration_ms: 4,
                    transcript: None,
                })
                .collect(),
        }
    }

    fn answer(user: &str, text: &str) -> Observation {
        Observation {
            final_text: Some(text.into()),
            messages: vec![message("user", user), message("assistant", text)],
            duration_ms: Some(2),
            ..Observation::empty()
        }
    }

    /// Normalized case bodies, as `translate` writes them.
    fn bodies(shape: Shape) -> Vec<Value> {
        let suite: Map<String, Value> =
            serde_json::from_value(json!({"provider": "fixture", "model": "m"})).unwrap();
        let turn = match shape {
            Shape::Prompt => json!({"input": "say \"hi\"\n"}),
            Shape::Chat => json!({"messages": [{"role": "user", "content": "say \"hi\"\n"}]}),
        };
        let cases = [
            json!({"caseId": "c-1", "expected": {"finalText": "hi"}, "metadata": {"k": [1, null, "é"]}}),
            json!({"caseId": "c-2", "displayName": "Two \u{1F600}", "expected": {"finalText": "bye"}}),
            json!({"caseId": "c-3"}),
            json!({"caseId": "c-4", "expected": {"snapshot": "g.txt", "snapshotText": "hi \"there\"\t"}}),
            json!({"caseId": "c-5", "expected": {"snapshot": "g.txt", "snapshotText": "other"}}),
            json!({"caseId": "c-6", "expected": {"snapshot": "g.json", "snapshotText": "{\"a\": 1}"}}),
            json!({"caseId": "c-7", "expected": {"sources": ["s-1", {"sourceId": "s-2"}]}}),
            json!({"caseId": "c-8", "system": "be brief", "model": "other", "expected": {"finalText": "\"there\""}}),
            // Numbers a plain parse would not give back digit for digit.
            json!({"caseId": "c-9", "metadata": {"w": 0.09144338512092887, "x": 7.370437700706684e208, "n": -0.0}}),
        ];
        cases
            .into_iter()
            .map(|mut case| {
                case.as_object_mut()
                    .unwrap()
                    .extend(turn.as_object().unwrap().clone());
                translate(shape, &suite, &case, "cases[0]")
                    .unwrap_or_else(|e| panic!("{case}: {e:?}"))
                    .body
            })
            .collect()
    }

    /// What the SDK's `collect` export gives through `collect` then
    /// `evaluate` for the case text `text`: the evaluation's text, and the
    /// verdict's id, status, recommendation, summary and entry text.
    fn reference(shape: Shape, text: &str, run: &CaseRun) -> (String, String) {
        let case: Value = serde_json::from_str(text).unwrap();
        let evaluation = collect(shape, case, run.clone());
        let text = to_text(&evaluation);
        let verdict = evaluate(shape, evaluation, "evaluations[0]");
        (text, verdict_line(&verdict))
    }

    fn verdict_line(verdict: &Verdict) -> String {
        format!(
            "{} {} {:?} {:?} {}",
            verdict.case_id,
            status_name(verdict.status),
            verdict.recommendation,
            verdict.summary,
            verdict.entry_text()
        )
    }

    #[test]
    fn answered_cases_are_written_as_collect_and_evaluate_write_them() {
        let costly = Observation {
            cost_usd: Some(0.25),
            cost_source: Some("reported".into()),
            retries: Some(2),
            usage: Some(Usage {
                input_tokens: Some(10),
                output_tokens: Some(3),
                cached_input_tokens: None,
                reasoning_tokens: None,
                llm_calls: Some(1),
            }),
            provider: Some("their-provider".into()),
            model: Some("their-model".into()),
            ..answer("say \"hi\"\n", "hi \"there\"\t")
        };
        let answered = [
            // The turn and the answer as the transcript (copied texts).
            run(vec![Ok(answer("say \"hi\"\n", "hi \"there\"\t"))]),
            // A conversation that repeats neither.
            run(vec![Ok(Observation {
                messages: vec![message("user", "other"), message("assistant", "→ ok")],
                ..answer("", "hi \"there\"\t")
            })]),
            run(vec![Ok(costly.clone()), Ok(costly)]),
            run(vec![Ok(answer("say \"hi\"\n", "{\"a\":1}"))]),
            // The answer repeats the input; the answer given twice.
            run(vec![Ok(answer("say \"hi\"\n", "say \"hi\"\n"))]),
            run(vec![Ok(Observation {
                messages: vec![
                    message("user", "say \"hi\"\n"),
                    message("assistant", "hi"),
                    message("assistant", "hi"),
                ],
                ..answer("", "hi")
            })]),
        ];
        let mut handled = 0;
        for shape in [Shape::Prompt, Shape::Chat] {
            let mut texts: Vec<String> = bodies(shape).iter().map(to_text).collect();
            // Members given as null are left out, as `collect` leaves them.
            texts.push(match shape {
                Shape::Prompt => r#"{"caseId":"c-10","displayName":null,"input":"say \"hi\"\n","expected":null,"metadata":null}"#,
                Shape::Chat => r#"{"caseId":"c-10","displayName":null,"messages":[{"role":"user","content":"q"}],"expected":null,"metadata":null}"#,
            }.to_string());
            for text in &texts {
                for run in &answered {
                    let (written, verdict) = collect_written(shape, text, run)
                        .unwrap_or_else(|| panic!("{shape:?} {text} was not handled"));
                    let (want_text, want_verdict) = reference(shape, text, run);
                    assert_eq!(written, want_text, "{shape:?} {text}");
                    let line = verdict_line(&verdict);
                    assert_eq!(line, want_verdict, "{shape:?} {text}");
                    handled += 1;
                }
            }
        }
        assert_eq!(handled, 2 * 10 * 6);
    }

    #[test]
    fn anything_but_an_answered_case_is_left_to_collect_and_evaluate() {
        let good = || answer("say \"hi\"\n", "hi");
        let declined = [
            run(vec![]),
            run(vec![Ok(good()), Err("rate limited".into())]),
            run(vec![Err("runner_auth_missing: log in".into())]),
            run(vec![Ok(Observation {
                messages: Vec::new(),
                ..good()
            })]),
            run(vec![Ok(Observation {
                structured: Some("{\"a\": 1}".into()),
                ..good()
            })]),
            run(vec![Ok(Observation {
                final_text: None,
                ..good()
            })]),
            run(vec![Ok(answer("say \"hi\"\n", " \n"))]),
            run(vec![Ok(Observation {
                messages: vec![message(" ", "say")],
                ..good()
            })]),
            run(vec![Ok(Observation {
                mode: Some("workspace".into()),
                ..good()
            })]),
            run(vec![Ok(Observation {
                mode: Some(" messaging".into()),
                ..good()
            })]),
            run(vec![Ok(Observation {
                provider: Some(" ".into()),
                ..good()
            })]),
            run(vec![Ok(Observation {
                messages: vec![message("user", "say"), message("assistant", " ")],
                ..good()
            })]),
            run(vec![Ok(Observation {
                cost_usd: Some(f64::NAN),
                ..good()
            })]),
            CaseRun {
                model: None,
                ..run(vec![Ok(good())])
            },
            CaseRun {
                harness: " ".into(),
                ..run(vec![Ok(good())])
            },
        ];
        let body = &bodies(Shape::Prompt)[0];
        for run in &declined {
            assert!(
                collect_written(Shape::Prompt, &to_text(body), run).is_none(),
                "{:?}",
                run.samples.first().map(|s| &s.outcome)
            );
        }
        // Cases collect reads otherwise: no id, an empty input, an
        // expectation that cannot be checked, text that is not a case.
        let run = run(vec![Ok(good())]);
        for case in [
            r#"{"displayName":"x","input":"q"}"#,
            r#"{"caseId":" ","input":"q"}"#,
            r#"{"caseId":7,"input":"q"}"#,
            r#"{"caseId":"c","input":" "}"#,
            r#"{"caseId":"c"}"#,
            r#"{"caseId":"c","input":"q","expected":{"finalText":""}}"#,
            r#"{"caseId":"c","input":"q","expected":{"snapshot":"g.txt"}}"#,
            r#"{"caseId":"c","input":"q","expected":[]}"#,
            r#"{"caseId":"c","caseId":"d","input":"q"}"#,
            r#"["c"]"#,
        ] {
            assert!(
                collect_written(Shape::Prompt, case, &run).is_none(),
                "{case}"
            );
        }
    }
}
