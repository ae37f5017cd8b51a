//! Verdicts: a case's verdict from its preset expectations and its
//! assertions ([`verdicts`]), and the host-owned counts and recommendation
//! of a suite ([`tally`], the names of statuses in [`status_names`]).

pub mod status_names;
pub mod tally;
pub mod verdicts;
