//! The `log` import: always allowed, into the store's bounded sink
//! ([`LogSink`], the `log` capability).

use wasmtime::component::{HasData, Linker};

use crate::plugin::bindings::log;
use crate::plugin::bindings::types::LogLevel;
use crate::plugin::capability::log::LogSink;

/// The `log` interface's data: the store's sink, nothing else.
pub struct Log;

impl HasData for Log {
    type Data<'a> = &'a mut LogSink;
}

/// A store state that serves `log`.
pub trait LogView {
    fn log(&mut self) -> &mut LogSink;
}

impl log::Host for LogSink {
    fn log(&mut self, level: LogLevel, message: String) {
        self.push(level, message);
    }
}

pub(super) fn add_to_linker<T: LogView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    log::add_to_linker::<T, Log>(linker, T::log)
}
