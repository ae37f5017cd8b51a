//! Typed errors of the plugin runtime.
//!
//! Every error names the plugin it concerns and says what to do. Errors are
//! split into *definition* errors (the plugin or its configuration is wrong:
//! nothing can run) and *runtime* errors (one call failed: the host discards
//! the store and the next call starts clean).

use std::path::PathBuf;

use super::PluginKind;

/// An error from loading or calling a plugin.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error(
        "no built-in plugin `{reference}` and no file at that path; run `cautilus plugin list` to see the built-in ids, or pass a path to a .wasm component"
    )]
    NotFound { reference: String },

    #[error(
        "the built-in plugin pack is not installed in this process: a program built on the cautilus library calls `cautilus::plugin::builtin::install(cautilus_builtins::COMPONENTS)` before it loads plugins"
    )]
    BuiltinsNotInstalled,

    #[error("cannot read plugin `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("plugin `{plugin}` is not a valid WebAssembly component: {message}")]
    Compile { plugin: String, message: String },

    #[error(
        "plugin `{plugin}` exports no cautilus world (found exports: {found}); build it with cautilus-sdk, which exports the `scorer`, `preset` or `provider` world of cautilus:plugin@{expected_version}"
    )]
    NotAPlugin {
        plugin: String,
        found: String,
        expected_version: &'static str,
    },

    #[error(
        "plugin `{plugin}` was built against WIT cautilus:plugin@{found}, but this host implements cautilus:plugin@{expected}; {advice}"
    )]
    WitVersion {
        plugin: String,
        found: String,
        expected: &'static str,
        /// What to do: upgrade cautilus (a newer patch) or rebuild it.
        advice: String,
    },

    #[error(
        "plugin `{plugin}` implements the `{found}` world, but a `{expected}` plugin is needed here"
    )]
    WrongWorld {
        plugin: String,
        found: PluginKind,
        expected: PluginKind,
    },

    #[error(
        "plugin `{plugin}` needs imports this host does not provide ({message}); plugins may import only WASI 0.2 and the cautilus:plugin host interfaces of their world"
    )]
    Link { plugin: String, message: String },

    #[error("preset plugin `{plugin}` declares {message}; the host refuses it")]
    OutsideTaxonomy { plugin: String, message: String },

    #[error("preset plugin `{plugin}`'s suite contract {message}; the host refuses it")]
    BadContract { plugin: String, message: String },

    #[error("provider plugin `{plugin}`'s declared needs {message}; the host refuses it")]
    BadNeeds { plugin: String, message: String },

    #[error(
        "provider plugin `{plugin}`: {message}; the host refuses it (rebuild it against this cautilus's SDK)"
    )]
    BadEmbed { plugin: String, message: String },

    #[error("plugin `{plugin}` has no scorer `{scorer}`; it provides: {available}")]
    UnknownScorer {
        plugin: String,
        scorer: String,
        available: String,
    },

    #[error("plugin `{plugin}`: invalid config{}: {message}", field_suffix(field))]
    InvalidConfig {
        plugin: String,
        field: String,
        message: String,
    },

    #[error("plugin `{plugin}`: invalid input: {}", format_field_errors(errors))]
    InvalidInput {
        plugin: String,
        errors: Vec<(String, String)>,
    },

    #[error("plugin `{plugin}` reported an error: {message}")]
    Guest { plugin: String, message: String },

    #[error(
        "plugin `{plugin}` exceeded its deadline of {limit_ms} ms and was stopped; raise it with --timeout-ms if the work is legitimately slow"
    )]
    Deadline { plugin: String, limit_ms: u64 },

    #[error(
        "plugin `{plugin}` exceeded its memory limit of {} MiB and was stopped; raise it with --memory-mib if the work legitimately needs more", limit_bytes / (1024 * 1024)
    )]
    MemoryLimit { plugin: String, limit_bytes: usize },

    #[error("plugin `{plugin}` used up its fuel budget of {fuel} units and was stopped")]
    FuelExhausted { plugin: String, fuel: u64 },

    #[error("plugin `{plugin}` returned {bytes} bytes of output, over the limit of {limit} bytes")]
    OutputTooLarge {
        plugin: String,
        bytes: usize,
        limit: usize,
    },

    #[error("plugin `{plugin}` panicked: {message}")]
    Panic { plugin: String, message: String },

    #[error("plugin `{plugin}` trapped: {message}")]
    Trap { plugin: String, message: String },

    #[error("plugin runtime: {0}")]
    Host(String),

    /// A pack's component is not what its manifest or the lock says, or
    /// the pack cannot be found.
    #[error(transparent)]
    Pack(#[from] crate::pack::PackError),
}

impl PluginError {
    /// True when the plugin or its configuration is unusable as written, so
    /// nothing can run (CLI exit code 2). False for failures of one call.
    pub fn is_definition_error(&self) -> bool {
        matches!(
            self,
            Self::NotFound { .. }
                | Self::Read { .. }
                | Self::Compile { .. }
                | Self::NotAPlugin { .. }
                | Self::WitVersion { .. }
                | Self::WrongWorld { .. }
                | Self::Link { .. }
                | Self::UnknownScorer { .. }
                | Self::OutsideTaxonomy { .. }
                | Self::BadContract { .. }
                | Self::BadNeeds { .. }
                | Self::BadEmbed { .. }
                | Self::InvalidConfig { .. }
                | Self::Pack(_)
        )
    }

    /// True when the store that produced this error must be discarded.
    pub fn poisons_store(&self) -> bool {
        matches!(
            self,
            Self::Deadline { .. }
                | Self::MemoryLimit { .. }
                | Self::FuelExhausted { .. }
                | Self::Panic { .. }
                | Self::Trap { .. }
                | Self::OutputTooLarge { .. }
                | Self::Host(_)
        )
    }
}

fn field_suffix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!(" at `{field}`")
    }
}

fn format_field_errors(errors: &[(String, String)]) -> String {
    errors
        .iter()
        .map(|(path, message)| {
            if path.is_empty() {
                message.clone()
            } else {
                format!("{path}: {message}")
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Extracts the panic message a Rust guest printed to stderr before it aborted.
///
/// Rust's default hook prints `thread '…' panicked at FILE:LINE:COL:\nMESSAGE\nnote: …`.
pub(crate) fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at ")?;
    let after = &stderr[start..];
    let mut lines = after.lines();
    let location_line = lines.next()?;
    let location = location_line
        .trim_start_matches("panicked at ")
        .trim_end_matches(':');
    let message: Vec<&str> = lines
        .take_while(|line| !line.starts_with("note: "))
        .collect();
    let message = message.join("\n");
    let message = message.trim();
    Some(if message.is_empty() {
        format!("at {location}")
    } else {
        format!("{message} (at {location})")
    })
}

/// A guest-reported error as the host's typed error, naming the plugin.
pub(crate) fn guest_error(
    plugin: &str,
    error: crate::plugin::bindings::types::PluginError,
) -> PluginError {
    let plugin = plugin.to_string();
    match error {
        crate::plugin::bindings::types::PluginError::InvalidConfig(field) => {
            PluginError::InvalidConfig {
                plugin,
                field: field.path,
                message: field.message,
            }
        }
        crate::plugin::bindings::types::PluginError::InvalidInput(fields) => {
            PluginError::InvalidInput {
                plugin,
                errors: fields.into_iter().map(|f| (f.path, f.message)).collect(),
            }
        }
        crate::plugin::bindings::types::PluginError::Failed(message) => {
            PluginError::Guest { plugin, message }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_message_is_extracted_from_rust_stderr() {
        let stderr = "thread '<unnamed>' panicked at src/lib.rs:12:9:\nboom: the needle was 42\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            panic_message(stderr).unwrap(),
            "boom: the needle was 42 (at src/lib.rs:12:9)"
        );
    }

    #[test]
    fn panic_message_absent_without_panic() {
        assert!(panic_message("memory allocation of 10 bytes failed").is_none());
    }

    #[test]
    fn definition_errors_are_classified() {
        let config = PluginError::InvalidConfig {
            plugin: "regex".into(),
            field: "value".into(),
            message: "unclosed group".into(),
        };
        assert!(config.is_definition_error());
        assert!(!config.poisons_store());
        assert_eq!(
            config.to_string(),
            "plugin `regex`: invalid config at `value`: unclosed group"
        );
        let deadline = PluginError::Deadline {
            plugin: "spin".into(),
            limit_ms: 200,
        };
        assert!(!deadline.is_definition_error());
        assert!(deadline.poisons_store());
    }
}
