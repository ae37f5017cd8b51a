//! The `log` capability: every plugin has it, bounded in total bytes per
//! store; lines are echoed to stderr (escaped) at `CAUTILUS_PLUGIN_LOG`'s
//! level. The [`LogSink`] is both the policy (the budget) and the lines.

use std::sync::Arc;

use crate::plugin::bindings::types::LogLevel;

/// Log lines a plugin sent, bounded in total bytes per store.
pub struct LogSink {
    plugin: Arc<str>,
    remaining: usize,
    truncated: bool,
    pub(crate) lines: Vec<(LogLevel, String)>,
    echo_level: Option<LogLevel>,
}

impl LogSink {
    pub fn new(plugin: Arc<str>, budget: usize) -> Self {
        Self {
            plugin,
            remaining: budget,
            truncated: false,
            lines: Vec::new(),
            echo_level: echo_level_from_env(),
        }
    }

    pub(crate) fn push(&mut self, level: LogLevel, message: String) {
        // Every line costs at least a small fixed amount, so empty lines cannot grow memory forever.
        const LINE_COST: usize = 64;
        if self.remaining < LINE_COST {
            self.remaining = 0;
        } else {
            self.remaining -= LINE_COST;
        }
        if self.remaining == 0 {
            if !self.truncated {
                self.truncated = true;
                self.lines.push((
                    LogLevel::Warn,
                    "log output limit reached; further lines dropped".into(),
                ));
            }
            return;
        }
        let mut message = message;
        if message.len() > self.remaining {
            let mut cut = self.remaining;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        self.remaining -= message.len();
        if let Some(min) = self.echo_level
            && level_rank(level) >= level_rank(min)
        {
            // A plugin's text: escaped (and scrubbed of secrets) for the terminal.
            eprintln!(
                "[{} {}] {}",
                crate::term::inline(&self.plugin),
                level_name(level),
                crate::term::inline(&message)
            );
        }
        self.lines.push((level, message));
    }
}

fn level_rank(level: LogLevel) -> u8 {
    match level {
        LogLevel::Trace => 0,
        LogLevel::Debug => 1,
        LogLevel::Info => 2,
        LogLevel::Warn => 3,
        LogLevel::Error => 4,
    }
}

fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Trace => "trace",
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
    }
}

/// `CAUTILUS_PLUGIN_LOG=debug` echoes plugin log lines at or above that
/// level to stderr. Read once per process: stores are created on hot paths.
fn echo_level_from_env() -> Option<LogLevel> {
    static LEVEL: std::sync::OnceLock<Option<LogLevel>> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(
        || match std::env::var("CAUTILUS_PLUGIN_LOG").ok()?.as_str() {
            "trace" => Some(LogLevel::Trace),
            "debug" => Some(LogLevel::Debug),
            "info" => Some(LogLevel::Info),
            "warn" => Some(LogLevel::Warn),
            "error" => Some(LogLevel::Error),
            _ => None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_log_lines_still_cost_budget() {
        let mut sink = LogSink::new("p".into(), 1000);
        sink.echo_level = None;
        for _ in 0..10_000 {
            sink.push(LogLevel::Info, String::new());
        }
        assert!(
            sink.lines.len() <= 1000 / 64 + 1,
            "{} lines kept",
            sink.lines.len()
        );
    }

    #[test]
    fn log_sink_enforces_its_budget() {
        // Two lines' fixed cost (64 bytes each) plus 10 bytes of text.
        let mut sink = LogSink::new("p".into(), 138);
        sink.echo_level = None;
        sink.push(LogLevel::Info, "12345".into());
        sink.push(LogLevel::Info, "67890abc".into());
        sink.push(LogLevel::Info, "more".into());
        sink.push(LogLevel::Info, "more".into());
        let texts: Vec<&str> = sink.lines.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            texts,
            [
                "12345",
                "67890",
                "log output limit reached; further lines dropped"
            ]
        );
    }
}
