//! Assertions: checks a fixture adds on top of a preset's expectations,
//! run by the host through scorer plugins after the preset's `evaluate`.
//!
//! An assertion is `{type, ...config, name?, weight?, required?, negate?}`
//! where `type` is a built-in scorer id, a path to a `.wasm` scorer
//! (relative to the case's directory or the fixture's), or one of the
//! checks the host runs itself ([`crate::eval::assert::host_checks`]: `code-grader`,
//! `execution-metrics`). A plain string is a natural-language criterion,
//! graded by the built-in `judge` scorer with the suite's judge model
//! ([`crate::eval::assert::judge`]). Suite-level `assertions` are appended after each
//! case's own.
//!
//! Suite-level assertions are resolved once; each batch of cases resolves
//! its cases' own ([`Assertions::plan_batch`]), so nothing here grows with
//! the suite. Every distinct (scorer, config) is checked when the fixture
//! is validated (a bad config is a definition error naming the assertion's
//! JSON path). Scoring goes through a worker's [`ScorerPool`]: one instance
//! per scorer plugin, holding a prepared grader per config, and one
//! `score-batch` call per config per batch.
//!
//! A case passes when its preset expectations pass and every required
//! assertion passes. An assertion whose check could not be carried out (a
//! scorer that trapped, panicked, hit a limit or could not be
//! instantiated; a code grader that could not run) is `errored`: the answer
//! was never judged, so the case is `errored`, not failed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::eval::EvalError;
use crate::eval::assert::host_checks::{Checked, CodeGrader, GraderCase, Metrics};
use crate::eval::assert::judge::{HOW_TO_CONFIGURE, JudgeModel, Spend};
use crate::eval::assert::kinds::{CaseAssertion, Check, ScorerCheck, Spec};
pub use crate::eval::assert::outcome::Outcome;
pub use crate::eval::assert::scorer_pool::ScorerPool;
use crate::eval::assert::scorer_pool::{InstanceKey, check_new, group};
use crate::eval::assert::syntax::{AssertionConfig, JUDGE, Parsed, parse};
use crate::fixture::PathRoot;
use crate::plugin::bindings::preset_api::{CasePlan, CaseRun};
use crate::plugin::bindings::types::{CaseView, Observation};
use crate::plugin::scorer::split_host_keys;
use crate::plugin::{GraderSpec, Grants, Limits, Plugin, PluginError, Registry, ScoreInput};

/// Where an assertion list came from, for error paths.
pub struct Source<'a> {
    /// `cases[3].assertions` or `assertions`.
    pub path: String,
    pub list: &'a Value,
    /// The directory relative paths resolve against.
    pub base: PathBuf,
}

/// A scorer reference resolved to its plugin and scorer id, or why not.
type Resolved = Result<(Arc<Plugin>, String), String>;

/// Spec identity within a suite: (resolved type, config text, the
/// directory a code grader's command resolves against).
type SpecKey = (String, String, Option<PathBuf>);

/// A suite's assertions: the suite-level list, resolved once, and what
/// each batch needs to resolve its cases' own lists.
pub struct Assertions {
    shared: Vec<CaseAssertion>,
    shared_keys: foldhash::HashMap<SpecKey, Arc<Spec>>,
    judge: Option<Arc<JudgeModel>>,
    /// Grants of scorers that request nothing, and of those granted the judge.
    plain: Arc<Grants>,
    judged: Option<Arc<Grants>>,
    /// Scorer references already resolved (a `.wasm` file is read once).
    resolved: Mutex<HashMap<String, Resolved>>,
    /// The directory every path the fixture names stays inside.
    root: PathRoot,
}

/// The own assertions of one batch's cases, resolved.
#[derive(Default)]
pub struct BatchPlan {
    own: Vec<Vec<CaseAssertion>>,
}

impl BatchPlan {
    /// The plan of the cases from `at` on (this keeps the ones before).
    pub fn split_off(&mut self, at: usize) -> Self {
        Self {
            own: self.own.split_off(at),
        }
    }
}

impl Assertions {
    /// Resolves and checks the suite-level `assertions` (validating each
    /// config through `pool`).
    pub fn new(
        registry: &Registry,
        fixture: &Path,
        root: &PathRoot,
        suite: Option<Source<'_>>,
        judge: Option<Arc<JudgeModel>>,
        pool: &mut ScorerPool,
    ) -> Result<Self, EvalError> {
        let judged = judge.as_ref().map(|judge| Arc::new(judge.scorer_grants()));
        let mut assertions = Self {
            shared: Vec::new(),
            shared_keys: foldhash::HashMap::default(),
            judge,
            plain: Arc::new(Grants::default()),
            judged,
            resolved: Mutex::new(HashMap::new()),
            root: root.clone(),
        };
        if let Some(source) = suite {
            let mut keys = foldhash::HashMap::default();
            let mut problems = Vec::new();
            let mut new = Vec::new();
            let shared =
                assertions.resolve_list(registry, &source, &mut keys, &mut new, &mut problems);
            check_new(pool, &new, &mut problems);
            if !problems.is_empty() {
                return Err(EvalError::Cases {
                    file: fixture.to_path_buf(),
                    problems,
                });
            }
            assertions.shared = shared;
            assertions.shared_keys = keys;
        }
        Ok(assertions)
    }

    /// True when no case of `plan` has any assertion.
    pub fn none_in(&self, plan: &BatchPlan) -> bool {
        self.shared.is_empty() && plan.own.iter().all(Vec::is_empty)
    }

    /// Resolves the own assertions of a batch of cases (`cases[k]` is case
    /// k's list, if it has one). With `validate`, every config new to this
    /// batch is prepared once, so a bad one is reported before anything runs.
    pub fn plan_batch(
        &self,
        registry: &Registry,
        cases: &[Option<Source<'_>>],
        validate: Option<&mut ScorerPool>,
    ) -> Result<BatchPlan, Vec<(String, String)>> {
        let mut keys = self.shared_keys.clone();
        let mut problems = Vec::new();
        let mut new = Vec::new();
        let own = cases
            .iter()
            .map(|source| match source {
                Some(source) => {
                    self.resolve_list(registry, source, &mut keys, &mut new, &mut problems)
                }
                None => Vec::new(),
            })
            .collect();
        if let Some(pool) = validate {
            check_new(pool, &new, &mut problems);
        }
        if problems.is_empty() {
            Ok(BatchPlan { own })
        } else {
            Err(problems)
        }
    }

    /// Case `k`'s assertions, in order: its own, then the suite's.
    fn of_case<'a>(
        &'a self,
        plan: &'a BatchPlan,
        k: usize,
    ) -> impl Iterator<Item = &'a CaseAssertion> {
        plan.own[k].iter().chain(&self.shared)
    }

    /// Resolves one assertion list; specs it creates are added to `new`
    /// with the path of their first assertion (for checking).
    fn resolve_list<'s>(
        &self,
        registry: &Registry,
        source: &'s Source<'_>,
        keys: &mut foldhash::HashMap<SpecKey, Arc<Spec>>,
        new: &mut Vec<(Arc<Spec>, ItemPath<'s>)>,
        problems: &mut Vec<(String, String)>,
    ) -> Vec<CaseAssertion> {
        let Some(list) = source.list.as_array() else {
            problems.push((source.path.clone(), "must be a list of assertions".into()));
            return Vec::new();
        };
        let mut out = Vec::with_capacity(list.len());
        for (j, raw) in list.iter().enumerate() {
            // Spelled only for a problem or a new spec.
            let at = ItemPath(&source.path, j);
            let Parsed {
                reference,
                config,
                name,
                weight,
                required,
            } = match parse(raw, &at) {
                Ok(parsed) => parsed,
                Err(problem) => {
                    problems.push(problem);
                    continue;
                }
            };
            // One spec per resolved scorer and config, whichever directory
            // names it; a code grader's command resolves against its
            // directory, so that counts.
            let resolved = match crate::eval::cases::origins::plugin_reference(
                &self.root,
                &source.base,
                &reference,
            ) {
                Ok(resolved) => resolved,
                Err(message) => {
                    problems.push((at.to_string(), message));
                    continue;
                }
            };
            let base = (reference == CODE_GRADER).then(|| source.base.clone());
            let key = (resolved, config.text(), base);
            let spec = match keys.get(&key) {
                Some(spec) => spec.clone(),
                None => {
                    let spec = self.resolve_spec(registry, &source.base, &key.0, &config, &key.1);
                    match spec {
                        Ok(spec) => {
                            let spec = Arc::new(spec);
                            keys.insert(key, spec.clone());
                            new.push((spec.clone(), at));
                            spec
                        }
                        Err(message) => {
                            problems.push((at.to_string(), message));
                            continue;
                        }
                    }
                }
            };
            out.push(CaseAssertion {
                spec,
                name: name.unwrap_or_else(|| reference.clone()),
                weight,
                required,
            });
        }
        out
    }

    /// Resolves an assertion type with its config: a host check (a code
    /// grader's command relative to `base`), a built-in scorer id, or a
    /// scorer path (already seen from `base`, [`crate::eval::cases::origins::plugin_reference`]).
    fn resolve_spec(
        &self,
        registry: &Registry,
        base: &Path,
        reference: &str,
        config: &AssertionConfig<'_>,
        config_text: &str,
    ) -> Result<Spec, String> {
        if reference == CODE_GRADER || reference == EXECUTION_METRICS {
            // `negate` is the host's for every assertion type, as for scorers.
            let (config, negate) =
                split_host_keys(&config.value()).map_err(|(field, message)| {
                    if field.is_empty() {
                        message
                    } else {
                        format!("`{field}`: {message}")
                    }
                })?;
            let check = if reference == CODE_GRADER {
                Check::CodeGrader(CodeGrader::parse(&config, base, &self.root)?)
            } else {
                Check::Metrics(Metrics::parse(&config)?)
            };
            return Ok(Spec { check, negate });
        }
        let (plugin, scorer) = self.resolve_scorer(registry, reference)?;
        // A scorer that requests `model` (the built-in `judge`, or your own)
        // is granted the suite's judge model, with the judge's limits.
        let calls_model = plugin.requested().model();
        let (limits, grants) = match (calls_model, &self.judge, &self.judged) {
            (false, _, _) => (Limits::default(), self.plain.clone()),
            (true, Some(judge), Some(grants)) => (judge.limits().clone(), grants.clone()),
            (true, _, _) if reference == JUDGE => {
                return Err(format!(
                    "a natural-language criterion (or `type: judge`) is graded by a judge model, and this suite has none; {HOW_TO_CONFIGURE}"
                ));
            }
            (true, _, _) => {
                return Err(format!(
                    "scorer `{scorer}` calls a model, and this suite has none; {HOW_TO_CONFIGURE}"
                ));
            }
        };
        // A config without host-owned keys goes to the scorer as written.
        let grader = if config.has_host_keys() {
            GraderSpec::new(&plugin, &scorer, &config.value())
        } else {
            GraderSpec::with_text(&plugin, &scorer, config_text.to_string())
        }
        .map_err(|e| e.to_string())?;
        Ok(Spec {
            check: Check::Scorer(ScorerCheck {
                plugin,
                grader,
                limits,
                grants,
                calls_model,
            }),
            negate: false,
        })
    }

    fn resolve_scorer(
        &self,
        registry: &Registry,
        reference: &str,
    ) -> Result<(Arc<Plugin>, String), String> {
        let mut resolved = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        resolved
            .entry(reference.to_string())
            .or_insert_with(|| {
                registry
                    .resolve_scorer(reference)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

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
                        crate::eval::assert::judge::take_spend();
                        let result = instance.score(&check.grader, input);
                        (result, crate::eval::assert::judge::take_spend())
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

/// Assertion types the host runs itself.
const CODE_GRADER: &str = "code-grader";
const EXECUTION_METRICS: &str = "execution-metrics";

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

/// The path of a list's item, `cases[3].assertions[1]`.
pub(in crate::eval) struct ItemPath<'a>(&'a str, usize);

impl std::fmt::Display for ItemPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
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
