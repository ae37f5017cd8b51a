//! Per-store limits and the state every plugin store carries.
//!
//! A store gets: a wall-clock deadline per call (epoch interruption), a
//! memory cap (enforced by [`MemoryCap`], which also remembers that it
//! refused growth so the resulting trap is reported as a memory-limit error),
//! an optional fuel budget per call, a cap on the bytes a plugin may return
//! or log, and a WASI context with no ambient authority: no preopened
//! directories, no environment, no arguments, no sockets, no name lookup.
//! Clocks and random numbers are available.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::capture::HeadCapture;
use super::grants::{Grants, Requested};
use super::log_sink::LogSink;

/// Limits applied to every store of a plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Wall-clock budget of one guest call.
    pub timeout: Duration,
    /// Maximum linear memory of the whole instance, in bytes.
    pub memory_bytes: usize,
    /// Fuel (roughly: wasm instructions) per guest call; `None` = unmetered.
    pub fuel: Option<u64>,
    /// Maximum bytes of strings a plugin may return from one call, and of
    /// log text per store.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(2),
            memory_bytes: 64 * 1024 * 1024,
            fuel: None,
            output_bytes: 1024 * 1024,
        }
    }
}

/// Bytes of guest stderr kept (for panic messages); the rest is dropped.
const STDERR_CAPTURE_BYTES: usize = 16 * 1024;

/// Memory limiter for the whole instance (every core memory and table of
/// the component counts against one budget); records whether it refused.
pub struct MemoryCap {
    limit: usize,
    used: usize,
    refused: bool,
}

impl MemoryCap {
    fn grow(&mut self, current: usize, desired: usize) -> bool {
        let extra = desired.saturating_sub(current);
        match self.used.checked_add(extra) {
            Some(total) if total <= self.limit => {
                self.used = total;
                true
            }
            _ => {
                self.refused = true;
                false
            }
        }
    }
}

impl wasmtime::ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(current, desired))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Each table element costs a pointer; count it against the same cap.
        let size = std::mem::size_of::<usize>();
        Ok(self.grow(current.saturating_mul(size), desired.saturating_mul(size)))
    }
}

/// Data of one plugin store.
pub struct StoreState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) memory: MemoryCap,
    pub(crate) stderr: HeadCapture,
    pub(crate) plugin: Arc<str>,
    pub(crate) grants: Arc<Grants>,
    /// The current case's own workspace, overriding the grant's for `process`.
    pub(crate) case_workspace: Option<std::path::PathBuf>,
    pub(crate) log: LogSink,
    pub(crate) requested: Requested,
    pub(crate) output_limit: usize,
    /// When the current guest call must end (set by `arm`); host imports
    /// cap their own timeouts by it.
    pub(crate) deadline: std::time::Instant,
    /// When the first content of the current call's first successful
    /// `http` answer arrived, if it made one.
    pub(crate) first_content: Option<std::time::Instant>,
}

impl StoreState {
    pub fn new(
        plugin: Arc<str>,
        limits: &Limits,
        grants: Arc<Grants>,
        requested: Requested,
    ) -> Self {
        let stderr = HeadCapture::new(STDERR_CAPTURE_BYTES);
        let wasi = WasiCtxBuilder::new()
            .stdin(std::io::empty())
            // stdout is not a channel to the host: anything written is dropped.
            .stdout(std::io::empty())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        Self {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryCap {
                limit: limits.memory_bytes,
                used: 0,
                refused: false,
            },
            stderr,
            log: LogSink::new(plugin.clone(), limits.output_bytes),
            plugin,
            grants,
            case_workspace: None,
            requested,
            output_limit: limits.output_bytes,
            deadline: std::time::Instant::now() + limits.timeout,
            first_content: None,
        }
    }

    /// Whether the memory cap refused a growth request in this store.
    pub fn memory_refused(&self) -> bool {
        self.memory.refused
    }

    /// What the guest wrote to stderr (truncated), lossily decoded.
    pub fn stderr_text(&self) -> String {
        self.stderr.text()
    }
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_cap_is_for_all_memories_together() {
        let mut cap = MemoryCap {
            limit: 100,
            used: 0,
            refused: false,
        };
        assert!(cap.grow(0, 60));
        assert!(!cap.grow(0, 60), "a second memory shares the same budget");
        assert!(cap.refused);
        assert!(cap.grow(60, 100), "growing the first memory by 40 fits");
    }
}
