//! The components compiled into this binary (the built-in pack).
//!
//! `host/build.rs` builds `plugins/` for `wasm32-wasip2` and generates the
//! table below with each component's bytes and sha256, so a fresh
//! `cargo install` needs no other download and no hashing at start-up.

/// One embedded component.
#[derive(Debug)]
pub struct BuiltinComponent {
    /// Short name, e.g. `scorers`.
    pub name: &'static str,
    pub bytes: &'static [u8],
    pub sha256: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtin_components.rs"));
