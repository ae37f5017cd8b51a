//! The components compiled into the binary (the built-in pack).
//!
//! `builtins/` builds `plugins/` for `wasm32-wasip2` and embeds the bytes
//! with their sha256, so a fresh `cargo install` needs no other download
//! and no hashing at start-up. It is a crate this library does not depend
//! on: the nested build then runs while this library compiles. The binary
//! hands the table over with [`install`] before anything loads a plugin.

use std::sync::OnceLock;

/// One embedded component.
#[derive(Debug)]
pub struct BuiltinComponent {
    /// Short name, e.g. `scorers`.
    pub name: &'static str,
    pub bytes: &'static [u8],
    pub sha256: &'static str,
}

static INSTALLED: OnceLock<Vec<BuiltinComponent>> = OnceLock::new();

/// Makes `components` (name, bytes, sha256 of each: the table of the
/// `cautilus-builtins` crate) the built-in pack of this process. The first
/// call wins; later calls (a test helper called twice) change nothing.
pub fn install(components: &'static [(&'static str, &'static [u8], &'static str)]) {
    INSTALLED.get_or_init(|| {
        components
            .iter()
            .map(|&(name, bytes, sha256)| BuiltinComponent {
                name,
                bytes,
                sha256,
            })
            .collect()
    });
}

/// The built-in pack [`install`]ed in this process, if any. This crate's
/// own unit tests install the pack themselves on first use.
pub fn components() -> Option<&'static [BuiltinComponent]> {
    #[cfg(test)]
    install(cautilus_builtins::COMPONENTS);
    INSTALLED.get().map(Vec::as_slice)
}
