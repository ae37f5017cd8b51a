//! File names made from ids a user wrote (suite ids, case ids, variant and
//! cassette names): [`stem`] is the one function that turns an id into a
//! file or directory name, for every such name the host writes
//! (`baselines/<suite>.json`, `cassettes/<name>.json`, a project run's
//! `suites/<suite>/`, an experiment's `variants/<variant>/`, a case's
//! `transcripts/<case>-<n>.jsonl`, `--html <dir>/<suite>.html`).
//!
//! A name is
//! - the id itself when it is *plain*: 1 to [`PLAIN_MAX`] characters of
//!   lowercase ASCII letters, digits, `-`, `_` and `.`, not starting or
//!   ending with `.`, not a Windows device name (`con`, `nul`, `com1`, …
//!   before its first `.`), and not of the hashed shape (ending in `-` and
//!   16 lowercase hex digits). Ids written that way keep the names earlier
//!   versions gave them, so committed baselines and cassettes are found;
//! - else `<prefix>-<hash>`: the id with every other character replaced by
//!   `_`, lowercased, cut to [`PREFIX_MAX`] characters and trimmed of
//!   dots, then `-` and the first 16 hex digits of the id's sha256.
//!
//! So a name is at most 65 bytes (the extension comes on top), stays
//! inside its directory (`../x`, `a/b`, `C:\x` hold no separator or
//! parent), is lowercase (two names never differ only by case, so a
//! case-insensitive file system such as macOS's or Windows' default keeps
//! them apart), and two ids share a name only if their sha256 share 64
//! bits (a plain name never has the hashed shape, so a plain id never meets
//! a hashed one). Records whose mix-up would matter also record the id they
//! belong to and are refused when it differs (a baseline's `suiteId`).
//!
//! [`legacy`] is the name earlier versions gave (sanitized, not hashed),
//! read as a fallback where a committed file may still carry it.

use sha2::Digest;

/// The longest id kept as its own name.
pub const PLAIN_MAX: usize = 64;
/// The longest readable prefix of a hashed name.
pub const PREFIX_MAX: usize = 48;
/// Hex digits of the id's sha256 in a hashed name (64 bits).
const HASH_DIGITS: usize = 16;

/// The file or directory name of `id` (without an extension): `id` itself
/// when plain, else a sanitized prefix and a hash of it (see the module).
pub fn stem(id: &str) -> String {
    if is_plain(id) {
        return id.to_string();
    }
    let prefix: String = sanitized(id, '_')
        .to_ascii_lowercase()
        .chars()
        .take(PREFIX_MAX)
        .collect();
    let prefix = prefix.trim_matches('.');
    let prefix = if prefix.is_empty() { "id" } else { prefix };
    let hash = hex::encode(sha2::Sha256::digest(id.as_bytes()));
    format!("{prefix}-{}", &hash[..HASH_DIGITS])
}

/// Whether `id` is its own name (see the module).
pub fn is_plain(id: &str) -> bool {
    let safe = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    !id.is_empty()
        && id.len() <= PLAIN_MAX
        && id.chars().all(safe)
        && !id.starts_with('.')
        && !id.ends_with('.')
        && !hashed_shape(id)
        && !windows_device(id)
}

/// Ends in `-` and [`HASH_DIGITS`] lowercase hex digits.
fn hashed_shape(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() > HASH_DIGITS
        && bytes[bytes.len() - HASH_DIGITS - 1] == b'-'
        && bytes[bytes.len() - HASH_DIGITS..]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

/// A name Windows reserves for a device, whatever follows its first `.`.
fn windows_device(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(base, "con" | "prn" | "aux" | "nul")
        || ((base.starts_with("com") || base.starts_with("lpt"))
            && base.len() == 4
            && base.as_bytes()[3].is_ascii_digit())
}

/// The name earlier versions gave `id`: every character but ASCII letters,
/// digits, `-`, `_` and `.` replaced by `replacement`, and leading (and,
/// with `trim_end`, trailing) dots removed. Unbounded and colliding: read
/// only, as a fallback, and only where the file says whose it is.
pub fn legacy(id: &str, replacement: char, trim_end: bool) -> String {
    let safe = sanitized(id, replacement);
    let safe = safe.trim_start_matches('.');
    if trim_end {
        safe.trim_end_matches('.').to_string()
    } else {
        safe.to_string()
    }
}

/// `id` with every character but ASCII letters, digits, `-`, `_` and `.`
/// replaced by `replacement`.
pub fn sanitized(id: &str, replacement: char) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                replacement
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn only_safe_characters_are_kept() {
        assert_eq!(sanitized("../a b/c.d-e_f", '_'), ".._a_b_c.d-e_f");
        assert_eq!(sanitized("é/x", '-'), "--x");
    }

    #[test]
    fn plain_ids_keep_their_names() {
        for id in [
            "promoted",
            "cautilus-onboarding",
            "a_b",
            "v1.2",
            "x",
            "greeting-variants",
        ] {
            assert_eq!(stem(id), id);
        }
        assert_eq!(stem(&"a".repeat(PLAIN_MAX)), "a".repeat(PLAIN_MAX));
    }

    #[test]
    fn other_ids_get_a_prefix_and_a_hash() {
        let hashed = |id: &str| {
            let name = stem(id);
            assert_ne!(name, id, "{id}");
            assert!(hashed_shape(&name), "{id} -> {name}");
            name
        };
        assert!(hashed("a/b").starts_with("a_b-"));
        assert!(hashed("../x").starts_with("_x-"));
        assert!(hashed("MySuite").starts_with("mysuite-"));
        assert!(hashed(&"a".repeat(PLAIN_MAX + 1)).starts_with(&"a".repeat(PREFIX_MAX)));
        for id in [
            "",
            ".",
            "..",
            ".hidden",
            "trailing.",
            "con",
            "NUL",
            "com1.json",
            "lpt9",
            "aux.x",
            "a b",
            "é",
            "a\\b",
            "C:x",
            "x-0123456789abcdef",
        ] {
            hashed(id);
        }
        // A hashed name is itself of the hashed shape, so it is hashed again
        // when used as an id: it never names another id's file.
        let name = stem("a/b");
        assert_ne!(stem(&name), name);
        assert_eq!(stem("comx"), "comx");
        assert_eq!(stem("console"), "console");
    }

    #[test]
    fn names_are_bounded_safe_and_distinct_even_ignoring_case() {
        let mut ids: Vec<String> = vec![
            "a/b".into(),
            "a_b".into(),
            "a-b".into(),
            "A_B".into(),
            "a\\b".into(),
            "a b".into(),
            "a:b".into(),
            "Suite".into(),
            "suite".into(),
            "SUITE".into(),
            "x".repeat(300),
            "x".repeat(301),
            "y".repeat(10_000),
            "ß".into(),
            "ss".into(),
            "../../etc/passwd".into(),
            "/tmp/x".into(),
            "\u{0}".into(),
            "\u{202e}gnp.exe".into(),
        ];
        for i in 0..500 {
            ids.push(format!("case/{i}"));
            ids.push(format!("Case {i}"));
        }
        let mut seen: HashMap<String, &str> = HashMap::new();
        for id in &ids {
            let name = stem(id);
            assert!(!name.is_empty() && name.len() <= PREFIX_MAX + 1 + HASH_DIGITS);
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c)),
                "{name}"
            );
            assert!(!name.starts_with('.') && !name.ends_with('.'), "{name}");
            if let Some(other) = seen.insert(name.to_ascii_lowercase(), id) {
                panic!("`{id}` and `{other}` share {name}");
            }
        }
    }

    #[test]
    fn legacy_names_are_the_old_rules() {
        assert_eq!(legacy("a/b", '_', false), "a_b");
        assert_eq!(legacy("..x.", '-', true), "x");
        assert_eq!(legacy("..x.", '_', false), "x.");
    }
}
