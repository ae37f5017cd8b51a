//! The result of one assertion on one case, from a scorer's score or a
//! host check's conclusion: passed, failed, or errored (the check could not
//! be carried out).

use crate::eval::assert::host_checks::Checked;
use crate::eval::assert::kinds::CaseAssertion;
use crate::plugin::scorer::{UNCAPTURED, negate};
use crate::plugin::{PluginError, Score};

/// The result of one assertion on one case.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub passed: bool,
    /// The check could not be carried out; `passed` is false and the case
    /// is `errored`.
    pub errored: bool,
    /// The check needs a signal the provider did not capture; `passed` is
    /// false (an unmeasured check is a failure, never a pass).
    pub uncaptured: bool,
    pub score: Option<f64>,
    /// The scorer's label (a judge's chosen class), when it gives one.
    pub label: Option<String>,
    pub detail: Option<String>,
    pub required: bool,
    pub weight: f64,
    /// What its judge calls cost (a model-backed scorer).
    pub spend: crate::eval::assert::judge_spend::Spend,
}

impl Outcome {
    /// `passed`, `failed`, `errored` or `uncaptured`.
    pub fn status(&self) -> &'static str {
        match (self.errored, self.passed) {
            (true, _) => "errored",
            (false, true) => "passed",
            (false, false) if self.uncaptured => "uncaptured",
            (false, false) => "failed",
        }
    }

    fn of(
        assertion: &CaseAssertion,
        passed: bool,
        errored: bool,
        score: Option<f64>,
        detail: Option<String>,
    ) -> Self {
        Self {
            name: assertion.name.clone(),
            passed: passed && !errored,
            errored,
            uncaptured: false,
            score,
            label: None,
            detail,
            required: assertion.required,
            weight: assertion.weight,
            spend: Default::default(),
        }
    }

    /// What a scorer answered, or why it could not.
    pub(in crate::eval) fn scored(
        assertion: &CaseAssertion,
        result: Result<Score, PluginError>,
    ) -> Self {
        match result {
            Ok(score) => match score.passed {
                Some(passed) => Self {
                    uncaptured: !passed && score.label.as_deref() == Some(UNCAPTURED),
                    label: score.label.filter(|l| l != UNCAPTURED),
                    ..Self::of(assertion, passed, false, score.value, score.detail)
                },
                None => Self::of(
                    assertion,
                    false,
                    false,
                    score.value,
                    Some(format!(
                        "not applicable: {}",
                        score
                            .detail
                            .unwrap_or_else(|| "the scorer gave no verdict".into())
                    )),
                ),
            },
            Err(error) => Self::of(
                assertion,
                false,
                true,
                None,
                Some(format!("the scorer could not check the answer: {error}")),
            ),
        }
    }

    /// What a host check concluded (negated on request; an errored check
    /// stays errored).
    pub(in crate::eval) fn checked(
        assertion: &CaseAssertion,
        checked: Checked,
        negated: bool,
    ) -> Self {
        if checked.errored {
            return Self::of(assertion, false, true, None, checked.detail);
        }
        let score = Score {
            name: assertion.name.clone(),
            value: checked.score,
            passed: Some(checked.passed),
            label: checked.uncaptured.then(|| UNCAPTURED.to_string()),
            detail: checked.detail,
        };
        let score = if negated { negate(score) } else { score };
        Self::scored(assertion, Ok(score))
    }
}
