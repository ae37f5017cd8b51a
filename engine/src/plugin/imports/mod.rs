//! Host imports offered to plugins: one module per interface, each with
//! its own context and a view of the store that shows only that context
//! (the shape of wasmtime-wasi's `cli.rs`: a context, a `*CtxView`, a
//! `*View` trait the store state implements, and a [`HasData`] marker that
//! the generated `add_to_linker` takes).
//!
//! - [`log`]: always available, bounded by the store's output limit;
//! - [`model`]: the run's model, behind [`super::capability::model`];
//! - [`http`]: outbound requests, behind [`super::capability::http`];
//! - [`process`]: programs, behind [`super::capability::process`].
//!
//! A call the policy refuses gets a `denied` error naming what is
//! missing; never a trap, so a plugin can degrade gracefully. The imports
//! that wait (`http`, `process`) also see the current guest call's clock
//! ([`CallCtx`]): epoch interruption cannot stop host code, so they cap
//! their own timeouts by the time left.
//!
//! Which interfaces each world links is said once, below.

pub mod http;
pub mod log;
pub mod model;
pub mod process;

pub(crate) use process::run_bounded;

use std::time::{Duration, Instant};

use wasmtime::Engine;
use wasmtime::component::{HasData, Linker};
use wasmtime_wasi::WasiView;

use super::bindings::types;

/// The current guest call, as the imports that wait see it.
#[derive(Debug, Clone)]
pub struct CallCtx {
    /// When the current guest call must end (set by `arm`).
    pub deadline: Instant,
    /// When the first content of the current call's first successful
    /// `http` answer arrived, if it made one.
    pub first_content: Option<Instant>,
}

impl CallCtx {
    pub fn new(deadline: Instant) -> Self {
        Self {
            deadline,
            first_content: None,
        }
    }

    /// A new guest call begins: it ends at `deadline`, nothing answered yet.
    pub fn start(&mut self, deadline: Instant) {
        *self = Self::new(deadline);
    }

    /// A host call may not outlive the guest call that made it.
    pub fn bounded(&self, asked: Duration) -> Duration {
        asked.min(self.deadline.saturating_duration_since(Instant::now()))
    }
}

/// The `types` interface holds records only: there is nothing to serve,
/// but every world imports it.
pub struct Types;

impl HasData for Types {
    type Data<'a> = Types;
}

impl types::Host for Types {}

fn add_types<T: 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    types::add_to_linker::<T, Types>(linker, |_| Types)
}

/// The scorer world: WASI (sync), `log` and `model`.
pub(crate) fn scorer_linker<T>(engine: &Engine) -> wasmtime::Result<Linker<T>>
where
    T: WasiView + log::LogView + model::ModelView + 'static,
{
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    add_types(&mut linker)?;
    log::add_to_linker(&mut linker)?;
    model::add_to_linker(&mut linker)?;
    Ok(linker)
}

/// The preset world: WASI (sync) and `log`.
pub(crate) fn preset_linker<T>(engine: &Engine) -> wasmtime::Result<Linker<T>>
where
    T: WasiView + log::LogView + 'static,
{
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    add_types(&mut linker)?;
    log::add_to_linker(&mut linker)?;
    Ok(linker)
}

/// The provider world: WASI (async: providers are called with
/// `call_async`, see [`super::io`]), `log`, `http` and `process`.
pub(crate) fn provider_linker<T>(engine: &Engine) -> wasmtime::Result<Linker<T>>
where
    T: WasiView + log::LogView + http::HttpView + process::ProcessView + 'static,
{
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    add_types(&mut linker)?;
    log::add_to_linker(&mut linker)?;
    http::add_to_linker(&mut linker)?;
    process::add_to_linker(&mut linker)?;
    Ok(linker)
}
