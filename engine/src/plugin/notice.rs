//! What the runtime tells its user while a component compiles: the first
//! load of a large component (a Python or JavaScript scorer is ~20 MB)
//! compiles it with Cranelift for seconds, then the compiled cache serves
//! it. A compile of a component at least [`CompileNotice::min_bytes`] long
//! is announced on stderr before it starts and timed after; stdout (where
//! JSON goes) is never written. Each component compiles at most once per
//! process, so this is at most two lines per component and run.
//!
//! The threshold is `CAUTILUS_COMPILE_NOTICE_BYTES` (default
//! [`DEFAULT_MIN_BYTES`]; `0` announces every compile).

use std::sync::OnceLock;
use std::time::Duration;

/// Components at least this long are announced when they compile: Python
/// and JavaScript scorers, and the built-in scorers on a fresh machine.
pub const DEFAULT_MIN_BYTES: u64 = 2_000_000;

/// The variable that sets the threshold, in bytes.
pub const VARIABLE: &str = "CAUTILUS_COMPILE_NOTICE_BYTES";

/// When compiles are announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompileNotice {
    /// Compiles of components at least this many bytes long.
    pub min_bytes: u64,
}

impl CompileNotice {
    /// The threshold `CAUTILUS_COMPILE_NOTICE_BYTES` sets (a value that is
    /// not a number of bytes is ignored, with a warning), else the default.
    pub fn from_env() -> Self {
        let min_bytes = match std::env::var(VARIABLE) {
            Ok(text) => text.trim().parse().unwrap_or_else(|_| {
                crate::term_eprintln!(
                    "warning: {VARIABLE}=`{text}` is not a number of bytes; using {DEFAULT_MIN_BYTES}"
                );
                DEFAULT_MIN_BYTES
            }),
            Err(_) => DEFAULT_MIN_BYTES,
        };
        Self { min_bytes }
    }

    /// Whether a compile of a component of `len` bytes is announced.
    pub fn covers(&self, len: usize) -> bool {
        u64::try_from(len).unwrap_or(u64::MAX) >= self.min_bytes
    }
}

static SINK: OnceLock<fn(&str)> = OnceLock::new();

/// Sends notices to `sink` instead of stderr (a command with a live
/// progress bar lifts it while a notice is written). The first call wins.
pub fn set_sink(sink: fn(&str)) {
    let _ = SINK.set(sink);
}

fn emit(line: &str) {
    match SINK.get() {
        Some(sink) => sink(line),
        None => crate::term_eprintln!("{line}"),
    }
}

/// Before compiling `label` (`len` bytes); `stored`: whether the compiled
/// artifact will be cached.
pub(crate) fn compiling(label: &str, len: usize, stored: bool) {
    let size = human_size(u64::try_from(len).unwrap_or(u64::MAX));
    emit(&if stored {
        format!("compiling {label} ({size}) for this machine; cached afterwards…")
    } else {
        format!(
            "compiling {label} ({size}) for this machine (the compiled cache is off, so every run compiles it)…"
        )
    });
}

/// After compiling `label`.
pub(crate) fn compiled(label: &str, took: Duration) {
    emit(&format!("compiled {label} in {:.1} s", took.as_secs_f64()));
}

/// A size in decimal units: `812 B`, `349.3 kB`, `19.3 MB`.
pub fn human_size(bytes: u64) -> String {
    // Exact below 2^53 bytes, far beyond any component.
    let value = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", value / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", value / 1e6),
        _ => format!("{:.1} GB", value / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_size(812), "812 B");
        assert_eq!(human_size(349_349), "349.3 kB");
        assert_eq!(human_size(19_312_345), "19.3 MB");
        assert_eq!(human_size(2_500_000_000), "2.5 GB");
    }

    #[test]
    fn the_threshold_covers_components_at_least_that_long() {
        let notice = CompileNotice { min_bytes: 10 };
        assert!(!notice.covers(9));
        assert!(notice.covers(10));
        assert!(CompileNotice { min_bytes: 0 }.covers(0));
    }
}
