//! A plugin's store and one guest call within its limits: a fresh store
//! with the memory cap and no capability beyond its grants ([`new_store`]),
//! the call's deadline and fuel armed ([`arm`]), and a failed call turned
//! into a typed error naming its cause ([`classify`]).

use std::sync::Arc;

use wasmtime::{Engine, Store, Trap};

use super::capability::Requested;
use super::engine::deadline_ticks;
use super::error::{PluginError, panic_message};
use super::grants::Grants;
use super::limits::Limits;
use super::store_state::StoreState;

/// A fresh store for one plugin: limits installed, no capabilities beyond `grants`.
pub(crate) fn new_store(
    engine: &Engine,
    plugin: Arc<str>,
    limits: &Limits,
    grants: Arc<Grants>,
    requested: Requested,
) -> Store<StoreState> {
    let mut store = Store::new(engine, StoreState::new(plugin, limits, grants, requested));
    store.limiter(|state| &mut state.memory);
    store.epoch_deadline_trap();
    store
}

/// Arms the per-call deadline and fuel budget before a guest call.
pub(crate) fn arm(store: &mut Store<StoreState>, limits: &Limits) {
    store.set_epoch_deadline(deadline_ticks(limits.timeout));
    let now = std::time::Instant::now();
    store.data_mut().start_call(now + limits.timeout);
    // Without a budget, a metered engine gets effectively unlimited fuel. An
    // unmetered one has none to set (`armed_store` refuses a budget there);
    // asking would build an error, with a backtrace under RUST_BACKTRACE.
    if store.engine().get_consume_fuel() {
        let _ = store.set_fuel(limits.fuel.unwrap_or(u64::MAX));
    }
}

/// Turns a failed guest call into a typed error naming the cause.
pub(crate) fn classify(
    error: wasmtime::Error,
    store: &Store<StoreState>,
    limits: &Limits,
    plugin: &str,
) -> PluginError {
    let plugin = plugin.to_string();
    if let Some(trap) = error.downcast_ref::<Trap>() {
        match trap {
            Trap::Interrupt => {
                return PluginError::Deadline {
                    plugin,
                    limit_ms: u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
                };
            }
            Trap::OutOfFuel => {
                return PluginError::FuelExhausted {
                    plugin,
                    fuel: limits.fuel.unwrap_or(u64::MAX),
                };
            }
            _ => {}
        }
    }
    let state = store.data();
    if state.memory_refused() {
        return PluginError::MemoryLimit {
            plugin,
            limit_bytes: limits.memory_bytes,
        };
    }
    let stderr = state.stderr_text();
    if let Some(message) = panic_message(&stderr) {
        return PluginError::Panic { plugin, message };
    }
    let mut message = format!("{error:#}");
    let stderr = stderr.trim();
    if !stderr.is_empty() {
        message.push_str("; stderr: ");
        message.push_str(&super::excerpt(stderr, 500));
    }
    PluginError::Trap { plugin, message }
}
