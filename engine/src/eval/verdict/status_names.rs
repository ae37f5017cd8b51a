//! The names of a case's status and recommendation in packets, journals
//! and on the terminal, both ways: the vocabulary every stage shares, in a
//! leaf module so the stages that write verdicts and those that count them
//! need not import each other.

use crate::plugin::bindings::preset_api::{CaseStatus, Recommendation};

/// The name of a status in packets and on the terminal.
pub fn status_name(status: CaseStatus) -> &'static str {
    match status {
        CaseStatus::Passed => "passed",
        CaseStatus::Failed => "failed",
        CaseStatus::Errored => "errored",
        CaseStatus::Blocked => "blocked",
        CaseStatus::Degraded => "degraded",
        CaseStatus::Unchecked => "unchecked",
    }
}

pub fn recommendation_name(recommendation: Recommendation) -> &'static str {
    match recommendation {
        Recommendation::AcceptNow => "accept-now",
        Recommendation::Defer => "defer",
        Recommendation::Reject => "reject",
    }
}

/// The status named `name` (the inverse of [`status_name`]).
pub fn status_from_name(name: &str) -> Option<CaseStatus> {
    [
        CaseStatus::Passed,
        CaseStatus::Failed,
        CaseStatus::Errored,
        CaseStatus::Blocked,
        CaseStatus::Degraded,
        CaseStatus::Unchecked,
    ]
    .into_iter()
    .find(|s| status_name(*s) == name)
}

/// The recommendation named `name` (the inverse of [`recommendation_name`]).
pub fn recommendation_from_name(name: &str) -> Option<Recommendation> {
    [
        Recommendation::AcceptNow,
        Recommendation::Defer,
        Recommendation::Reject,
    ]
    .into_iter()
    .find(|r| recommendation_name(*r) == name)
}
