//! The data of one plugin store: a WASI context with no ambient authority
//! (no preopened directories, no environment, no arguments, no sockets, no
//! name lookup; clocks and random numbers are available), the memory cap,
//! the captured stderr, the current call's clock, and one context per host
//! interface, each built once from the plugin's policies
//! ([`super::capability`]) and shown to its import alone through a view
//! ([`super::imports`]).

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::capability::log::LogSink;
use super::capability::{Policies, Requested};
use super::capture::HeadCapture;
use super::grants::Grants;
use super::imports::CallCtx;
use super::imports::http::{HttpCtx, HttpCtxView, HttpView};
use super::imports::log::LogView;
use super::imports::model::{ModelCtx, ModelView};
use super::imports::process::{ProcessCtx, ProcessCtxView, ProcessView};
use super::limits::{Limits, MemoryCap};

/// Bytes of guest stderr kept (for panic messages); the rest is dropped.
const STDERR_CAPTURE_BYTES: usize = 16 * 1024;

/// Data of one plugin store.
pub struct StoreState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) memory: MemoryCap,
    stderr: HeadCapture,
    call: CallCtx,
    log: LogSink,
    model: ModelCtx,
    http: HttpCtx,
    process: ProcessCtx,
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
        let policies = Policies::new(plugin.clone(), &requested, &grants);
        Self {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryCap::new(limits.memory_bytes),
            stderr,
            call: CallCtx::new(Instant::now() + limits.timeout),
            log: LogSink::new(plugin, limits.output_bytes),
            model: ModelCtx {
                policy: policies.model,
            },
            http: HttpCtx::new(policies.http, &grants, limits.output_bytes),
            process: ProcessCtx::new(policies.process, &grants, limits.output_bytes),
        }
    }

    /// Whether the memory cap refused a growth request in this store.
    pub fn memory_refused(&self) -> bool {
        self.memory.refused()
    }

    /// What the guest wrote to stderr (truncated), lossily decoded.
    pub fn stderr_text(&self) -> String {
        self.stderr.text()
    }

    /// A guest call begins; it must end at `deadline`.
    pub(crate) fn start_call(&mut self, deadline: Instant) {
        self.call.start(deadline);
    }

    /// When the first content of the last call's first successful `http`
    /// answer arrived, if it made one.
    pub(crate) fn first_content(&self) -> Option<Instant> {
        self.call.first_content
    }

    /// Serves the next calls in the case's own `workspace` (`None`: the run's).
    pub(crate) fn set_case_workspace(&mut self, workspace: &Option<std::path::PathBuf>) {
        self.process.case_workspace.clone_from(workspace);
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

impl LogView for StoreState {
    fn log(&mut self) -> &mut LogSink {
        &mut self.log
    }
}

impl ModelView for StoreState {
    fn model(&mut self) -> &mut ModelCtx {
        &mut self.model
    }
}

impl HttpView for StoreState {
    fn http(&mut self) -> HttpCtxView<'_> {
        HttpCtxView {
            ctx: &self.http,
            call: &mut self.call,
        }
    }
}

impl ProcessView for StoreState {
    fn process(&mut self) -> ProcessCtxView<'_> {
        ProcessCtxView {
            ctx: &self.process,
            call: &self.call,
        }
    }
}
