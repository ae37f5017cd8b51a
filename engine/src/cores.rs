//! The number of cores this process may use, read once: the standard
//! library asks the kernel (and the cgroup's CPU quota files) every time.

use std::sync::OnceLock;

/// Cores available to this process (at least 1).
pub fn available() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}
