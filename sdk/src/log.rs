//! Logging through the host (plugin stdout is discarded; stderr is kept
//! only for panic messages). Lines show with `CAUTILUS_PLUGIN_LOG=debug`.

use crate::bindings::log::log;
use crate::bindings::types::LogLevel;

pub fn trace(message: &str) {
    log(LogLevel::Trace, message);
}
pub fn debug(message: &str) {
    log(LogLevel::Debug, message);
}
pub fn info(message: &str) {
    log(LogLevel::Info, message);
}
pub fn warn(message: &str) {
    log(LogLevel::Warn, message);
}
pub fn error(message: &str) {
    log(LogLevel::Error, message);
}
