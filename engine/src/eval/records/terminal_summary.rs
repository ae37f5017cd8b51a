//! The readable summary printed after a run: one line per case (status and
//! why), then the recommendation and the counts. A case's id and summary
//! are the fixture's and the plugins' text: printed escaped
//! ([`crate::term::inline`]), so neither can act on the terminal nor start
//! a line of its own.

use std::io::Write;

use crate::eval::verdict::tally::{CaseLine, Tally};
use crate::plugin::bindings::preset_api::CaseStatus;

/// Prints the per-case lines (if the tally kept them) and the
/// recommendation of a tally.
pub fn print_summary(out: &mut (impl Write + ?Sized), tally: &Tally) -> std::io::Result<()> {
    for case in tally.cases() {
        print_case(out, case)?;
    }
    print_totals(out, tally)
}

/// One case's line: status tag, id, and why.
pub fn print_case(out: &mut (impl Write + ?Sized), case: &CaseLine) -> std::io::Result<()> {
    let tag = match case.status {
        CaseStatus::Passed => "PASS ",
        CaseStatus::Failed => "FAIL ",
        CaseStatus::Errored => "ERROR",
        CaseStatus::Blocked => "BLOCK",
        CaseStatus::Degraded => "DEGR ",
        CaseStatus::Unchecked => "UNCHK",
    };
    let id = if case.case_id.is_empty() {
        "?"
    } else {
        &case.case_id
    };
    writeln!(
        out,
        "  {tag} {} — {}",
        crate::term::inline(id),
        crate::term::inline(&case.summary)
    )
}

/// The recommendation and the counts.
pub fn print_totals(out: &mut (impl Write + ?Sized), tally: &Tally) -> std::io::Result<()> {
    writeln!(
        out,
        "recommendation: {} ({})",
        tally.recommendation(),
        counts_text(tally)
    )
}

/// The counts alone (`3 cases: 2 passed, 1 failed; 1 assertion errored`),
/// for a part of a run whose verdict is not its own (a trial of an
/// experiment).
pub fn print_counts(out: &mut (impl Write + ?Sized), tally: &Tally) -> std::io::Result<()> {
    writeln!(out, "  {}", counts_text(tally))
}

/// `N cases: …` with every count; assertions that could not be carried out
/// (an optional one included) are counted apart from the cases, so a case
/// that failed while its judge errored still shows the broken judge.
fn counts_text(tally: &Tally) -> String {
    let errored = crate::eval::verdict::verdicts::ASSERTIONS_ERRORED;
    let counts = tally.counts();
    let parts: Vec<String> = counts
        .iter()
        .filter(|(k, _)| *k != "total" && *k != errored)
        .map(|(k, v)| format!("{v} {}", crate::term::inline(k)))
        .collect();
    let assertions = match counts.get(errored).and_then(serde_json::Value::as_u64) {
        Some(1) => "; 1 assertion errored".to_string(),
        Some(n) if n > 1 => format!("; {n} assertions errored"),
        _ => String::new(),
    };
    format!("{} cases: {}{assertions}", tally.total(), parts.join(", "))
}
