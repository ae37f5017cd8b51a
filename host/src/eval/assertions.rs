//! Assertions: checks a fixture adds on top of a preset's expectations,
//! run by the host through scorer plugins after the preset's `evaluate`.
//!
//! An assertion is `{type, ...config, name?, weight?, required?, negate?}`
//! where `type` is a built-in scorer id, a path to a `.wasm` scorer
//! (relative to the case's directory or the fixture's), or one of the
//! checks the host runs itself ([`super::host_checks`]: `code-grader`,
//! `execution-metrics`). A plain string is a natural-language criterion,
//! graded by the built-in `judge` scorer with the suite's judge model
//! ([`super::judge`]). Suite-level `assertions` are
//! appended after each case's own. Each distinct (scorer, config) is checked
//! once when the fixture is validated (a bad config is a definition error
//! naming the assertion's JSON path) and then served by one session per
//! worker thread, scoring a whole batch of cases in one call. A case passes
//! when its preset expectations pass and every required assertion passes.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::EvalError;
use super::host_checks::{Checked, CodeGrader, GraderCase, Metrics};
use super::judge::{HOW_TO_CONFIGURE, JudgeModel};
use crate::plugin::bindings::preset::exports::cautilus::plugin::preset_api::{CasePlan, CaseRun};
use crate::plugin::bindings::types::{CaseView, Observation};
use crate::plugin::scorer::{negate, split_host_keys};
use crate::plugin::{
    Grants, Limits, Plugin, PluginError, Registry, Score, ScoreInput, ScorerSession, reference_in,
};

/// Scorer sessions a worker keeps between batches before it drops the ones
/// the last batch did not use.
const MAX_LIVE_SESSIONS: usize = 32;

/// Keys of an assertion the host reads; everything else is scorer config.
const ASSERTION_KEYS: &[&str] = &["type", "name", "weight", "required"];

/// A distinct assertion configuration of the suite.
pub struct ScorerSpec {
    check: Check,
    /// Flip the outcome (host checks; scorers negate in their session).
    negate: bool,
}

/// What checks an assertion.
enum Check {
    /// A scorer component, with the limits and grants of its sessions.
    Scorer {
        plugin: Arc<Plugin>,
        scorer: String,
        config: Value,
        limits: Limits,
        grants: Arc<Grants>,
    },
    CodeGrader(CodeGrader),
    Metrics(Metrics),
}

/// One assertion of one case.
#[derive(Debug, Clone)]
pub struct CaseAssertion {
    spec: usize,
    name: String,
    weight: f64,
    required: bool,
}

/// Every assertion of a suite, resolved and checked.
#[derive(Default)]
pub struct AssertionPlan {
    specs: Vec<ScorerSpec>,
    /// Per case, in order, its own assertions; the suite's follow each list.
    own: Vec<Vec<CaseAssertion>>,
    /// The suite-level assertions, after every case's own.
    shared: Vec<CaseAssertion>,
}

/// Where an assertion list came from, for error paths.
pub struct Source<'a> {
    /// `cases[3].assertions` or `assertions`.
    pub path: String,
    pub list: &'a Value,
    /// The directory relative paths resolve against.
    pub base: PathBuf,
}

impl AssertionPlan {
    /// Resolves and checks the assertions of every case. `cases[i]` holds
    /// the case's own list (if any); `suite` the suite-level list.
    pub fn build(
        registry: &Registry,
        fixture: &Path,
        cases: &[Option<Source<'_>>],
        suite: Option<Source<'_>>,
        judge: Option<&Arc<JudgeModel>>,
    ) -> Result<Self, EvalError> {
        let mut specs: Vec<ScorerSpec> = Vec::new();
        let mut keys: HashMap<(String, String, Option<PathBuf>), usize> = HashMap::new();
        let mut problems = Vec::new();
        let mut resolve = |source: &Source<'_>, problems: &mut Vec<(String, String)>| {
            let mut out = Vec::new();
            let Some(list) = source.list.as_array() else {
                problems.push((source.path.clone(), "must be a list of assertions".into()));
                return out;
            };
            for (j, raw) in list.iter().enumerate() {
                let at = format!("{}[{j}]", source.path);
                match parse(raw, &at) {
                    Err(problem) => problems.push(problem),
                    Ok((reference, config, name, weight, required)) => {
                        // One spec per resolved scorer and config, whichever
                        // directory names it; a code grader's command
                        // resolves against its directory, so that counts.
                        let resolved = reference_in(&source.base, &reference);
                        let base = (reference == CODE_GRADER).then(|| source.base.clone());
                        let key = (resolved, config.to_string(), base);
                        let spec = match keys.get(&key) {
                            Some(spec) => *spec,
                            None => {
                                match resolve_spec(registry, &source.base, &key.0, &config, judge) {
                                    Ok(spec) => {
                                        specs.push(spec);
                                        keys.insert(key, specs.len() - 1);
                                        specs.len() - 1
                                    }
                                    Err(message) => {
                                        problems.push((at, message));
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
                }
            }
            out
        };
        let shared = suite
            .map(|s| resolve(&s, &mut problems))
            .unwrap_or_default();
        let own = cases
            .iter()
            .map(|source| {
                source
                    .as_ref()
                    .map(|s| resolve(s, &mut problems))
                    .unwrap_or_default()
            })
            .collect();
        if problems.is_empty() {
            Ok(Self { specs, own, shared })
        } else {
            Err(EvalError::Cases {
                file: fixture.to_path_buf(),
                problems,
            })
        }
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty() // every assertion has a spec
    }

    /// Case `case`'s assertions, in order: its own, then the suite's.
    fn of_case(&self, case: usize) -> impl Iterator<Item = &CaseAssertion> {
        self.own[case].iter().chain(&self.shared)
    }

    /// One session slot per spec, for a worker thread.
    pub fn sessions(&self) -> Vec<Option<ScorerSession>> {
        self.specs.iter().map(|_| None).collect()
    }
}

type Parsed = (String, Value, Option<String>, f64, bool);

/// Splits an assertion into (type, scorer config, name, weight, required).
fn parse(raw: &Value, at: &str) -> Result<Parsed, (String, String)> {
    let problem = |path: String, message: String| (path, message);
    if let Value::String(criterion) = raw {
        if criterion.trim().is_empty() {
            return Err(problem(
                at.to_string(),
                "an empty criterion; write what a good answer does, or use `{type: <scorer>, ...}`"
                    .into(),
            ));
        }
        return Ok((
            JUDGE.into(),
            json!({ "criteria": criterion }),
            Some(criterion.clone()),
            1.0,
            true,
        ));
    }
    let Some(object) = raw.as_object() else {
        return Err(problem(
            at.to_string(),
            "an assertion is an object `{type: <scorer>, ...config}` or a plain-string criterion for the judge".into(),
        ));
    };
    let reference = match object.get("type") {
        Some(Value::String(t)) if !t.trim().is_empty() => t.clone(),
        _ => {
            return Err(problem(
                format!("{at}.type"),
                "is missing: name a scorer (e.g. `contains`, `regex`, `./my_scorer.wasm`)".into(),
            ));
        }
    };
    let name = match object.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(n)) => Some(n.clone()),
        Some(_) => return Err(problem(format!("{at}.name"), "must be a string".into())),
    };
    let weight = match object.get("weight") {
        None | Some(Value::Null) => 1.0,
        Some(w) => match w.as_f64().filter(|w| *w >= 0.0 && w.is_finite()) {
            Some(w) => w,
            None => {
                return Err(problem(
                    format!("{at}.weight"),
                    "must be a non-negative number".into(),
                ));
            }
        },
    };
    let required = match object.get("required") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(problem(
                format!("{at}.required"),
                "must be true or false".into(),
            ));
        }
    };
    let config: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| !ASSERTION_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok((reference, Value::Object(config), name, weight, required))
}

/// The built-in scorer that grades natural-language criteria.
const JUDGE: &str = "judge";
/// Assertion types the host runs itself.
const CODE_GRADER: &str = "code-grader";
const EXECUTION_METRICS: &str = "execution-metrics";

/// Resolves an assertion type with its config: a host check (a code
/// grader's command relative to `base`), a built-in scorer id, or a scorer
/// path (already seen from `base`, [`reference_in`]).
fn resolve_spec(
    registry: &Registry,
    base: &Path,
    reference: &str,
    config: &Value,
    judge: Option<&Arc<JudgeModel>>,
) -> Result<ScorerSpec, String> {
    if reference == CODE_GRADER || reference == EXECUTION_METRICS {
        // `negate` is the host's for every assertion type, as for scorers.
        let (config, negate) = split_host_keys(config).map_err(|(field, message)| {
            if field.is_empty() {
                message
            } else {
                format!("`{field}`: {message}")
            }
        })?;
        let check = if reference == CODE_GRADER {
            Check::CodeGrader(CodeGrader::parse(&config, base)?)
        } else {
            Check::Metrics(Metrics::parse(&config)?)
        };
        return Ok(ScorerSpec { check, negate });
    }
    let (plugin, scorer) = registry
        .resolve_scorer(reference)
        .map_err(|e| e.to_string())?;
    // A scorer that requests `model` (the built-in `judge`, or your own) is
    // granted the suite's judge model, with the judge's limits.
    let (limits, grants) = match (plugin.requested().model(), judge) {
        (false, _) => (Limits::default(), Arc::new(Grants::default())),
        (true, Some(judge)) => (
            judge.limits().clone(),
            Arc::new(Grants {
                model: Some(judge.clone()),
                ..Grants::default()
            }),
        ),
        (true, None) if reference == JUDGE => {
            return Err(format!(
                "a natural-language criterion (or `type: judge`) is graded by a judge model, and this suite has none; {HOW_TO_CONFIGURE}"
            ));
        }
        (true, None) => {
            return Err(format!(
                "scorer `{scorer}` calls a model, and this suite has none; {HOW_TO_CONFIGURE}"
            ));
        }
    };
    // Validates the config once, now: a bad one stops the run before it starts.
    ScorerSession::new(
        plugin.clone(),
        &scorer,
        config,
        limits.clone(),
        grants.clone(),
    )
    .map_err(|e| e.to_string())?;
    Ok(ScorerSpec {
        check: Check::Scorer {
            plugin,
            scorer,
            config: config.clone(),
            limits,
            grants,
        },
        negate: false,
    })
}

/// The result of one assertion on one case.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub passed: bool,
    pub score: Option<f64>,
    pub detail: Option<String>,
    pub required: bool,
    pub weight: f64,
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

/// Runs the assertions of a batch of cases (`first` = index of `plans[0]`).
/// One guest call per distinct scorer config in the batch.
pub fn run_batch(
    plan: &AssertionPlan,
    sessions: &mut [Option<ScorerSession>],
    first: usize,
    plans: &[CasePlan],
    runs: &[CaseRun],
    extras: &CaseExtras<'_>,
) -> Vec<Vec<Outcome>> {
    let mut out: Vec<Vec<Option<Outcome>>> = (0..plans.len())
        .map(|k| vec![None; plan.of_case(first + k).count()])
        .collect();
    // One input per case, shared by every scorer that looks at the case.
    let inputs: Vec<ScoreInput> = plans
        .iter()
        .zip(runs)
        .map(|(plan, run)| score_input(plan, run))
        .collect();
    // This batch's assertions by scorer config: config → [(case, j, assertion)].
    let mut groups: BTreeMap<usize, Vec<(usize, usize, &CaseAssertion)>> = BTreeMap::new();
    for k in 0..plans.len() {
        for (j, assertion) in plan.of_case(first + k).enumerate() {
            groups
                .entry(assertion.spec)
                .or_default()
                .push((k, j, assertion));
        }
    }
    for (&spec_index, users) in &groups {
        let spec = &plan.specs[spec_index];
        if !matches!(spec.check, Check::Scorer { .. }) {
            for &(k, j, assertion) in users {
                let checked = host_check(spec, &plans[k], &runs[k], &inputs[k], extras, k);
                let score = Score {
                    name: assertion.name.clone(),
                    value: checked.score,
                    passed: Some(checked.passed),
                    label: None,
                    detail: checked.detail,
                };
                let score = if spec.negate { negate(score) } else { score };
                out[k][j] = Some(outcome(assertion, Ok(score)));
            }
            continue;
        }
        // Cases that follow each other (a suite-level assertion, any
        // single case) are scored from the shared inputs as they are; only
        // scattered ones are gathered.
        let first_case = users[0].0;
        let consecutive = users.iter().enumerate().all(|(i, u)| u.0 == first_case + i);
        let gathered: Vec<ScoreInput>;
        let batch: &[ScoreInput] = if consecutive {
            &inputs[first_case..first_case + users.len()]
        } else {
            gathered = users.iter().map(|u| inputs[u.0].clone()).collect();
            &gathered
        };
        let results = match session(spec, &mut sessions[spec_index]) {
            Ok(session) => session.score_batch(batch),
            Err(error) => users
                .iter()
                .map(|_| Err(PluginError::Host(error.to_string())))
                .collect(),
        };
        for (&(k, j, assertion), result) in users.iter().zip(results) {
            out[k][j] = Some(outcome(assertion, result));
        }
    }
    // Per-case configs would otherwise keep a store each for the whole run.
    if sessions.iter().flatten().count() > MAX_LIVE_SESSIONS {
        for (spec_index, slot) in sessions.iter_mut().enumerate() {
            if !groups.contains_key(&spec_index) {
                *slot = None;
            }
        }
    }
    out.into_iter()
        .map(|list| list.into_iter().flatten().collect())
        .collect()
}

fn session<'a>(
    spec: &ScorerSpec,
    slot: &'a mut Option<ScorerSession>,
) -> Result<&'a mut ScorerSession, PluginError> {
    let Check::Scorer {
        plugin,
        scorer,
        config,
        limits,
        grants,
    } = &spec.check
    else {
        unreachable!("host checks have no session")
    };
    if slot.is_none() {
        *slot = Some(ScorerSession::new(
            plugin.clone(),
            scorer,
            config,
            limits.clone(),
            grants.clone(),
        )?);
    }
    Ok(slot.as_mut().expect("just set"))
}

/// Runs a host check (code grader, execution metrics) on case `k`.
fn host_check(
    spec: &ScorerSpec,
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
        Check::Scorer { .. } => unreachable!("scorers run in batches"),
    }
}

fn outcome(assertion: &CaseAssertion, result: Result<Score, PluginError>) -> Outcome {
    let (passed, score, detail) = match result {
        Ok(score) => match score.passed {
            Some(passed) => (passed, score.value, score.detail),
            None => (
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
        Err(error) => (false, None, Some(format!("the scorer failed: {error}"))),
    };
    Outcome::of(assertion, passed, score, detail)
}

impl Outcome {
    fn of(
        assertion: &CaseAssertion,
        passed: bool,
        score: Option<f64>,
        detail: Option<String>,
    ) -> Self {
        Self {
            name: assertion.name.clone(),
            passed,
            score,
            detail,
            required: assertion.required,
            weight: assertion.weight,
        }
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
