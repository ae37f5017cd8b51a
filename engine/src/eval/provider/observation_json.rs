//! An observation as JSON and back, for cassettes. JSON text inside it
//! (structured output, tool-call arguments) is kept as JSON, so redaction
//! reaches into it; text that is not JSON is kept as `{"unparsedText": …}`.

use serde_json::{Value, json};

use crate::plugin::bindings::types::{Message, Observation, ToolCall, Usage, WorkspaceTrace};

/// An observation as JSON (the cassette's form).
pub fn observation_json(o: &Observation) -> Value {
    // JSON text is kept as JSON, so redaction reaches into it.
    let parsed = |text: &Option<String>| {
        text.as_deref().map(|t| {
            serde_json::from_str::<Value>(t).unwrap_or_else(|_| json!({ "unparsedText": t }))
        })
    };
    let usage = o.usage.map(|u| {
        json!({"inputTokens": u.input_tokens, "outputTokens": u.output_tokens,
               "cachedInputTokens": u.cached_input_tokens, "reasoningTokens": u.reasoning_tokens,
               "llmCalls": u.llm_calls})
    });
    let tool_calls = o.tool_calls.as_ref().map(|calls| {
        calls
            .iter()
            .map(|c| {
                json!({"name": c.name, "arguments": parsed(&c.arguments), "output": c.output,
                       "succeeded": c.succeeded, "durationMs": c.duration_ms})
            })
            .collect::<Vec<_>>()
    });
    json!({
        "finalText": o.final_text,
        "messages": o.messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect::<Vec<_>>(),
        "toolCalls": tool_calls,
        "usage": usage,
        "costUsd": o.cost_usd,
        "costSource": o.cost_source,
        "retries": o.retries,
        "durationMs": o.duration_ms,
        "provider": o.provider,
        "model": o.model,
        "harness": o.harness,
        "mode": o.mode,
        "structured": parsed(&o.structured),
        "trace": o.trace.as_ref().map(trace_json),
    })
}

/// A workspace trace as JSON (the transcript as its lines, so redaction
/// reaches into them).
fn trace_json(t: &WorkspaceTrace) -> Value {
    json!({
        "filesRead": t.files_read,
        "instructionFiles": t.instruction_files,
        "skills": t.skills,
        "subagents": t.subagents,
        "commands": t.commands,
        "turns": t.turns,
        "sessionId": t.session_id,
        "transcript": t.transcript,
    })
}

fn trace_from(v: &Value) -> WorkspaceTrace {
    let list = |key: &str| -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    WorkspaceTrace {
        files_read: list("filesRead"),
        instruction_files: list("instructionFiles"),
        skills: list("skills"),
        subagents: list("subagents"),
        commands: list("commands"),
        turns: v
            .get("turns")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
        session_id: text("sessionId"),
        transcript: text("transcript"),
    }
}

/// An observation from its cassette form.
pub fn observation_from(v: &Value) -> Result<Observation, String> {
    let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    // JSON text back from its parsed form (see `observation_json`).
    let json_text = |value: Option<&Value>| match value {
        None | Some(Value::Null) => None,
        Some(v) => match v.get("unparsedText").and_then(Value::as_str) {
            Some(raw) => Some(raw.to_string()),
            None => Some(v.to_string()),
        },
    };
    let number = |value: &Value, key: &str| value.get(key).and_then(Value::as_u64);
    let messages = v
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("`messages` is missing")?
        .iter()
        .map(|m| {
            Ok(Message {
                role: m
                    .get("role")
                    .and_then(Value::as_str)
                    .ok_or("a message without `role`")?
                    .into(),
                content: m
                    .get("content")
                    .and_then(Value::as_str)
                    .ok_or("a message without `content`")?
                    .into(),
            })
        })
        .collect::<Result<Vec<_>, &str>>()?;
    let usage = v.get("usage").filter(|u| u.is_object()).map(|u| Usage {
        input_tokens: number(u, "inputTokens"),
        output_tokens: number(u, "outputTokens"),
        cached_input_tokens: number(u, "cachedInputTokens"),
        reasoning_tokens: number(u, "reasoningTokens"),
        llm_calls: number(u, "llmCalls").and_then(|n| u32::try_from(n).ok()),
    });
    let tool_calls = v.get("toolCalls").and_then(Value::as_array).map(|calls| {
        calls
            .iter()
            .map(|c| ToolCall {
                name: c
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .into(),
                arguments: json_text(c.get("arguments")),
                output: c.get("output").and_then(Value::as_str).map(str::to_string),
                succeeded: c.get("succeeded").and_then(Value::as_bool),
                duration_ms: number(c, "durationMs"),
            })
            .collect()
    });
    Ok(Observation {
        final_text: text("finalText"),
        messages,
        tool_calls,
        usage,
        cost_usd: v.get("costUsd").and_then(Value::as_f64),
        cost_source: text("costSource"),
        retries: number(v, "retries").and_then(|n| u32::try_from(n).ok()),
        duration_ms: number(v, "durationMs"),
        provider: text("provider"),
        model: text("model"),
        harness: text("harness"),
        mode: text("mode"),
        structured: json_text(v.get("structured")),
        trace: v.get("trace").filter(|t| t.is_object()).map(trace_from),
    })
}
