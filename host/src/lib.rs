//! cautilus: an evaluator for LLM applications and coding agents.
//!
//! Everything that varies between users (presets, scorers, judges, provider
//! adapters) is a WebAssembly component loaded through the WIT contract in
//! `wit/`; the host owns what must be trusted and uniform: loading, limits,
//! capability grants, scheduling, statistics and records.
//!
//! - [`plugin`]: the sandboxed component runtime (engine, cache, limits,
//!   host imports, scorer sessions, built-in pack);
//! - [`cli`]: the `cautilus` command line.

pub mod cli;
pub mod plugin;
