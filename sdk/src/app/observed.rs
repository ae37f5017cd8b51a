//! `collect`: a case's observed evaluation from its normalized case and what
//! the host ran.

use crate::preset::CaseRun;
use crate::preset::packet::run_fields;
use serde_json::{Map, Value, json};

use crate::app::Shape;

pub fn collect(shape: Shape, mut case: Value, run: CaseRun) -> Value {
    let mut out = Map::new();
    move_fields(&mut case, &mut out, &["caseId", "displayName"]);
    out.insert("surface".into(), json!("app"));
    out.insert("preset".into(), json!(shape.preset()));
    out.insert("fixtureRef".into(), json!(run.fixture_ref));
    // The case's declared provider and model identify the result unless the
    // provider reports its own.
    out.extend(run_fields(&run));
    let observation = run.samples.into_iter().find_map(|s| s.outcome.ok());
    let final_text = observation
        .as_ref()
        .and_then(|o| o.final_text.clone())
        .map_or(Value::Null, Value::String);
    let messages = match observation.as_ref().map(|o| &o.messages) {
        Some(list) if !list.is_empty() => Value::Array(
            list.iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect(),
        ),
        _ => transcript(shape, &case, &final_text),
    };
    let mut observed = Map::new();
    observed.insert("messages".into(), messages);
    observed.insert("finalText".into(), final_text);
    if shape == Shape::Prompt {
        let input = case.get_mut("input").map_or(Value::Null, Value::take);
        observed.insert("input".into(), input);
    }
    if let Some(structured) = observation.and_then(|o| o.structured) {
        observed.insert(
            "structured".into(),
            serde_json::from_str(&structured).unwrap_or(Value::String(structured)),
        );
    }
    out.insert("observed".into(), Value::Object(observed));
    move_fields(&mut case, &mut out, &["expected", "metadata"]);
    Value::Object(out)
}

/// Moves `from`'s non-null `keys` to `to`, in that order (what
/// `packet::copy_fields` does, without copying: the case is not read again).
fn move_fields(from: &mut Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(value) = from.get_mut(*key).map(Value::take).filter(|v| !v.is_null()) {
            to.insert((*key).to_string(), value);
        }
    }
}

/// The conversation when the provider did not return one: the case's turns
/// and the answer.
fn transcript(shape: Shape, case: &Value, final_text: &Value) -> Value {
    let mut messages = match shape {
        Shape::Chat => case["messages"].as_array().cloned().unwrap_or_default(),
        Shape::Prompt => vec![json!({"role": "user", "content": case["input"]})],
    };
    if let Some(text) = final_text.as_str() {
        messages.push(json!({"role": "assistant", "content": text}));
    }
    Value::Array(messages)
}

#[cfg(test)]
mod tests {
    use crate::preset::Sample;
    use crate::{Message, Observation};

    use super::*;

    fn run(samples: Vec<Sample>) -> CaseRun {
        CaseRun {
            case_id: "c-1".into(),
            fixture_ref: "suite.json".into(),
            provider: "fixture".into(),
            model: Some("m".into()),
            harness: "fixture-backend".into(),
            mode: "messaging".into(),
            samples,
        }
    }

    fn answered(text: &str) -> Sample {
        let message = |role: &str, content: &str| Message {
            role: role.into(),
            content: content.into(),
        };
        Sample {
            outcome: Ok(Observation {
                final_text: Some(text.into()),
                messages: vec![message("user", "say \"hi\""), message("assistant", text)],
                duration_ms: Some(1),
                ..Observation::empty()
            }),
            duration_ms: 5,
            transcript: None,
        }
    }

    #[test]
    fn the_case_fields_move_into_the_evaluation_in_order() {
        let case = json!({
            "caseId": "c-1", "displayName": null, "input": "say \"hi\"",
            "expected": {"finalText": "hi"}, "metadata": {"k": 1}, "system": "s"
        });
        let evaluation = collect(Shape::Prompt, case, run(vec![answered("hi")]));
        assert_eq!(
            serde_json::to_string(&evaluation).unwrap(),
            concat!(
                r#"{"caseId":"c-1","surface":"app","preset":"prompt","fixtureRef":"suite.json","#,
                r#""provider":"fixture","model":"m","harness":"fixture-backend","mode":"messaging","#,
                r#""durationMs":1,"observed":{"messages":[{"role":"user","content":"say \"hi\""},"#,
                r#"{"role":"assistant","content":"hi"}],"finalText":"hi","input":"say \"hi\""},"#,
                r#""expected":{"finalText":"hi"},"metadata":{"k":1}}"#
            )
        );
        // No answer: the transcript is the case's turn, read before `input`
        // moves into `observed`.
        let failed = Sample {
            outcome: Err("down".into()),
            duration_ms: 2,
            transcript: None,
        };
        let evaluation = collect(
            Shape::Prompt,
            json!({"caseId": "c-2", "input": "q"}),
            run(vec![failed]),
        );
        assert_eq!(
            evaluation["observed"],
            json!({"messages": [{"role": "user", "content": "q"}], "finalText": null, "input": "q"})
        );
    }
}
