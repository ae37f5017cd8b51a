//! The one `Engine` of a process (with fuel metering only when a fuel
//! budget may be set) and the epoch ticker that enforces wall-clock
//! deadlines.
//!
//! Deadlines use epoch interruption: a background thread bumps the engine's
//! epoch every [`EPOCH_TICK`], and each guest call is given a deadline of
//! `ceil(limit / tick)` epochs. The thread holds only a weak reference and
//! exits when the engine is dropped.

use std::time::Duration;

use wasmtime::{Config, Engine, OptLevel};

/// Granularity of deadlines. A call is stopped at most one tick after its limit.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Builds the engine every plugin of this process shares.
///
/// With `fuel_metering`, every component is compiled with fuel counting so
/// that a per-call fuel budget can be set (calls without one get effectively
/// unlimited fuel). Counting costs every guest about a sixth of its time, so
/// a process whose limits set no budget builds its engine without it (the
/// compiled cache keeps the two kinds apart).
///
/// Instances are allocated on demand. The pooling allocator (slots reserved
/// once and reused) made a fresh store cheaper when every case had its own
/// stores; a run now keeps one store per worker and plugin, and setting up
/// the pool (a guard page per async stack, index tables) cost about 2 ms of
/// every command's start-up, more than it saved any run measured
/// (bench/README.md, "Start-up").
pub fn build_engine(fuel_metering: bool) -> wasmtime::Result<Engine> {
    let engine = Engine::new(&config(fuel_metering))?;
    spawn_epoch_ticker(&engine);
    Ok(engine)
}

fn config(fuel_metering: bool) -> Config {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .consume_fuel(fuel_metering)
        .cranelift_opt_level(OptLevel::Speed)
        .parallel_compilation(true);
    // Native unwind tables only let outside unwinders (a debugger, the
    // `backtrace` crate) walk through guest frames; Wasmtime's own traps and
    // backtraces do without them. Registering and unregistering them costs
    // every component load (quadratic in its functions with libgcc), which
    // start-up pays twice. Windows requires them.
    if !cfg!(windows) {
        config.native_unwind_info(false);
    }
    config
}

/// Number of epoch ticks for a wall-clock limit (at least one).
pub fn deadline_ticks(limit: Duration) -> u64 {
    let tick = EPOCH_TICK.as_nanos();
    let ticks = limit.as_nanos().div_ceil(tick);
    u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
}

fn spawn_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("cautilus-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .expect("spawning the epoch ticker thread");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_ticks_round_up() {
        assert_eq!(deadline_ticks(Duration::from_millis(0)), 1);
        assert_eq!(deadline_ticks(Duration::from_millis(1)), 1);
        assert_eq!(deadline_ticks(EPOCH_TICK), 1);
        assert_eq!(deadline_ticks(EPOCH_TICK * 2 + Duration::from_nanos(1)), 3);
        assert_eq!(deadline_ticks(Duration::from_secs(2)), 400);
    }
}
