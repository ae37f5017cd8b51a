//! A scripted model server on 127.0.0.1 for provider tests: it serves any
//! number of HTTP/1.1 requests, records each one (method, path, headers,
//! body) and answers with what the test's script returns. It stops when
//! dropped, or by itself after five minutes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A Messages API answer streamed as Claude Code reads it (`stream: true`).
pub fn anthropic_stream(model: &str, text: &str) -> Reply {
    anthropic_blocks(model, &[serde_json::json!({"type": "text", "text": text})])
}

/// A streamed Messages API answer of content blocks: `{"type": "text",
/// "text"}` and `{"type": "tool_use", "id", "name", "input"}` (the answer
/// then stops for the tool's result, so a coding agent runs the tool).
pub fn anthropic_blocks(model: &str, blocks: &[serde_json::Value]) -> Reply {
    let data = |value: serde_json::Value| value.to_string();
    let mut events = vec![(
        "message_start",
        data(serde_json::json!({"type": "message_start", "message": {
        "id": "msg_loopback", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 1}}})),
    )];
    let mut uses_tool = false;
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = if block["type"] == "tool_use" {
            uses_tool = true;
            (
                serde_json::json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                serde_json::json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        } else {
            (
                serde_json::json!({"type": "text", "text": ""}),
                serde_json::json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        events.push((
            "content_block_start",
            data(serde_json::json!({"type": "content_block_start", "index": index, "content_block": start})),
        ));
        events.push((
            "content_block_delta",
            data(
                serde_json::json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ),
        ));
        events.push((
            "content_block_stop",
            data(serde_json::json!({"type": "content_block_stop", "index": index})),
        ));
    }
    let stop = if uses_tool { "tool_use" } else { "end_turn" };
    events.push((
        "message_delta",
        data(serde_json::json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": 7}})),
    ));
    events.push((
        "message_stop",
        data(serde_json::json!({"type": "message_stop"})),
    ));
    Reply::events(events)
}

/// A Responses API answer streamed as Codex reads it (`stream: true`).
pub fn openai_responses_stream(model: &str, text: &str) -> Reply {
    let data = |value: serde_json::Value| value.to_string();
    let item = serde_json::json!({"id": "msg_loopback", "type": "message", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]});
    let response = serde_json::json!({"id": "resp_loopback", "object": "response", "created_at": 0,
        "status": "in_progress", "model": model, "output": []});
    let mut done = response.clone();
    done["status"] = "completed".into();
    done["output"] = serde_json::json!([item]);
    done["usage"] = serde_json::json!({"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 200},
        "output_tokens": 100, "output_tokens_details": {"reasoning_tokens": 40}, "total_tokens": 1100});
    Reply::events([
        (
            "response.created",
            data(serde_json::json!({"type": "response.created", "response": response})),
        ),
        (
            "response.output_item.added",
            data(serde_json::json!({"type": "response.output_item.added",
            "output_index": 0, "item": {"id": "msg_loopback", "type": "message", "status": "in_progress",
            "role": "assistant", "content": []}})),
        ),
        (
            "response.output_text.delta",
            data(serde_json::json!({"type": "response.output_text.delta",
            "item_id": "msg_loopback", "output_index": 0, "content_index": 0, "delta": text})),
        ),
        (
            "response.output_item.done",
            data(serde_json::json!({"type": "response.output_item.done",
            "output_index": 0, "item": item})),
        ),
        (
            "response.completed",
            data(serde_json::json!({"type": "response.completed", "response": done})),
        ),
    ])
}

/// A streamed Responses API answer whose output is `items` (a
/// `custom_tool_call` of Codex's `exec` tool, a `message` …), with fixed
/// usage.
pub fn openai_responses_items(model: &str, items: &[serde_json::Value]) -> Reply {
    let data = |value: serde_json::Value| value.to_string();
    let response = serde_json::json!({"id": "resp_loopback", "object": "response", "created_at": 0,
        "status": "in_progress", "model": model, "output": []});
    let mut done = response.clone();
    done["status"] = "completed".into();
    done["output"] = serde_json::Value::Array(items.to_vec());
    done["usage"] = serde_json::json!({"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 200},
        "output_tokens": 100, "output_tokens_details": {"reasoning_tokens": 40}, "total_tokens": 1100});
    let mut events = vec![(
        "response.created",
        data(serde_json::json!({"type": "response.created", "response": response})),
    )];
    for (index, item) in items.iter().enumerate() {
        events.push((
            "response.output_item.added",
            data(serde_json::json!({"type": "response.output_item.added", "output_index": index, "item": item})),
        ));
        events.push((
            "response.output_item.done",
            data(serde_json::json!({"type": "response.output_item.done", "output_index": index, "item": item})),
        ));
    }
    events.push((
        "response.completed",
        data(serde_json::json!({"type": "response.completed", "response": done})),
    ));
    Reply::events(events)
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the script answers: status, extra headers, body.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    /// A server-sent event stream of `(event, data)` pairs.
    pub fn events<'a>(events: impl IntoIterator<Item = (&'a str, String)>) -> Self {
        let body = events
            .into_iter()
            .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
            .collect();
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// An OpenAI Chat Completions answer that echoes the request's last user
/// message (for suites whose cases expect their input back).
pub fn openai_echo(request: &Recorded) -> Reply {
    let body: serde_json::Value = serde_json::from_str(&request.body).unwrap_or_default();
    let text = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    Reply::json(
        200,
        serde_json::json!({
            "id": "chatcmpl-echo", "object": "chat.completion",
            "model": body["model"].as_str().unwrap_or("loopback-model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
        })
        .to_string(),
    )
}

type Script = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

/// A running server; `url` is `http://127.0.0.1:<port>`.
pub struct ModelServer {
    pub url: String,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
}

impl ModelServer {
    /// Serves requests with `script(request, index)` (index counts from 0
    /// across all requests).
    pub fn start(script: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        listener.set_nonblocking(true).unwrap();
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        {
            let (recorded, stop) = (recorded.clone(), stop.clone());
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(300);
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (recorded, script) = (recorded.clone(), script.clone());
                            std::thread::spawn(move || serve(stream, &recorded, &*script));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            });
        }
        Self {
            url,
            recorded,
            stop,
        }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Serves one connection's requests (keep-alive) until it closes.
fn serve(stream: TcpStream, recorded: &Mutex<Vec<Recorded>>, script: &Script) {
    stream.set_nonblocking(false).ok();
    stream.set_nodelay(true).ok();
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut writer = stream.try_clone().expect("clone stream");
    let mut reader = BufReader::new(stream);
    loop {
        let mut first = String::new();
        if reader.read_line(&mut first).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = first.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let length = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request = Recorded {
            method,
            path,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        let index = {
            let mut all = recorded.lock().unwrap();
            all.push(request.clone());
            all.len() - 1
        };
        let reply = script(&request, index);
        let mut head = format!(
            "HTTP/1.1 {} X\r\ncontent-length: {}\r\n",
            reply.status,
            reply.body.len()
        );
        for (k, v) in &reply.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        // A HEAD reply has headers only.
        let body = if request.method == "HEAD" {
            ""
        } else {
            reply.body.as_str()
        };
        // One write: a head and a body sent apart would wait on the
        // client's delayed acknowledgement (Nagle).
        let mut whole = head.into_bytes();
        whole.extend_from_slice(body.as_bytes());
        if writer.write_all(&whole).is_err() {
            return;
        }
    }
}
