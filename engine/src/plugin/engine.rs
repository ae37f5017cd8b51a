//! The one `Engine` of a process (with fuel metering only when a fuel
//! budget may be set) and the epoch ticker that enforces wall-clock
//! deadlines.
//!
//! Deadlines use epoch interruption: a background thread bumps the engine's
//! epoch every [`EPOCH_TICK`], and each guest call is given a deadline of
//! `ceil(limit / tick)` epochs. The thread holds only a weak reference and
//! exits when the engine is dropped.

use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig};

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
/// Instances come from the pooling allocator: slots are reserved once
/// (virtual memory only) and reused, which makes a fresh store several times
/// cheaper than mapping memory per instance. Where the reservation is
/// refused (e.g. under `ulimit -v`), the engine falls back to on-demand
/// allocation, which behaves the same, only slower to instantiate.
pub fn build_engine(fuel_metering: bool) -> wasmtime::Result<Engine> {
    let engine = match Engine::new(&config(Some(pooling()), fuel_metering)) {
        Ok(engine) => engine,
        Err(_) => Engine::new(&config(None, fuel_metering))?,
    };
    spawn_epoch_ticker(&engine);
    Ok(engine)
}

fn config(pooling: Option<PoolingAllocationConfig>, fuel_metering: bool) -> Config {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .consume_fuel(fuel_metering)
        .cranelift_opt_level(OptLevel::Speed)
        .parallel_compilation(true);
    if let Some(pooling) = pooling {
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
    }
    config
}

/// Room for a few hundred live plugin stores at once (each component
/// instance holds several core instances, memories and tables).
///
/// Async fiber stacks are only used by provider calls (a store keeps one
/// while it lives): at most `--concurrency` (≤ 256) sessions in a run, plus
/// a few for `describe`. Each pooled stack costs a guard-page `mprotect`
/// when the engine is built (1,000 of them were ~3 ms of every start-up).
fn pooling() -> PoolingAllocationConfig {
    let mut pooling = PoolingAllocationConfig::default();
    pooling
        .total_component_instances(1000)
        .total_core_instances(4000)
        .total_memories(2000)
        .total_tables(4000)
        .total_stacks(FIBER_STACKS);
    pooling
}

/// Pooled async stacks: twice the largest `--concurrency`.
pub const FIBER_STACKS: u32 = 512;

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
