//! The readable summary printed after a run: one line per case (status and
//! why), then the recommendation and the counts. A case's id and summary
//! are the fixture's and the plugins' text: printed escaped
//! ([`crate::term::inline`]), so neither can act on the terminal nor start
//! a line of its own.

use std::io::Write;

use super::tally::{CaseLine, Tally};
use crate::plugin::bindings::preset::exports::cautilus::plugin::preset_api::CaseStatus;

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
    let counts = tally.counts();
    let parts: Vec<String> = counts
        .iter()
        .filter(|(k, _)| *k != "total")
        .map(|(k, v)| format!("{v} {}", crate::term::inline(k)))
        .collect();
    writeln!(
        out,
        "recommendation: {} ({} cases: {})",
        tally.recommendation(),
        tally.total(),
        parts.join(", ")
    )
}
