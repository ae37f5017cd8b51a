//! Every string of an observation that comes back from a provider or a
//! judge scrubbed of the secrets granted to that call (see
//! [`crate::secrets`]): where untrusted data enters, field by field.

use crate::plugin::bindings::types::{Message, Observation, ToolCall, Usage, WorkspaceTrace};
use crate::secrets::{MIN_CHARS, scrub_in_place};

/// An observation with every string it holds scrubbed of `secrets`:
/// model, provider, harness, mode, cost source, texts, messages, tool calls,
/// structured output and the whole workspace trace. Every field is named
/// here (no `..`), so a field added to the type is a compile error until it
/// is handled.
pub fn scrub_observation(mut o: Observation, secrets: &[String]) -> Observation {
    if !secrets.iter().any(|s| s.chars().count() >= MIN_CHARS) {
        return o;
    }
    let text = |t: &mut String| {
        scrub_in_place(t, secrets);
    };
    let option = |t: &mut Option<String>| {
        if let Some(t) = t {
            scrub_in_place(t, secrets);
        }
    };
    let Observation {
        final_text,
        messages,
        tool_calls,
        usage,
        cost_usd: _,
        cost_source,
        retries: _,
        duration_ms: _,
        provider,
        model,
        harness,
        mode,
        structured,
        trace,
    } = &mut o;
    for t in [
        final_text,
        cost_source,
        provider,
        model,
        harness,
        mode,
        structured,
    ] {
        option(t);
    }
    for Message { role, content } in messages.iter_mut() {
        text(role);
        text(content);
    }
    for call in tool_calls.iter_mut().flatten() {
        let ToolCall {
            name,
            arguments,
            output,
            succeeded: _,
            duration_ms: _,
        } = call;
        text(name);
        option(arguments);
        option(output);
    }
    // Counts only; named so that a text added to usage is handled here.
    if let Some(Usage {
        input_tokens: _,
        output_tokens: _,
        cached_input_tokens: _,
        reasoning_tokens: _,
        llm_calls: _,
    }) = usage
    {}
    if let Some(WorkspaceTrace {
        files_read,
        instruction_files,
        skills,
        subagents,
        commands,
        turns: _,
        session_id,
        transcript,
    }) = trace
    {
        for t in files_read
            .iter_mut()
            .chain(instruction_files.iter_mut())
            .chain(skills.iter_mut())
            .chain(subagents.iter_mut())
            .chain(commands.iter_mut())
        {
            text(t);
        }
        option(session_id);
        option(transcript);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::provider::observation_json::{observation_from, observation_json};
    use crate::secrets::REDACTED;
    use serde_json::{Value, json};

    const KEY: &str = "sk-Walk-Secret-9090";

    /// An observation with every field set (a field added to the type
    /// makes this literal fail to compile until it is filled here).
    fn full() -> Observation {
        Observation {
            final_text: Some("t".into()),
            messages: vec![Message {
                role: "assistant".into(),
                content: "c".into(),
            }],
            tool_calls: Some(vec![ToolCall {
                name: "n".into(),
                arguments: Some(json!({"k": "v"}).to_string()),
                output: Some("o".into()),
                succeeded: Some(true),
                duration_ms: Some(1),
            }]),
            usage: Some(Usage {
                input_tokens: Some(1),
                output_tokens: Some(1),
                cached_input_tokens: Some(1),
                reasoning_tokens: Some(1),
                llm_calls: Some(1),
            }),
            cost_usd: Some(0.5),
            cost_source: Some("s".into()),
            retries: Some(1),
            duration_ms: Some(1),
            provider: Some("p".into()),
            model: Some("m".into()),
            harness: Some("h".into()),
            mode: Some("messaging".into()),
            structured: Some(json!({"k": "v"}).to_string()),
            trace: Some(WorkspaceTrace {
                files_read: vec!["f".into()],
                instruction_files: vec!["i".into()],
                skills: vec!["s".into()],
                subagents: vec!["a".into()],
                commands: vec!["c".into()],
                turns: Some(1),
                session_id: Some("id".into()),
                transcript: Some("line".into()),
            }),
        }
    }

    /// Every string (and object key) of `value` made to carry `echo`.
    fn poison(value: &mut Value, echo: &str) {
        match value {
            Value::String(s) => *s = format!("{s} {echo}"),
            Value::Array(items) => items.iter_mut().for_each(|v| poison(v, echo)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut item) in entries {
                    poison(&mut item, echo);
                    // The observation's own member names stay; keys inside
                    // structured output and tool arguments are the server's.
                    let key = if key == "k" { format!("k {echo}") } else { key };
                    map.insert(key, item);
                }
            }
            _ => {}
        }
    }

    /// Every string and key of `value`, with where it is.
    fn strings(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
        match value {
            Value::String(s) => out.push((at.into(), s.clone())),
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    strings(v, &format!("{at}[{i}]"), out);
                }
            }
            Value::Object(map) => {
                for (k, v) in map {
                    out.push((format!("{at} (key)"), k.clone()));
                    strings(v, &format!("{at}.{k}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn no_field_of_an_observation_keeps_an_echoed_key() {
        let template = observation_json(&full());
        let mut nulls = Vec::new();
        fn find_nulls(v: &Value, at: &str, out: &mut Vec<String>) {
            match v {
                Value::Null => out.push(at.to_string()),
                Value::Array(items) => items.iter().for_each(|i| find_nulls(i, at, out)),
                Value::Object(map) => map
                    .iter()
                    .for_each(|(k, i)| find_nulls(i, &format!("{at}.{k}"), out)),
                _ => {}
            }
        }
        find_nulls(&template, "", &mut nulls);
        assert!(nulls.is_empty(), "fill every field in `full()`: {nulls:?}");
        for echo in [
            KEY.to_string(),
            format!("Bearer {KEY}"),
            format!("BEARER {}", KEY.to_ascii_uppercase()),
            format!("authorization: bearer {}", KEY.to_ascii_lowercase()),
            format!("x{KEY}x"),
        ] {
            let mut poisoned = template.clone();
            poison(&mut poisoned, &echo);
            let observation = observation_from(&poisoned).unwrap();
            let scrubbed = scrub_observation(observation, &[KEY.to_string()]);
            let mut all = Vec::new();
            strings(&observation_json(&scrubbed), "", &mut all);
            let with_key = all
                .iter()
                .filter(|(_, s)| s.to_ascii_lowercase().contains(&KEY.to_ascii_lowercase()))
                .collect::<Vec<_>>();
            assert!(with_key.is_empty(), "{echo}: {with_key:?}");
            // Every field was poisoned, so every string field was scrubbed.
            let untouched: Vec<_> = all
                .iter()
                .filter(|(at, s)| !at.ends_with("(key)") && !s.contains(REDACTED))
                .collect();
            assert!(untouched.is_empty(), "{echo}: {untouched:?}");
        }
    }
}
