//! A WASI output stream that keeps the first N bytes and drops the rest.
//!
//! Guest stderr goes here so the host can report a panic message, while a
//! chatty or hostile plugin can neither grow host memory without bound nor
//! crash itself because a pipe filled up (a full pipe makes Rust's
//! `eprintln!` panic; this stream always accepts writes).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// Shared handle to a bounded capture buffer.
#[derive(Clone)]
pub struct HeadCapture {
    capacity: usize,
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl HeadCapture {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            buffer: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The captured bytes, lossily decoded.
    pub fn text(&self) -> String {
        let buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&buffer).into_owned()
    }

    fn append(&self, bytes: &[u8]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.capacity.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl IsTerminal for HeadCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for HeadCapture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for HeadCapture {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for HeadCapture {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for HeadCapture {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.append(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_head() {
        let capture = HeadCapture::new(8);
        capture.append(b"hello ");
        capture.append(b"world, and more");
        assert_eq!(capture.text(), "hello wo");
    }
}
