//! What the `http` provider reads from a service's answer, by JSONPath
//! (RFC 9535, through `serde_json_path`): the answer's text, and
//! optionally its usage, cost, tool calls and a session id.
//!
//! An answer is one or more JSON documents ([`crate::http_stream`]): the
//! text is the concatenation of what the `answer` path finds in each (a
//! stream's deltas; one document's value when not streamed); usage, cost
//! and tool calls are the last document's that has them. A path that
//! finds nothing in any document is an error naming it.

use cautilus_sdk::{ToolCall, Usage};
use serde_json::Value;
use serde_json_path::JsonPath;

/// A JSONPath as written and parsed.
#[derive(Debug, Clone)]
pub struct Path {
    pub text: String,
    parsed: JsonPath,
}

impl Path {
    /// Parses `text`; the error says why (`at`: where it is written).
    pub fn parse(text: &str, at: &str) -> Result<Self, String> {
        JsonPath::parse(text)
            .map(|parsed| Self {
                text: text.to_string(),
                parsed,
            })
            .map_err(|e| format!("`{at}`: `{text}` is not a JSONPath (RFC 9535): {e}"))
    }

    /// The first value it finds in `document`.
    pub fn first<'a>(&self, document: &'a Value) -> Option<&'a Value> {
        self.parsed.query(document).first().filter(|v| !v.is_null())
    }
}

/// The usage counts' names, as the observation records them.
pub const USAGE_KEYS: &[&str] = &[
    "inputTokens",
    "outputTokens",
    "cachedInputTokens",
    "reasoningTokens",
    "llmCalls",
];

/// The paths of what is read.
#[derive(Debug, Clone)]
pub struct Paths {
    pub answer: Path,
    /// (usage key, path)
    pub usage: Vec<(String, Path)>,
    pub cost_usd: Option<Path>,
    pub tool_calls: Option<Path>,
    /// The session id (`session.idPath`).
    pub session_id: Option<Path>,
}

/// What an answer gave.
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub text: String,
    pub usage: Option<Usage>,
    pub cost_usd: Option<f64>,
    pub tool_calls: Option<Vec<ToolCall>>,
    pub session_id: Option<Value>,
}

/// The last document's value at `path`, if any has one.
fn last<'a>(documents: &'a [Value], path: &Path) -> Option<&'a Value> {
    documents.iter().rev().find_map(|d| path.first(d))
}

/// Reads `documents` by `paths`; an error names the path and what is
/// wrong (the caller adds the response's excerpt).
pub fn read(documents: &[Value], paths: &Paths) -> Result<Read, String> {
    let mut text = String::new();
    let mut found = false;
    for document in documents {
        match paths.answer.first(document) {
            Some(Value::String(s)) => {
                found = true;
                text.push_str(s);
            }
            Some(other) => {
                found = true;
                text.push_str(&other.to_string());
            }
            None => {}
        }
    }
    if !found {
        return Err(format!(
            "the answer path `{}` found nothing in the response",
            paths.answer.text
        ));
    }
    let mut read = Read {
        text,
        ..Read::default()
    };
    let mut usage = Usage {
        input_tokens: None,
        output_tokens: None,
        cached_input_tokens: None,
        reasoning_tokens: None,
        llm_calls: None,
    };
    let mut any = false;
    for (key, path) in &paths.usage {
        let Some(value) = last(documents, path) else {
            continue;
        };
        let count = value.as_u64().ok_or_else(|| {
            format!(
                "the usage path `{}` (`usage.{key}`) found {}, not a whole number of 0 or more",
                path.text,
                cautilus_sdk::excerpt(&value.to_string(), 80)
            )
        })?;
        any = true;
        match key.as_str() {
            "inputTokens" => usage.input_tokens = Some(count),
            "outputTokens" => usage.output_tokens = Some(count),
            "cachedInputTokens" => usage.cached_input_tokens = Some(count),
            "reasoningTokens" => usage.reasoning_tokens = Some(count),
            _ => usage.llm_calls = Some(u32::try_from(count).unwrap_or(u32::MAX)),
        }
    }
    read.usage = any.then_some(usage);
    if let Some(path) = &paths.cost_usd
        && let Some(value) = last(documents, path)
    {
        read.cost_usd = Some(
            value
                .as_f64()
                .filter(|c| c.is_finite() && *c >= 0.0)
                .ok_or_else(|| {
                    format!(
                        "the cost path `{}` found {}, not a number of 0 or more",
                        path.text,
                        cautilus_sdk::excerpt(&value.to_string(), 80)
                    )
                })?,
        );
    }
    if let Some(path) = &paths.tool_calls
        && let Some(value) = last(documents, path)
    {
        read.tool_calls = Some(
            crate::exec::tool_calls_of(value)
                .map_err(|why| format!("the tool-call path `{}` found {why}", path.text))?,
        );
    }
    if let Some(path) = &paths.session_id {
        read.session_id = documents.iter().find_map(|d| path.first(d)).cloned();
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(text: &str) -> Path {
        Path::parse(text, "http.answer").unwrap()
    }

    fn paths(answer: &str) -> Paths {
        Paths {
            answer: path(answer),
            usage: vec![
                ("inputTokens".into(), path("$.usage.in")),
                ("outputTokens".into(), path("$.usage.out")),
            ],
            cost_usd: Some(path("$.cost")),
            tool_calls: Some(path("$.tools")),
            session_id: Some(path("$.session")),
        }
    }

    #[test]
    fn a_whole_answer_gives_its_text_usage_cost_tools_and_session() {
        let document = json!({"reply": {"text": "Hello"}, "usage": {"in": 3, "out": 2},
            "cost": 0.25, "tools": [{"name": "lookup", "arguments": {"q": "x"}}], "session": "s-1"});
        let read = read(&[document], &paths("$.reply.text")).unwrap();
        assert_eq!(read.text, "Hello");
        let usage = read.usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(3), Some(2))
        );
        assert_eq!(read.cost_usd, Some(0.25));
        assert_eq!(read.tool_calls.unwrap()[0].name, "lookup");
        assert_eq!(read.session_id, Some(json!("s-1")));
    }

    #[test]
    fn a_stream_concatenates_its_deltas_and_keeps_the_last_usage() {
        let documents = [
            json!({"choices": [{"delta": {"role": "assistant"}}]}),
            json!({"choices": [{"delta": {"content": "Hel"}}]}),
            json!({"choices": [{"delta": {"content": "lo"}}], "usage": {"in": 1}}),
            json!({"usage": {"in": 4, "out": 2}}),
        ];
        let read = read(&documents, &paths("$.choices[0].delta.content")).unwrap();
        assert_eq!(read.text, "Hello");
        assert_eq!(read.usage.unwrap().input_tokens, Some(4));
        assert!(read.cost_usd.is_none() && read.tool_calls.is_none());
    }

    #[test]
    fn paths_that_find_nothing_or_the_wrong_thing_are_named() {
        let rows = [
            (
                json!({"text": "hi"}),
                "$.reply",
                "the answer path `$.reply` found nothing",
            ),
            (
                json!({"reply": "hi", "usage": {"in": -1}}),
                "$.reply",
                "the usage path `$.usage.in` (`usage.inputTokens`) found \"-1\", not a whole number",
            ),
            (
                json!({"reply": "hi", "cost": "1"}),
                "$.reply",
                "the cost path `$.cost` found \"\\\"1\\\"\"",
            ),
            (
                json!({"reply": "hi", "tools": [{}]}),
                "$.reply",
                "the tool-call path `$.tools` found a `toolCalls[0]` without a `name`",
            ),
        ];
        for (document, answer, expected) in rows {
            let error = read(&[document], &paths(answer)).unwrap_err();
            assert!(error.contains(expected), "{expected}: {error}");
        }
        let error = Path::parse("$.a[", "http.answer").unwrap_err();
        assert!(
            error.starts_with("`http.answer`: `$.a[` is not a JSONPath"),
            "{error}"
        );
    }
}
