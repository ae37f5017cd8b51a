//! File names made from ids a user wrote (suite ids, case ids, cassette
//! names): only ASCII letters, digits, `-`, `_` and `.` are kept, so an id
//! such as `../x` or `a/b` never names a path outside its directory.

use sha2::Digest;

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

/// A name no other id shares: `id` sanitized (`_` for anything else), cut
/// to 80 characters, without leading or trailing dots, then `-` and the
/// first 8 hex digits of the id's sha256 (two ids that sanitize alike
/// still differ).
pub fn tagged(id: &str) -> String {
    let safe: String = sanitized(id, '_').chars().take(80).collect();
    let tag = &hex::encode(sha2::Sha256::digest(id.as_bytes()))[..8];
    format!("{}-{tag}", safe.trim_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_characters_are_kept() {
        assert_eq!(sanitized("../a b/c.d-e_f", '_'), ".._a_b_c.d-e_f");
        assert_eq!(sanitized("é/x", '-'), "--x");
    }

    #[test]
    fn tagged_names_stay_short_and_distinct() {
        assert_ne!(tagged("a/b"), tagged("a_b"));
        assert!(tagged("a/b").starts_with("a_b-"));
        assert!(tagged("../x").starts_with("_x-"));
        let long = tagged(&"x".repeat(500));
        assert_eq!(long.len(), 80 + 1 + 8);
    }
}
