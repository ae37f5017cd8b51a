//! Scoring a batch of cases ([`Assertions::run_batch`]): the batch's
//! assertions grouped by config, one `score-batch` call per config several
//! cases share, one `score-each` call per scorer instance for the configs
//! one case uses (carrying only the inputs its items read, when that is a
//! small part of the batch), one call per input for a scorer that calls a
//! model, and the host's own checks run in place.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::eval::assert::assertions::{Assertions, BatchPlan};
use crate::eval::assert::host_checks::{Checked, GraderCase};
use crate::eval::assert::judge_spend::Spend;
use crate::eval::assert::kinds::{CaseAssertion, Check, ScorerCheck, Spec};
use crate::eval::assert::outcome::Outcome;
use crate::eval::assert::scorer_pool::{InstanceKey, ScorerPool, group};
use crate::plugin::bindings::preset_api::{CasePlan, CaseRun};
use crate::plugin::bindings::types::{CaseView, Observation};
use crate::plugin::{PluginError, ScoreInput};

impl Assertions {
    /// Runs the assertions of a batch of cases. One guest call per distinct
    /// scorer config in the batch.
    pub fn run_batch(
        &self,
        plan: &BatchPlan,
        pool: &mut ScorerPool,
        plans: &[CasePlan],
        runs: &[CaseRun],
        extras: &CaseExtras<'_>,
    ) -> Vec<Vec<Outcome>> {
        let mut out: Vec<Vec<Option<Outcome>>> = (0..plans.len())
            .map(|k| vec![None; self.of_case(plan, k).count()])
            .collect();
        // One input per case, shared by every scorer that looks at the case.
        let inputs: Vec<ScoreInput> = plans
            .iter()
            .zip(runs)
            .map(|(plan, run)| score_input(plan, run))
            .collect();
        // This batch's assertions by config, in order of first use.
        type Users<'a> = Vec<(usize, usize, &'a CaseAssertion)>;
        let mut groups: Vec<(&Arc<Spec>, Users<'_>)> = Vec::new();
        let mut index: foldhash::HashMap<*const Spec, usize> = foldhash::HashMap::default();
        for k in 0..plans.len() {
            for (j, assertion) in self.of_case(plan, k).enumerate() {
                let slot = *index
                    .entry(Arc::as_ptr(&assertion.spec))
                    .or_insert_with(|| {
                        groups.push((&assertion.spec, Vec::new()));
                        groups.len() - 1
                    });
                groups[slot].1.push((k, j, assertion));
            }
        }
        // Configs one case uses are scored together per instance, each with
        // its own scorer and config, keeping no grader: instance → users.
        type Single<'a> = (&'a ScorerCheck, usize, usize, &'a CaseAssertion);
        let mut singles: Vec<(InstanceKey, Vec<Single<'_>>)> = Vec::new();
        for (spec, users) in &groups {
            let Check::Scorer(check) = &spec.check else {
                for &(k, j, assertion) in users {
                    let checked = host_check(spec, &plans[k], &runs[k], &inputs[k], extras, k);
                    out[k][j] = Some(Outcome::checked(assertion, checked, spec.negate));
                }
                continue;
            };
            // A scorer that calls a model is given one call per input, each
            // with the judge's whole deadline; the others batch.
            if let [(k, j, assertion)] = users.as_slice()
                && !check.calls_model
            {
                group(
                    &mut singles,
                    check.instance_key(),
                    (check, *k, *j, *assertion),
                );
                continue;
            }
            // Cases that follow each other (a suite-level assertion) are
            // scored from the shared inputs as they are; only scattered
            // ones are gathered.
            let first_case = users[0].0;
            let consecutive = users.iter().enumerate().all(|(i, u)| u.0 == first_case + i);
            let gathered: Vec<ScoreInput>;
            let batch: &[ScoreInput] = if consecutive {
                &inputs[first_case..first_case + users.len()]
            } else {
                gathered = users.iter().map(|u| inputs[u.0].clone()).collect();
                &gathered
            };
            // A model-backed scorer's calls are counted per case.
            let results: Vec<(_, Spend)> = match pool.instance(check) {
                Ok(instance) if check.calls_model => batch
                    .iter()
                    .map(|input| {
                        crate::eval::assert::judge_spend::take_spend();
                        let result = instance.score(&check.grader, input);
                        (result, crate::eval::assert::judge_spend::take_spend())
                    })
                    .collect(),
                Ok(instance) => instance
                    .score_batch(&check.grader, batch)
                    .into_iter()
                    .map(|r| (r, Spend::default()))
                    .collect(),
                Err(error) => users
                    .iter()
                    .map(|_| (Err(PluginError::Host(error.to_string())), Spend::default()))
                    .collect(),
            };
            for (&(k, j, assertion), (result, spend)) in users.iter().zip(results) {
                out[k][j] = Some(Outcome {
                    spend,
                    ..Outcome::scored(assertion, result)
                });
            }
        }
        for (_, users) in &singles {
            let check = users[0].0;
            // The batch's inputs cross once; only the ones items read when
            // that is a small part of them.
            let (read, items) = once_items(&inputs, users.iter().map(|u| (&u.0.grader, u.1)));
            let results = match pool.instance(check) {
                Ok(instance) => instance.score_each(read.as_deref().unwrap_or(&inputs), &items),
                Err(error) => users
                    .iter()
                    .map(|_| Err(PluginError::Host(error.to_string())))
                    .collect(),
            };
            for (&(_, k, j, assertion), result) in users.iter().zip(results) {
                out[k][j] = Some(Outcome::scored(assertion, result));
            }
        }
        out.into_iter()
            .map(|list| list.into_iter().flatten().collect())
            .collect()
    }
}

/// The items of a `score-each` call (each config with the index of its
/// input) and, when the items read less than half of `inputs`, the inputs
/// they read (the indices then point into those).
fn once_items<'a, S>(
    inputs: &[ScoreInput],
    users: impl Iterator<Item = (&'a S, usize)>,
) -> (Option<Vec<ScoreInput>>, Vec<(&'a S, u32)>) {
    let users: Vec<(&S, usize)> = users.collect();
    let mut read: Vec<usize> = users.iter().map(|u| u.1).collect();
    read.sort_unstable();
    read.dedup();
    let index = |k: usize| u32::try_from(k).expect("a batch is far smaller than u32::MAX cases");
    if read.len() * 2 >= inputs.len() {
        return (
            None,
            users.into_iter().map(|(s, k)| (s, index(k))).collect(),
        );
    }
    let items = users
        .into_iter()
        .map(|(spec, k)| (spec, index(read.binary_search(&k).expect("listed above"))))
        .collect();
    (
        Some(read.iter().map(|&k| inputs[k].clone()).collect()),
        items,
    )
}

/// What the host checks see of a batch's cases besides plan and run.
pub struct CaseExtras<'a> {
    /// Each case's `metadata`, if any.
    pub metadata: Vec<Option<&'a Value>>,
    /// Each case's own workspace, if it has one.
    pub workspaces: Vec<Option<&'a Path>>,
    /// Where code graders of cases without a workspace run.
    pub default_dir: &'a Path,
}

/// Runs a host check (code grader, execution metrics) on case `k`.
fn host_check(
    spec: &Spec,
    plan: &CasePlan,
    run: &CaseRun,
    input: &ScoreInput,
    extras: &CaseExtras<'_>,
    k: usize,
) -> Checked {
    let measured = run
        .samples
        .iter()
        .find(|s| s.outcome.is_ok())
        .map(|s| s.duration_ms);
    match &spec.check {
        Check::Metrics(metrics) => metrics.check(&input.observation, measured),
        Check::CodeGrader(grader) => {
            let workspace = extras.workspaces.get(k).copied().flatten();
            let case = GraderCase {
                input: plan.input.as_deref(),
                expected: plan.expected.as_deref(),
                criteria: None,
                metadata: extras.metadata.get(k).copied().flatten(),
                observation: &input.observation,
                duration_ms: input.observation.duration_ms.or(measured),
                workspace,
            };
            grader.run(&case, workspace.unwrap_or(extras.default_dir))
        }
        Check::Scorer(_) => unreachable!("scorers run in batches"),
    }
}

/// What a scorer sees of a case: its input, the reference value its preset
/// names (what `value` falls back to), and the first sample's observation.
fn score_input(plan: &CasePlan, run: &CaseRun) -> ScoreInput {
    let observation = run
        .samples
        .iter()
        .find_map(|s| s.outcome.as_ref().ok())
        .cloned()
        .unwrap_or_else(Observation::empty);
    ScoreInput {
        subject: CaseView {
            case_id: plan.case_id.clone(),
            input: plan.input.clone(),
            expected: plan.reference.clone(),
            criteria: None,
            metadata: None,
        },
        observation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(n: usize) -> Vec<ScoreInput> {
        (0..n)
            .map(|k| ScoreInput::from_output(&format!("case-{k}"), Some(format!("out {k}"))))
            .collect()
    }

    fn case_of(inputs: &[ScoreInput], read: &Option<Vec<ScoreInput>>, index: u32) -> String {
        let from = read.as_deref().unwrap_or(inputs);
        from[index as usize].subject.case_id.clone()
    }

    #[test]
    fn items_read_the_whole_batch_when_most_cases_are_read() {
        let all = inputs(4);
        let specs = ["a", "b", "c"];
        let users = [
            (&specs[0], 0),
            (&specs[1], 0),
            (&specs[2], 2),
            (&specs[0], 3),
        ];
        let (read, items) = once_items(&all, users.into_iter());
        assert!(read.is_none(), "3 of 4 inputs read: they cross as they are");
        let seen: Vec<_> = items
            .iter()
            .map(|(s, i)| (**s, case_of(&all, &read, *i)))
            .collect();
        assert_eq!(
            seen,
            [
                ("a", "case-0"),
                ("b", "case-0"),
                ("c", "case-2"),
                ("a", "case-3")
            ]
            .map(|(s, c)| (s, c.to_string()))
        );
    }

    #[test]
    fn items_reading_few_cases_carry_only_those_inputs() {
        let all = inputs(10);
        let specs = ["a", "b"];
        let users = [(&specs[0], 7), (&specs[1], 2), (&specs[0], 7)];
        let (read, items) = once_items(&all, users.into_iter());
        assert_eq!(read.as_ref().map(Vec::len), Some(2));
        let seen: Vec<_> = items
            .iter()
            .map(|(s, i)| (**s, case_of(&all, &read, *i)))
            .collect();
        assert_eq!(
            seen,
            [("a", "case-7"), ("b", "case-2"), ("a", "case-7")].map(|(s, c)| (s, c.to_string()))
        );
    }
}
