//! `cautilus serve` over a project's real records (a dozen runs of one
//! suite through the fixture backend, a promoted baseline, an answer full
//! of markup), the server being the installed binary (`cautilus serve
//! --port 0`), killed when each test ends:
//!
//! - `api`: every route answers its read model (schema-checked); a foreign
//!   Host, a POST, run ids and case ids that try to leave the records and a
//!   fixture outside the project are refused without reading outside;
//! - `browser`: the app in headless Chromium shows a suite's history, a
//!   comparison and a failing cell's source line, and the live view shows
//!   cases finishing while a slow `exec` run goes.

mod api;
mod browser;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{cautilus, output};

/// An answer full of markup: it must come back as data and show as text.
pub(crate) const MARKUP: &str =
    "<script>window.__pwned = true;</script><img src=x onerror=\"window.__pwned = true\">";

/// A running `cautilus serve`, killed (and reaped) when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) url: String,
    pub(crate) port: u16,
}

impl Server {
    pub(crate) fn start(root: &Path) -> Self {
        let mut child = cautilus()
            .current_dir(root)
            .args(["serve", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        let port = url
            .trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        Self { child, url, port }
    }

    /// `method path` with `Host: host` (this server's by default).
    pub(crate) fn request(&self, method: &str, path: &str, host: Option<&str>) -> Answer {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let host = host.map_or(format!("127.0.0.1:{}", self.port), str::to_string);
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
        .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        Answer {
            status,
            head: head.to_ascii_lowercase(),
            body: body.to_string(),
        }
    }

    pub(crate) fn get(&self, path: &str) -> Answer {
        self.request("GET", path, None)
    }

    /// The JSON of a `200` answer to `GET path`.
    pub(crate) fn json(&self, path: &str) -> Value {
        let answer = self.get(path);
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        assert!(
            answer.head.contains("content-type: application/json"),
            "{path}"
        );
        serde_json::from_str(&answer.body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// The schema-checked JSON of a read model or wrapper.
pub(crate) fn checked(id: &str, value: Value) -> Value {
    assert_eq!(value["schemaVersion"], id);
    crate::schemas::validates(id, &value).unwrap_or_else(|e| panic!("{id}: {e}"));
    value
}

pub(crate) fn cli(root: &Path, args: &[&str]) -> (i32, String, String) {
    output(cautilus().current_dir(root).args(args).output().unwrap())
}

/// One run of `support`: `good` passes both cases; otherwise `refund`
/// fails with an answer full of markup.
fn run_support(root: &Path, good: bool, step: u32) {
    let refund = if good {
        "You can get a refund in 30 days.".to_string()
    } else {
        format!("{MARKUP} Refunds take a while.")
    };
    let answers = root.join(format!("canned-{step}.json"));
    let canned = json!({
        "refund": {"finalText": refund, "costUsd": 0.01 + f64::from(step) * 0.001, "durationMs": 100 + step * 10},
        "hours": {"finalText": "We are open 9 to 5; the refund desk too.", "costUsd": 0.02, "durationMs": 300},
    });
    std::fs::write(&answers, canned.to_string()).unwrap();
    let (code, _, stderr) = cli(
        root,
        &[
            "eval",
            "test",
            "--fixture",
            "evals/support.fixture.yaml",
            "--fixture-results",
            answers.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert!(code == 0 || code == 1, "{stderr}");
}

/// A project with a dozen runs of `support` (six, the oldest promoted,
/// six more), passing and failing in turn.
pub(crate) fn history() -> tempfile::TempDir {
    let dir = crate::evidence::project();
    let root = dir.path();
    for step in 0..6 {
        run_support(root, step % 2 == 0, step);
    }
    let mut runs: Vec<String> = std::fs::read_dir(root.join("records/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    let oldest = format!("records/runs/{}", runs[0]);
    let (code, _, stderr) = cli(root, &["eval", "promote", &oldest]);
    assert_eq!(code, 0, "{stderr}");
    for step in 6..12 {
        run_support(root, step % 2 == 0, step);
    }
    dir
}

pub(crate) fn ids(page: &Value) -> Vec<String> {
    page["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}
