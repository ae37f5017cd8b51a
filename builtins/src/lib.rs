//! The built-in plugin pack, compiled into the `cautilus` binary.
//!
//! `build.rs` builds `plugins/` for `wasm32-wasip2` and generates the
//! table below with each component's bytes and sha256. Only the binary
//! (and the tests) depend on this crate; it hands the table to the library
//! with `cautilus::plugin::builtin::install`, so the library compiles while
//! the components are being built.

/// One embedded component: its short name (e.g. `scorers`), its bytes (a
/// `wasm32-wasip2` component) and their sha256 in lower-case hex.
pub type Component = (&'static str, &'static [u8], &'static str);

include!(concat!(env!("OUT_DIR"), "/builtin_components.rs"));
