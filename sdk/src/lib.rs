//! # cautilus-sdk: write cautilus plugins in Rust
//!
//! A cautilus plugin is a WebAssembly component that the `cautilus` host
//! loads in a sandbox. This crate is the only dependency a plugin needs: you
//! implement a trait and call one export macro; the WIT bindings are
//! generated here and never appear in your code.
//!
//! ## A complete scorer
//!
//! ```no_run
//! use cautilus_sdk::{export_scorers, ConfigSchema, PluginError, Score, ScoreInput, Scorer};
//! use serde::Deserialize;
//!
//! /// Passes when the output mentions every required word.
//! struct MentionsAll {
//!     words: Vec<String>,
//! }
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Config {
//!     words: Vec<String>,
//! }
//!
//! impl Scorer for MentionsAll {
//!     const ID: &'static str = "mentions-all";
//!     const DESCRIPTION: &'static str = "passes when the output mentions every word in `words`";
//!     type Config = Config;
//!
//!     fn config_schema() -> ConfigSchema {
//!         ConfigSchema::object(&[("words", "array of strings to look for")], &["words"])
//!     }
//!
//!     fn new(config: Config) -> Result<Self, PluginError> {
//!         if config.words.is_empty() {
//!             return Err(PluginError::config("words", "give at least one word"));
//!         }
//!         Ok(Self { words: config.words })
//!     }
//!
//!     fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
//!         let output = input.output();
//!         let missing: Vec<&str> =
//!             self.words.iter().map(String::as_str).filter(|w| !output.contains(w)).collect();
//!         let found = self.words.len() - missing.len();
//!         let score = Score::ratio(Self::ID, found, self.words.len());
//!         Ok(if missing.is_empty() {
//!             score.passed(true)
//!         } else {
//!             score.passed(false).detail(format!(
//!                 "missing {missing:?} in output {}",
//!                 cautilus_sdk::excerpt(output, 120)
//!             ))
//!         })
//!     }
//! }
//!
//! export_scorers!(MentionsAll);
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2` and run it with
//! `cautilus score --scorer target/wasm32-wasip2/release/<crate>.wasm --output "…"`.
//! (`cautilus plugin new scorer <name>` writes this crate for you.)
//!
//! ## What a plugin can do
//!
//! Nothing ambient: no files, environment, network or subprocesses. Clocks
//! and random numbers work. Model calls ([`model`]), HTTP and processes go
//! through host imports that the host allows only when the plugin requested
//! the capability (see [`export_scorers!`]) and the user's run granted it.
//! Each call has a deadline, a memory cap and an output cap; a plugin that
//! exceeds them is stopped and reported by name.
//!
//! ## Features
//!
//! - `talc`: allocate with [talc](https://docs.rs/talc), small blocks
//!   recycled in front of it, instead of wasi-libc's dlmalloc (faster for
//!   plugins that build many small values; the built-in presets and scorers
//!   use it).
//! - `app`: [`app`], the building blocks of the built-in app/chat and
//!   app/prompt presets (case validation, observed packets, scoring), for a
//!   preset of your own on the app surface. Off by default: it brings
//!   [similar](https://docs.rs/similar) and serde_json's `preserve_order`,
//!   `raw_value` and `float_roundtrip`, which a scorer does not need.

// The generated bindings name this crate by path, also from inside it.
extern crate self as cautilus_sdk;

/// With the `talc` feature the component allocates with talc, small blocks
/// recycled in front of it ([`small_blocks`]): a plugin that builds and
/// drops many small values (JSON trees) spends far less time allocating
/// than with wasi-libc's dlmalloc. Leave it off to bring your own
/// `#[global_allocator]`.
#[cfg(all(
    feature = "talc",
    target_family = "wasm",
    not(target_feature = "atomics")
))]
#[global_allocator]
static ALLOCATOR: small_blocks::SmallBlocks<talc::wasm::WasmDynamicTalc> =
    small_blocks::SmallBlocks::new(talc::wasm::new_wasm_dynamic_allocator());

#[cfg(feature = "app")]
pub mod app;
mod bindings;
mod config;
mod json_text;
pub mod log;
pub mod model;
pub mod preset;
pub mod provider;
mod scorer;
#[cfg(any(
    test,
    all(
        feature = "talc",
        target_family = "wasm",
        not(target_feature = "atomics")
    )
))]
mod small_blocks;
pub mod suggest;
mod types;

pub use config::parse_config;
pub use scorer::{Scorer, ScorerEntry, ScorerPack};
pub use types::{
    Capability, CaseView, ConfigSchema, CostClass, FieldError, Message, Observation, PluginError,
    PluginInfo, Score, ScoreInput, ToolCall, Usage, WorkspaceTrace, excerpt,
};

pub use serde_json;

/// Compact JSON text, byte for byte what `serde_json::to_string` writes,
/// faster in a guest: for a preset that writes a packet entry itself
/// ([`preset::Preset::collect_written`]).
pub mod json {
    pub use crate::json_text::{to_text, write_str, write_value};
}

#[doc(hidden)]
pub mod __private {
    pub use crate::bindings::macro_support::*;
    pub use crate::preset::PresetExport;
    pub use crate::provider::ProviderExport;
    pub use crate::scorer::PackExport;
    pub use wit_bindgen;
}
