//! The checking pass of a suite: every case is read once, in batches, and
//! checked before anything runs — its origin and golden file, its
//! assertions (each new config prepared by its scorer), the preset's
//! `translate`, and unique case ids. It yields what the run needs (the
//! preset, the resolved suite-level assertions, the case count and a
//! fingerprint of everything checked) and can write `eval-cases.json` as it
//! goes. Nothing of the suite is kept but a hash per case id.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::EvalError;
use super::assertions::{Assertions, ScorerPool, Source};
use super::batch::{Batch, Preparer, RawBatch};
use super::judge::{JudgeConfig, JudgeModel};
use super::origins;
use super::pipeline::{SuiteOptions, batch_size, preset_limits};
use super::records::PacketWriter;
use super::workers::{never, run_ordered};
use crate::fixture::{CaseStream, Suite};
use crate::plugin::bindings::preset::exports::cautilus::plugin::preset_api::CasePlan;
use crate::plugin::preset::PresetSession;
use crate::plugin::{Plugin, PluginError, Registry};

/// Problems kept for the message; the rest are counted.
const KEPT_PROBLEMS: usize = 1000;

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
}

/// Suite fields the host consumes; the preset never sees them.
const HOST_SUITE_KEYS: &[&str] = &["assertions", "judge"];

/// Checks a loaded suite (see the module docs), writing each case's
/// normalized body to `cases_out` when given.
pub fn validate_suite(
    registry: &Registry,
    suite: Suite,
    jobs: usize,
    options: &SuiteOptions,
    mut cases_out: Option<&mut PacketWriter>,
) -> Result<Validated, EvalError> {
    for warning in &suite.warnings {
        eprintln!("warning: {warning}");
    }
    let fixture = suite.file.as_path();
    let preset = registry.preset_for(suite.pair)?;
    let judge = judge(registry, &suite, options)?;
    let shared = suite.body.get("assertions").map(|list| Source {
        path: "assertions".into(),
        list,
        base: fixture.parent().unwrap_or(Path::new("")).to_path_buf(),
    });
    let assertions = Assertions::new(registry, fixture, shared, judge, &mut ScorerPool::new())?;
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
        snapshots: suite.pair.surface == "app",
        update_snapshots: options.update_snapshots,
    };
    let mut fingerprint = Sha256::new();
    fingerprint.update(Value::Object(suite.body.clone()).to_string());
    let mut ids = CaseIds::default();
    let mut problems: Vec<(String, String)> = Vec::new();
    let mut unlisted = 0usize;
    let mut count = 0usize;
    let size = suite.cases.len_hint().map_or(64, |n| batch_size(n, jobs));
    run_ordered(
        case_batches(suite.cases.open(), size),
        jobs,
        never(),
        || -> Result<_, EvalError> {
            Ok((
                PresetSession::new(preset.clone(), preset_limits())?,
                ScorerPool::new(),
            ))
        },
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
                if let Some(first) = ids.insert(&plan.case_id, i) {
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
        suite,
    })
}

/// The preset's plans of a prepared batch, or the problems it found in
/// the cases (paths naming each case's own file).
pub(super) type Translated = Result<Vec<CasePlan>, Vec<(String, String)>>;

pub(super) fn translate(
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
pub(super) fn case_batches(
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

/// Case ids seen so far, as 64-bit hashes with the first index of each (a
/// few bytes per case, never the ids themselves).
#[derive(Default)]
struct CaseIds {
    seen: HashMap<u64, usize>,
    hasher: std::hash::RandomState,
}

impl CaseIds {
    /// Records `id` at `index`; returns the earlier index of a duplicate.
    fn insert(&mut self, id: &str, index: usize) -> Option<usize> {
        match self.seen.entry(self.hasher.hash_one(id)) {
            std::collections::hash_map::Entry::Occupied(first) => Some(*first.get()),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(index);
                None
            }
        }
    }
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
    // Without run limits (offline validation) nothing calls the judge.
    let limits = options.judge_limits.clone().unwrap_or_default();
    let base = suite.file.parent().unwrap_or(Path::new(""));
    Ok(Some(Arc::new(JudgeModel::new(
        registry, &config, base, limits,
    )?)))
}
