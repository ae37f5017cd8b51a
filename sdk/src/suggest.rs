//! "Did you mean …?" for the field names a preset checks: the candidate
//! closest to a misspelled name, when it is close enough to be a typo.

/// The case fields the host owns on every preset's cases (taken off before
/// a preset sees a case): a misspelling of one reaches the preset.
pub const HOST_CASE_FIELDS: &[&str] = &["assertions", "trials", "tags", "skip", "only", "settings"];

/// The field `key` most likely stands for among a preset's `fields` and
/// the host's ([`HOST_CASE_FIELDS`]), unless `present` already has it.
pub fn case_field<'a>(
    key: &str,
    fields: &[&'a str],
    present: impl Fn(&str) -> bool,
) -> Option<&'a str> {
    let all: Vec<&'a str> = fields
        .iter()
        .copied()
        .chain(HOST_CASE_FIELDS.iter().copied())
        .collect();
    closest(key, &all).filter(|guess| !present(guess))
}

/// For an unknown case field `key`: the field it most likely stands for
/// ([`case_field`]) and the hint naming it, e.g. ``did you mean `input`?
/// (case fields are: caseId, input, …)``.
pub fn unknown_case_field<'a>(
    key: &str,
    fields: &[&'a str],
    present: impl Fn(&str) -> bool,
) -> Option<(&'a str, String)> {
    case_field(key, fields, present).map(|guess| {
        (
            guess,
            format!(
                "did you mean `{guess}`? (case fields are: {})",
                fields.join(", ")
            ),
        )
    })
}

/// The candidate `key` most likely stands for: the fewest single-character
/// edits (insert, delete, replace, swap two neighbours) ignoring case, `_`
/// and `-`, at most 2 (1 for names of 4 characters or fewer).
pub fn closest<'a>(key: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let plain = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let key = plain(key);
    let limit = if key.len() <= 4 { 1 } else { 2 };
    candidates
        .iter()
        .map(|c| (distance(&key, &plain(c)), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The optimal-string-alignment distance of `a` and `b`.
fn distance(a: &[char], b: &[char]) -> usize {
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_field_and_strangers_find_none() {
        let fields = ["caseId", "input", "expected", "messages", "expectedTrigger"];
        for (typo, field) in [
            ("inptu", "input"),
            ("imput", "input"),
            ("case_id", "caseId"),
            ("CaseID", "caseId"),
            ("expectd", "expected"),
            ("expectedTriger", "expectedTrigger"),
            ("mesages", "messages"),
        ] {
            assert_eq!(closest(typo, &fields), Some(field), "{typo}");
        }
        for stranger in ["prompt", "x", "", "totally-different", "ïnput✓✓✓"] {
            assert_eq!(closest(stranger, &fields), None, "{stranger}");
        }
    }
}
