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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::eval::EvalError;
use crate::eval::assert::host_checks::{CodeGrader, Metrics};
use crate::eval::assert::judge::JudgeModel;
use crate::eval::assert::judge_config::HOW_TO_CONFIGURE;
use crate::eval::assert::kinds::{CaseAssertion, Check, ScorerCheck, Spec};
pub use crate::eval::assert::outcome::Outcome;
pub use crate::eval::assert::scorer_pool::ScorerPool;
use crate::eval::assert::scorer_pool::check_new;
use crate::eval::assert::syntax::{AssertionConfig, JUDGE, Parsed, parse};
use crate::fixture::PathRoot;
use crate::plugin::scorer::split_host_keys;
use crate::plugin::{GraderSpec, Grants, Limits, Plugin, Registry};

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
    /// Set once an assertion is resolved that runs a program (a code
    /// grader) or a scorer that may wait on the network or a program.
    waits_outside: AtomicBool,
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
            waits_outside: AtomicBool::new(false),
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

    /// True when a case's assertions may wait on something outside the
    /// process: the suite has a judge model, or an assertion resolved so
    /// far runs a program (a code grader) or is a scorer that may wait on
    /// the network or a program. Complete once every case was resolved
    /// (after the checking pass).
    pub fn may_wait_outside(&self) -> bool {
        self.judge.is_some() || self.waits_outside.load(Ordering::Relaxed)
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
    pub(super) fn of_case<'a>(
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
                let grader = CodeGrader::parse(&config, base, &self.root)?;
                self.waits_outside.store(true, Ordering::Relaxed);
                Check::CodeGrader(grader)
            } else {
                Check::Metrics(Metrics::parse(&config)?)
            };
            return Ok(Spec { check, negate });
        }
        let (plugin, scorer) = self.resolve_scorer(registry, reference)?;
        if plugin.waits_on_io() {
            self.waits_outside.store(true, Ordering::Relaxed);
        }
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
}

/// Assertion types the host runs itself.
const CODE_GRADER: &str = "code-grader";
const EXECUTION_METRICS: &str = "execution-metrics";

/// The path of a list's item, `cases[3].assertions[1]`.
pub(in crate::eval) struct ItemPath<'a>(&'a str, usize);

impl std::fmt::Display for ItemPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}
