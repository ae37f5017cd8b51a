//! The checking pass of a suite: every case is read once, in batches, and
//! checked before anything runs — its origin and golden file, its
//! assertions (each new config prepared by its scorer), the preset's
//! `translate`, and unique case ids. It yields what the run needs (the
//! preset, the resolved suite-level assertions, the case count and a
//! fingerprint of everything checked) and can write `eval-cases.json` as it
//! goes. Nothing of the suite is kept but a hash per case id.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::eval::EvalError;
use crate::eval::assert::assertions::{Assertions, ScorerPool, Source};
use crate::eval::assert::judge::JudgeModel;
use crate::eval::assert::judge_config::JudgeConfig;
use crate::eval::cases::origins;
use crate::eval::files::PacketWriter;
use crate::eval::options::{SuiteOptions, local_batch_size, workers};
use crate::eval::run::batch::{Batch, Preparer, RawBatch};
use crate::eval::run::case_ids::CaseIds;
use crate::eval::run::preset_sessions::PresetSessions;
use crate::eval::run::spilled_plans::{PlanSpill, SpilledPlans};
use crate::eval::run::workers::{never, run_ordered};
use crate::fixture::{CaseStream, Suite};
use crate::plugin::bindings::preset_api::CasePlan;
use crate::plugin::preset::PresetSession;
use crate::plugin::{Plugin, PluginError, Registry};

/// Problems kept for the message; the rest are counted.
const KEPT_PROBLEMS: usize = 1000;

/// What the checking pass may keep of the batches it prepared, so the run
/// pass need not read, prepare and translate them again (estimated bytes).
/// A suite past it is read and prepared again, with the preset's plans set
/// aside on disk ([`SpilledPlans`]): memory stays bounded whatever its size,
/// and no case is translated twice.
pub const KEEP_BUDGET: usize = 32 * 1024 * 1024;

/// What the checking pass hands the run pass, so it translates nothing
/// again.
pub enum Kept {
    /// Every batch as checked, in order (the suite fit [`KEEP_BUDGET`]).
    Batches(Vec<Checked>),
    /// The preset's plans of every case, in order, set aside on disk.
    Plans(SpilledPlans),
}

/// A batch as the checking pass prepared it, with the preset's plans.
pub struct Checked {
    pub batch: Batch,
    pub plans: Vec<CasePlan>,
}

impl Checked {
    /// Splits the batch into batches of at most `size` cases (the checking
    /// pass may batch differently from the run).
    pub fn split(mut self, size: usize) -> Vec<Self> {
        let size = size.max(1);
        let mut parts = Vec::with_capacity(self.plans.len().div_ceil(size));
        while self.plans.len() > size {
            let rest = Self {
                batch: self.batch.split_off(size),
                plans: self.plans.split_off(size),
            };
            parts.push(std::mem::replace(&mut self, rest));
        }
        parts.push(self);
        parts
    }

    /// About what the batch holds in memory.
    fn weight(&self) -> usize {
        let texts: usize = self.batch.texts.iter().map(String::len).sum();
        let plans: usize = self
            .plans
            .iter()
            .map(|p| {
                p.body.len()
                    + p.input.as_ref().map_or(0, String::len)
                    + p.expected.as_ref().map_or(0, String::len)
                    + p.reference.as_ref().map_or(0, String::len)
                    + p.messages.iter().map(|m| m.content.len()).sum::<usize>()
            })
            .sum();
        let assertions: usize = self
            .batch
            .assertion_texts
            .iter()
            .flatten()
            .map(String::len)
            .sum();
        // Values, maps and specs cost more than their text.
        2 * (texts + plans + assertions) + 512 * self.plans.len()
    }
}

/// A suite that passed every offline check.
pub struct Validated {
    pub suite: Suite,
    pub preset: Arc<Plugin>,
    /// The suite-level assertions, resolved and checked.
    pub assertions: Assertions,
    /// The suite fields the preset sees (JSON text).
    pub suite_json: String,
    pub case_count: usize,
    /// sha256 of the suite fields and every case as checked.
    pub fingerprint: String,
    /// What the run pass can take over instead of translating again, when
    /// keeping was asked for.
    pub kept: Option<Kept>,
    /// The case ids (hashed), to check a resumed run's journal against;
    /// taken (and dropped) once it is.
    pub case_ids: Option<CaseIds>,
    /// The checking pass's preset sessions, for the run pass.
    pub sessions: PresetSessions,
}

/// Suite fields the host consumes; the preset never sees them.
const HOST_SUITE_KEYS: &[&str] = &[
    "assertions",
    "judge",
    "replay",
    "agent",
    "trials",
    "variants",
    "baseline",
    "gates",
    "fixtureResults",
    "tags",
];

/// Checks a loaded suite (see the module docs), writing each case's
/// normalized body to `cases_out` when given. With `keep` (a directory of
/// the run), the prepared batches are kept for the run while they fit
/// [`KEEP_BUDGET`], and past it the preset's plans are set aside in a file
/// there.
pub fn validate_suite(
    registry: &Registry,
    mut suite: Suite,
    jobs: usize,
    options: &SuiteOptions,
    mut cases_out: Option<&mut PacketWriter>,
    keep: Option<&Path>,
) -> Result<Validated, EvalError> {
    for warning in &suite.warnings {
        eprintln!("warning: {}", crate::term::shown(warning));
    }
    let preset = preset_applied(registry, &mut suite)?;
    let contract = &crate::eval::run::packets::preset_description(&preset).contract;
    let fixture = suite.file.as_path();
    let judge = judge(registry, &suite, options)?;
    // A provider component the fixture names by path stays inside its root
    // (checked here so `eval validate` says so; `eval test` resolves it
    // again when it sets the provider up).
    if let Some(reference) = suite.body.get("provider").and_then(Value::as_str) {
        let base = fixture.parent().unwrap_or(Path::new(""));
        crate::eval::cases::origins::plugin_reference(&suite.root, base, reference).map_err(
            |message| EvalError::Cases {
                file: suite.file.clone(),
                problems: vec![("provider".into(), message)],
            },
        )?;
    }
    let shared = suite.body.get("assertions").map(|list| Source {
        path: "assertions".into(),
        list,
        base: fixture.parent().unwrap_or(Path::new("")).to_path_buf(),
    });
    let assertions = Assertions::new(
        registry,
        fixture,
        &suite.root,
        shared,
        judge,
        &mut ScorerPool::new(),
    )?;
    let suite_only: Map<String, Value> = suite
        .body
        .iter()
        .filter(|(key, _)| !HOST_SUITE_KEYS.contains(&key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let suite_json = Value::Object(suite_only).to_string();
    let preparer = Preparer {
        registry,
        fixture,
        assertions: &assertions,
        contract,
        update_snapshots: options.update_snapshots,
        root: &suite.root,
        run_root: options.run_root.as_deref(),
    };
    let mut fingerprint = Sha256::new();
    fingerprint.update(serde_json::to_string(&suite.body).expect("a JSON map serializes"));
    let mut ids = CaseIds::default();
    let mut problems: Vec<(String, String)> = Vec::new();
    let mut unlisted = 0usize;
    let mut count = 0usize;
    let mut kept = keep.map(|dir| Keeping::Batches(dir, Vec::new(), 0));
    let sessions = PresetSessions::new(preset.clone());
    // Checking waits on nothing outside the process (see `local_batch_size`).
    let size = suite
        .cases
        .len_hint()
        .map_or(64, |n| local_batch_size(n, jobs));
    let workers = suite
        .cases
        .len_hint()
        .map_or(jobs, |n| workers(n, size, jobs));
    run_ordered(
        case_batches(suite.cases.open(), size),
        workers,
        never(),
        || -> Result<_, EvalError> { Ok((sessions.lend()?, ScorerPool::new())) },
        |(session, pool), raw, _| {
            let batch = match preparer.prepare(raw, Some(pool)) {
                Ok(batch) => batch,
                Err(problems) => return Ok(Err(problems)),
            };
            Ok(translate(session, &suite_json, &batch)?.map(|plans| (batch, plans)))
        },
        |checked| {
            let (batch, plans) = match checked {
                Err(found) => {
                    let room = KEPT_PROBLEMS.saturating_sub(problems.len());
                    unlisted += found.len().saturating_sub(room);
                    problems.extend(found.into_iter().take(room));
                    return Ok(());
                }
                Ok(checked) => checked,
            };
            for ((plan, &i), assertions) in
                plans.iter().zip(&batch.indices).zip(&batch.assertion_texts)
            {
                count += 1;
                let duplicate = ids.insert(&plan.case_id, i).map_err(|_| EvalError::Input {
                    path: suite.file.clone(),
                    message: format!(
                        "cases[{i}]: a suite holds at most {} cases; split it into several fixtures",
                        u64::from(u32::MAX) + 1
                    ),
                })?;
                if let Some(first) = duplicate {
                    if problems.len() >= KEPT_PROBLEMS {
                        unlisted += 1;
                        continue;
                    }
                    problems.push((
                        format!("cases[{i}].caseId"),
                        format!(
                            "duplicate caseId `{}` (also cases[{first}]); case ids must be unique",
                            plan.case_id
                        ),
                    ));
                }
                fingerprint.update(plan.body.as_bytes());
                fingerprint.update(assertions.as_deref().unwrap_or("-").as_bytes());
                if let Some(out) = cases_out.as_deref_mut() {
                    out.push(&plan.body)?;
                }
            }
            // A suite that will be refused keeps nothing more.
            if problems.is_empty()
                && let Some(keeping) = kept.take()
            {
                kept = keeping.add(Checked { batch, plans });
            }
            Ok(())
        },
    )?;
    if count == 0 && problems.is_empty() {
        problems.push(("cases".into(), "holds no cases; give at least one".into()));
    }
    if !problems.is_empty() {
        if unlisted > 0 {
            problems.push((String::new(), format!("and {unlisted} more problems")));
        }
        return Err(EvalError::Cases {
            file: fixture.to_path_buf(),
            problems,
        });
    }
    Ok(Validated {
        preset,
        assertions,
        suite_json,
        case_count: count,
        fingerprint: hex::encode(fingerprint.finalize()),
        kept: kept.and_then(Keeping::finish),
        case_ids: Some(ids),
        suite,
        sessions,
    })
}

/// What the checking pass is keeping: batches while they fit the budget
/// (with their weight), then only the plans, set aside on disk.
enum Keeping<'a> {
    Batches(&'a Path, Vec<Checked>, usize),
    Plans(PlanSpill),
}

impl Keeping<'_> {
    /// Keeps `checked` too; `None` when the plans cannot be set aside (the
    /// run pass then reads and translates the cases again).
    fn add(self, checked: Checked) -> Option<Self> {
        let spilled = match self {
            Self::Batches(dir, mut list, weight) => {
                let weight = weight + checked.weight();
                list.push(checked);
                if weight <= KEEP_BUDGET {
                    return Some(Self::Batches(dir, list, weight));
                }
                // Too large to keep: from now on only the plans, on disk.
                PlanSpill::create(dir)
                    .and_then(|mut spill| {
                        list.iter().try_for_each(|c| spill_plans(&mut spill, c))?;
                        Ok(spill)
                    })
                    .inspect_err(|error| set_aside_failed(dir, error))
            }
            Self::Plans(mut spill) => spill_plans(&mut spill, &checked)
                .inspect_err(|error| set_aside_failed(spill.dir(), error))
                .map(|()| spill),
        };
        spilled.ok().map(Self::Plans)
    }

    fn finish(self) -> Option<Kept> {
        match self {
            Self::Batches(_, list, _) => Some(Kept::Batches(list)),
            Self::Plans(spill) => {
                let dir = spill.dir().to_path_buf();
                match spill.finish() {
                    Ok(plans) => Some(Kept::Plans(plans)),
                    Err(error) => {
                        set_aside_failed(&dir, &error);
                        None
                    }
                }
            }
        }
    }
}

/// Setting plans aside is a saving, not a need: a failure is said and the
/// run goes on without it.
fn set_aside_failed(dir: &Path, error: &std::io::Error) {
    eprintln!(
        "warning: the checked cases could not be set aside in {} ({}); the run reads and translates them again",
        crate::term::shown(&dir.display().to_string()),
        crate::term::shown(&error.to_string())
    );
}

fn spill_plans(spill: &mut PlanSpill, checked: &Checked) -> std::io::Result<()> {
    let cases = checked.batch.indices.iter().zip(&checked.batch.texts);
    for (plan, (&index, text)) in checked.plans.iter().zip(cases) {
        spill.push(index, text, plan)?;
    }
    Ok(())
}

/// The preset's plans of a prepared batch, or the problems it found in
/// the cases (paths naming each case's own file).
pub(in crate::eval) type Translated = Result<Vec<CasePlan>, Vec<(String, String)>>;

pub(in crate::eval) fn translate(
    session: &mut PresetSession,
    suite_json: &str,
    batch: &Batch,
) -> Result<Translated, EvalError> {
    let first = batch.indices.first().copied().unwrap_or(0);
    match session.translate(suite_json, &batch.texts, first) {
        Ok(plans) => Ok(Ok(plans)),
        Err(PluginError::InvalidInput { errors, .. }) => Ok(Err(errors
            .into_iter()
            .map(|(path, message)| {
                (
                    origins::locate(&path, &batch.origins, &batch.indices),
                    message,
                )
            })
            .collect())),
        Err(other) => Err(other.into()),
    }
}

/// Consecutive batches of at most `size` cases read from `stream`.
pub(in crate::eval) fn case_batches(
    stream: CaseStream,
    size: usize,
) -> impl Iterator<Item = Result<RawBatch, EvalError>> + Send {
    let mut stream = stream;
    let mut next = 0usize;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let mut cases = Vec::with_capacity(size);
        for case in stream.by_ref().take(size.max(1)) {
            match case {
                Ok(case) => cases.push(case),
                Err(error) => {
                    failed = true;
                    return Some(Err(error.into()));
                }
            }
        }
        if cases.is_empty() {
            return None;
        }
        let first = next;
        next += cases.len();
        Some(Ok(RawBatch::consecutive(first, cases)))
    })
}

/// The suite's judge model, if it configures one.
fn judge(
    registry: &Registry,
    suite: &Suite,
    options: &SuiteOptions,
) -> Result<Option<Arc<JudgeModel>>, EvalError> {
    let Some(value) = suite.body.get("judge") else {
        return Ok(None);
    };
    let config = JudgeConfig::parse(value).map_err(|problem| EvalError::Cases {
        file: suite.file.clone(),
        problems: vec![problem],
    })?;
    // Without run limits (offline validation) nothing calls the judge, so
    // its endpoint and key are not looked for.
    let base = suite.file.parent().unwrap_or(Path::new(""));
    let config = JudgeConfig {
        provider: crate::eval::cases::origins::plugin_reference(
            &suite.root,
            base,
            &config.provider,
        )
        .map_err(|message| EvalError::Cases {
            file: suite.file.clone(),
            problems: vec![("judge.provider".into(), message)],
        })?,
        ..config
    };
    Ok(Some(Arc::new(JudgeModel::for_run(
        registry,
        &config,
        options.judge_limits.as_ref(),
        options.cassette.clone(),
        &options.provider_env,
    )?)))
}

/// Checks `suite`'s preset fields against the contract of the preset that
/// would serve it, without reading its cases: for what must be refused
/// before anything runs (every variant of an experiment, every step whose
/// fields do not wait on an earlier step).
pub fn check_preset_fields(registry: &Registry, mut suite: Suite) -> Result<(), EvalError> {
    preset_applied(registry, &mut suite).map(drop)
}

/// The preset that serves `suite` (its pair, from `presetPack` when named),
/// with the preset's contract applied to the suite's fields: checked, and
/// defaults filled in.
pub(in crate::eval) fn preset_applied(
    registry: &Registry,
    suite: &mut Suite,
) -> Result<Arc<Plugin>, EvalError> {
    let preset = registry.preset_for(suite.pair, preset_pack(&suite.body))?;
    let contract = &crate::eval::run::packets::preset_description(&preset).contract;
    crate::fixture::apply_contract(suite, contract, preset.id())?;
    Ok(preset)
}

/// What the preset of `suite` declared (the fields a case's derived id
/// comes from, where its evaluations hold the answer, …); an empty
/// contract when the preset cannot be loaded (loading it again to run the
/// suite says why).
pub fn declared_contract(registry: &Registry, suite: &Suite) -> crate::fixture::SuiteContract {
    registry
        .preset_for(suite.pair, preset_pack(&suite.body))
        .map(|preset| {
            crate::eval::run::packets::preset_description(&preset)
                .contract
                .clone()
        })
        .unwrap_or_default()
}

/// The installed pack whose preset a suite runs on (`presetPack`), if any.
pub fn preset_pack(body: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
    body.get("presetPack")
        .and_then(serde_json::Value::as_str)
        .filter(|p| !p.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{Fixture, load_fixture};

    /// A suite of `n` app/prompt cases whose inputs are `size` bytes.
    fn suite(dir: &Path, n: usize, size: usize) -> Suite {
        let cases: Vec<Value> = (0..n)
            .map(|i| {
                serde_json::json!({"caseId": format!("c{i}"),
                    "input": format!("<case-{i}> {}", "x".repeat(size))})
            })
            .collect();
        let body = serde_json::json!({
            "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app",
            "preset": "prompt", "suiteId": "s", "provider": "fixture", "model": "m",
            "cases": cases,
        });
        let file = dir.join("s.fixture.json");
        std::fs::write(&file, body.to_string()).unwrap();
        match load_fixture(&file).unwrap() {
            Fixture::Suite(suite) => suite,
            Fixture::Steps(..) => unreachable!(),
        }
    }

    fn validated(dir: &Path, n: usize, size: usize, keep: Option<&Path>) -> Validated {
        let registry = crate::plugin::registry::test_registry();
        let suite = suite(dir, n, size);
        validate_suite(registry, suite, 2, &SuiteOptions::default(), None, keep).unwrap()
    }

    #[test]
    fn a_suite_within_the_budget_is_kept_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let kept = validated(dir.path(), 20, 100, Some(dir.path())).kept;
        let Some(Kept::Batches(batches)) = kept else {
            panic!("kept in memory")
        };
        let ids: Vec<String> = batches
            .iter()
            .flat_map(|b| b.plans.iter().map(|p| p.case_id.clone()))
            .collect();
        assert_eq!(ids, (0..20).map(|i| format!("c{i}")).collect::<Vec<_>>());
        assert!(validated(dir.path(), 20, 100, None).kept.is_none());
    }

    #[test]
    fn past_the_budget_every_plan_is_set_aside_in_order() {
        // ~480 kB a case as estimated (its text, the plan's body, input and
        // message, doubled). The streamed cases come in batches of 64: the
        // first fits the budget, the second is past it (both set aside
        // then), the third is set aside as it comes.
        let dir = tempfile::tempdir().unwrap();
        let run = tempfile::tempdir().unwrap();
        let n = 150;
        let kept = validated(dir.path(), n, 60_000, Some(run.path())).kept;
        let Some(Kept::Plans(mut plans)) = kept else {
            panic!("set aside")
        };
        let all: Vec<usize> = (0..n).collect();
        let plans = plans.take(&all).unwrap();
        for (i, (hash, plan)) in plans.iter().enumerate() {
            assert_eq!(plan.case_id, format!("c{i}"));
            let input = plan.input.as_deref().unwrap();
            assert!(
                input.starts_with(&format!("\"<case-{i}> ")),
                "{}",
                &input[..20]
            );
            // The hash is of the case as the preset saw it.
            let text = serde_json::json!({"caseId": format!("c{i}"),
                "input": format!("<case-{i}> {}", "x".repeat(60_000))});
            assert_eq!(
                *hash,
                crate::eval::run::spilled_plans::text_hash(&text.to_string())
            );
        }
    }
}
