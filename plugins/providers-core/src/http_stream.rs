//! A service's answer as JSON documents: the whole body (`stream: none`),
//! each server-sent event's data (`sse`: `data:` lines joined, an event
//! ended by a blank line, `[DONE]` ends the stream, comments and other
//! fields skipped) or each line (`ndjson`). The host's transport has read
//! the whole body and timed its first content; this only splits it.

use serde_json::Value;

/// How the service sends its answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stream {
    None,
    Sse,
    Ndjson,
}

impl Stream {
    pub fn parse(name: Option<&str>) -> Result<Self, String> {
        match name {
            None | Some("none") => Ok(Self::None),
            Some("sse") => Ok(Self::Sse),
            Some("ndjson") => Ok(Self::Ndjson),
            Some(other) => Err(format!(
                "unknown `stream: {other}`; use none, sse or ndjson"
            )),
        }
    }
}

/// The JSON documents of `body`, or what is wrong (with an excerpt).
pub fn documents(body: &str, stream: Stream) -> Result<Vec<Value>, String> {
    let parse = |text: &str, what: &str| {
        serde_json::from_str::<Value>(text).map_err(|e| {
            format!(
                "{what} is not JSON ({e}): {}",
                cautilus_sdk::excerpt(text, 300)
            )
        })
    };
    match stream {
        Stream::None => Ok(vec![parse(body.trim(), "the body")?]),
        Stream::Ndjson => body
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| parse(line.trim(), &format!("line {}", i + 1)))
            .collect(),
        Stream::Sse => {
            let mut found = Vec::new();
            for (i, data) in sse_data(body).iter().enumerate() {
                if data.trim() == "[DONE]" {
                    break;
                }
                found.push(parse(data, &format!("event {}'s data", i + 1))?);
            }
            Ok(found)
        }
    }
}

/// The data of each event of a server-sent event stream, in order: its
/// `data:` lines joined by newlines; comments and other fields skipped
/// (the `openai` provider reads its streams with it too).
pub fn sse_data(body: &str) -> Vec<String> {
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in body.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut data {
                Some(text) => {
                    text.push('\n');
                    text.push_str(value);
                }
                None => data = Some(value.to_string()),
            }
        }
    }
    events.extend(data);
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn event_streams_give_each_events_data_until_done() {
        let body = ": ping\n\nevent: delta\ndata: {\"t\":\"Hel\"}\n\nid: 2\r\ndata: {\"t\":\r\ndata: \"lo\"}\r\n\r\ndata: [DONE]\n\ndata: {\"t\":\"after\"}\n\n";
        assert_eq!(
            documents(body, Stream::Sse).unwrap(),
            [json!({"t": "Hel"}), json!({"t": "lo"})]
        );
        // The last event needs no blank line after it.
        assert_eq!(
            documents("data: 1\n\ndata:2", Stream::Sse).unwrap(),
            [json!(1), json!(2)]
        );
        let error = documents("data: {\"t\":\n\n", Stream::Sse).unwrap_err();
        assert!(error.starts_with("event 1's data is not JSON"), "{error}");
    }

    #[test]
    fn ndjson_gives_each_line_and_a_whole_body_one_document() {
        assert_eq!(
            documents("{\"a\":1}\n\n{\"a\":2}\r\n", Stream::Ndjson).unwrap(),
            [json!({"a": 1}), json!({"a": 2})]
        );
        let error = documents("{\"a\":1}\nnope\n", Stream::Ndjson).unwrap_err();
        assert!(error.starts_with("line 2 is not JSON"), "{error}");
        assert!(error.ends_with("\"nope\""), "{error}");
        assert_eq!(
            documents(" {\"a\":1} ", Stream::None).unwrap(),
            [json!({"a": 1})]
        );
        assert!(
            documents("<html>", Stream::None)
                .unwrap_err()
                .contains("the body is not JSON")
        );
        assert_eq!(
            Stream::parse(Some("ws")).unwrap_err(),
            "unknown `stream: ws`; use none, sse or ndjson"
        );
    }
}
