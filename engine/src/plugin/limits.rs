//! Per-store limits.
//!
//! A store gets: a wall-clock deadline per call (epoch interruption), a
//! memory cap (enforced by [`MemoryCap`], which also remembers that it
//! refused growth so the resulting trap is reported as a memory-limit error),
//! an optional fuel budget per call, and a cap on the bytes a plugin may
//! return or log. The store's data is [`super::store_state::StoreState`].

use std::time::Duration;

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

/// Memory limiter for the whole instance (every core memory and table of
/// the component counts against one budget); records whether it refused.
pub struct MemoryCap {
    limit: usize,
    used: usize,
    refused: bool,
}

impl MemoryCap {
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            used: 0,
            refused: false,
        }
    }

    /// Whether it refused a growth request.
    pub fn refused(&self) -> bool {
        self.refused
    }

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
