//! Test support: paths of the test components and loopback HTTP servers
//! (a one-shot probe, and a scripted model server in [`model_server`]).

pub mod model_server;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// Path of a test component built from `tests/components/<name>`.
pub fn component(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CAUTILUS_TEST_COMPONENTS_DIR"));
    let path = dir.join(format!("test_{}.wasm", name.replace('-', "_")));
    assert!(
        path.is_file(),
        "test component {} was not built",
        path.display()
    );
    path
}

/// A one-shot HTTP server on 127.0.0.1 that answers one request with `body`
/// and reports the request's header lines. It stops by itself after one
/// request or after ten seconds.
pub struct LoopbackServer {
    pub url: String,
    requests: mpsc::Receiver<Vec<String>>,
}

impl LoopbackServer {
    pub fn start(body: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!(
            "http://127.0.0.1:{}/probe",
            listener.local_addr().unwrap().port()
        );
        listener.set_nonblocking(true).unwrap();
        let (sender, requests) = mpsc::channel();
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while std::time::Instant::now() < deadline {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                stream.set_nonblocking(false).unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut lines = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    lines.push(line.trim_end().to_string());
                }
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sender.send(lines);
                return;
            }
        });
        Self { url, requests }
    }

    /// The header lines of the request served, if one arrived in time.
    pub fn request(&self) -> Option<Vec<String>> {
        self.requests.recv_timeout(Duration::from_secs(10)).ok()
    }
}
