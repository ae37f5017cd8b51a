//! The kinds of assertion a suite holds, as the runner ([`crate::eval::assert::assertions`]),
//! the scorer pool ([`crate::eval::assert::scorer_pool`]) and an assertion's result
//! ([`crate::eval::assert::outcome`]) share them: a leaf below all three.

use std::sync::Arc;

use crate::eval::assert::host_checks::{CodeGrader, Metrics};
use crate::plugin::{GraderSpec, Grants, Limits, Plugin};

/// One distinct assertion configuration.
pub struct Spec {
    pub(crate) check: Check,
    /// Flip the outcome (host checks; scorers negate in their grader spec).
    pub(crate) negate: bool,
}

/// What checks an assertion.
pub(crate) enum Check {
    Scorer(ScorerCheck),
    CodeGrader(CodeGrader),
    Metrics(Metrics),
}

/// A scorer component with one config, and the limits and grants of the
/// instance that serves it.
pub(crate) struct ScorerCheck {
    pub(crate) plugin: Arc<Plugin>,
    pub(crate) grader: GraderSpec,
    pub(crate) limits: Limits,
    pub(crate) grants: Arc<Grants>,
    /// The plugin requested `model` (a judge): it is given one call per
    /// input, each with the judge's whole deadline.
    pub(crate) calls_model: bool,
}

/// One assertion of one case.
#[derive(Clone)]
pub(crate) struct CaseAssertion {
    pub(crate) spec: Arc<Spec>,
    pub(crate) name: String,
    pub(crate) weight: f64,
    pub(crate) required: bool,
}
