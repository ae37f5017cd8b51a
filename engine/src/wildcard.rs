//! `*` patterns for ids (`--suite`, `--case`, `--variant`).

/// `*` matches any run of characters; everything else is literal.
pub fn matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_matches_any_run_of_characters() {
        assert!(matches("billing-*", "billing-refunds"));
        assert!(matches("*-refunds", "billing-refunds"));
        assert!(matches("b*r*s", "billing-refunds"));
        assert!(!matches("billing-*", "support"));
        assert!(matches("support", "support"));
        assert!(!matches("support", "support-2"));
        assert!(matches("*", "anything"));
    }
}
