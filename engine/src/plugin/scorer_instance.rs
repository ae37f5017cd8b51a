//! One live instance of a scorer plugin serving many configurations.
//!
//! The scorer world lets one instance hold many `grader` resources, one per
//! prepared configuration. A [`ScorerInstance`] keeps one store of one
//! plugin and the graders prepared in it, keyed by (scorer id, config): a
//! suite whose every case has its own assertion values still uses one
//! instance per scorer plugin per worker, so the number of live instances
//! never grows with the suite. Graders are bounded too: an instance that
//! holds [`MAX_GRADERS`] is replaced by a fresh one (one instantiation is
//! cheaper than destroying graders one guest call at a time, and returns
//! all the guest's memory); graders still in use are prepared again.
//!
//! A call that traps or hits a limit discards the whole store (every grader
//! in it); the batch is then retried one input at a time on a fresh store,
//! so one bad input fails alone and a limit never turns into a verdict.

use std::collections::HashMap;
use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::ResourceAny;

use super::bindings::Scorer;
use super::bindings::scorer_api::OnceItem;
use super::bindings::types::{PluginError as GuestError, Score};
use super::error::PluginError;
use super::grants::Grants;
use super::guest_call::{arm, classify};
use super::limits::Limits;
use super::runtime::{Plugin, PluginPre};
use super::scorer::{GraderSpec, ScoreInput};
use super::store_state::StoreState;
use super::{Description, PluginKind};

/// Graders one instance keeps prepared at most.
pub const MAX_GRADERS: usize = 256;

/// A scorer plugin's live store and the graders prepared in it.
pub struct ScorerInstance {
    plugin: Arc<Plugin>,
    limits: Limits,
    grants: Arc<Grants>,
    live: Option<Live>,
}

struct Live {
    store: Store<StoreState>,
    bindings: Scorer,
    graders: HashMap<(String, String), ResourceAny>,
}

impl ScorerInstance {
    /// An instance of `plugin` (instantiated on first use).
    pub fn new(
        plugin: Arc<Plugin>,
        limits: Limits,
        grants: Arc<Grants>,
    ) -> Result<Self, PluginError> {
        if !matches!(plugin.description, Description::Scorer(_)) {
            return Err(PluginError::WrongWorld {
                plugin: plugin.label.clone(),
                found: plugin.kind,
                expected: PluginKind::Scorer,
            });
        }
        Ok(Self {
            plugin,
            limits,
            grants,
            live: None,
        })
    }

    /// Number of graders currently prepared (for tests and limits).
    pub fn prepared(&self) -> usize {
        self.live.as_ref().map_or(0, |live| live.graders.len())
    }

    /// Prepares `spec` (a config the plugin rejects is a definition error)
    /// and keeps it prepared for later calls.
    pub fn prepare(&mut self, spec: &GraderSpec) -> Result<(), PluginError> {
        self.grader(spec).map(|_| ())
    }

    /// Scores one input with `spec`'s grader.
    pub fn score(&mut self, spec: &GraderSpec, input: &ScoreInput) -> Result<Score, PluginError> {
        let grader = self.grader(spec)?;
        let limits = self.limits.clone();
        let live = self.live.as_mut().expect("a grader implies a live store");
        arm(&mut live.store, &limits);
        let result = live
            .bindings
            .cautilus_plugin_scorer_api()
            .grader()
            .call_score(&mut live.store, grader, input)
            .map_err(|trap| classify(trap, &live.store, &limits, &spec.scorer));
        let outcome = match result {
            Ok(Ok(score)) => spec.finish(score, &limits),
            Ok(Err(error)) => Err(spec.guest_error(error)),
            Err(error) => Err(error),
        };
        if outcome.as_ref().is_err_and(PluginError::poisons_store) {
            self.live = None;
        }
        outcome
    }

    /// Scores many inputs with `spec`'s grader in one guest call. After a
    /// trap the store is replaced and each input is scored on its own, so
    /// one bad input fails alone.
    pub fn score_batch(
        &mut self,
        spec: &GraderSpec,
        inputs: &[ScoreInput],
    ) -> Vec<Result<Score, PluginError>> {
        let grader = match self.grader(spec) {
            Ok(grader) => grader,
            Err(error) => {
                let message = error.to_string();
                return inputs
                    .iter()
                    .map(|_| Err(PluginError::Host(message.clone())))
                    .collect();
            }
        };
        let limits = self.limits.clone();
        let live = self.live.as_mut().expect("a grader implies a live store");
        arm(&mut live.store, &limits);
        let result = live
            .bindings
            .cautilus_plugin_scorer_api()
            .grader()
            .call_score_batch(&mut live.store, grader, inputs);
        match result {
            Ok(results) if results.len() == inputs.len() => {
                self.finish_all(results.into_iter().map(|r| (spec, r)), &limits)
            }
            _ => {
                self.live = None;
                inputs.iter().map(|input| self.score(spec, input)).collect()
            }
        }
    }

    /// Checks many configs of one scorer in one guest call, preparing
    /// nothing. One result per spec, in order.
    pub fn check(&mut self, specs: &[&GraderSpec]) -> Vec<Result<(), PluginError>> {
        let Some(first) = specs.first() else {
            return Vec::new();
        };
        let configs: Vec<String> = specs.iter().map(|s| s.config.clone()).collect();
        let limits = self.limits.clone();
        let result = self.live().and_then(|live| {
            arm(&mut live.store, &limits);
            live.bindings
                .cautilus_plugin_scorer_api()
                .call_check(&mut live.store, &first.scorer, &configs)
                .map_err(|trap| classify(trap, &live.store, &limits, &first.scorer))
        });
        match result {
            Ok(results) if results.len() == specs.len() => results
                .into_iter()
                .zip(specs)
                .map(|(r, spec)| r.map_err(|e| spec.guest_error(e)))
                .collect(),
            Ok(_) => {
                self.live = None;
                let error = PluginError::Host(format!(
                    "scorer `{}` answered a different number of checks than it was asked",
                    first.scorer
                ));
                specs.iter().map(|_| Err(clone_error(&error))).collect()
            }
            Err(error) if specs.len() == 1 => {
                self.live = None;
                vec![Err(error)]
            }
            Err(_) => {
                // A trap or limit: check each config alone on a fresh store,
                // so only the config that causes it is reported.
                self.live = None;
                specs
                    .iter()
                    .flat_map(|spec| self.check(std::slice::from_ref(spec)))
                    .collect()
            }
        }
    }

    /// Scores each item (a config used once, and the index of its input
    /// in `inputs`) in one guest call that keeps nothing; the inputs cross
    /// once. A call that fails is retried one item at a time on a fresh
    /// store, so a bad item fails alone.
    pub fn score_each(
        &mut self,
        inputs: &[ScoreInput],
        items: &[(&GraderSpec, u32)],
    ) -> Vec<Result<Score, PluginError>> {
        if items.is_empty() {
            return Vec::new();
        }
        let lowered: Vec<OnceItem> = items
            .iter()
            .map(|(spec, input)| OnceItem {
                scorer: spec.scorer.clone(),
                config: spec.config.clone(),
                input: *input,
            })
            .collect();
        let limits = self.limits.clone();
        // What a failure names: the scorer when the call had one item (a
        // failed call is retried item by item, so that is what users see).
        let label = match items {
            [(spec, _)] => spec.scorer.clone(),
            _ => self.plugin.label.clone(),
        };
        let result = self.live().and_then(|live| {
            arm(&mut live.store, &limits);
            live.bindings
                .cautilus_plugin_scorer_api()
                .call_score_each(&mut live.store, inputs, &lowered)
                .map_err(|trap| classify(trap, &live.store, &limits, &label))
        });
        match result {
            Ok(results) if results.len() == items.len() => self.finish_all(
                results
                    .into_iter()
                    .zip(items)
                    .map(|(r, (spec, _))| (*spec, r)),
                &limits,
            ),
            Err(error) if items.len() == 1 => {
                self.live = None;
                vec![Err(error)]
            }
            Ok(results) if items.len() == 1 => {
                self.live = None;
                vec![Err(PluginError::Trap {
                    plugin: label,
                    message: format!("answered {} results for 1 input", results.len()),
                })]
            }
            _ => {
                // One at a time on a fresh store, each with its input alone.
                self.live = None;
                items
                    .iter()
                    .flat_map(|&(spec, input)| {
                        let one = usize::try_from(input).ok().and_then(|i| inputs.get(i));
                        match one {
                            Some(one) => self.score_each(std::slice::from_ref(one), &[(spec, 0)]),
                            None => vec![Err(PluginError::Host(format!(
                                "score-each item names input {input} of {}",
                                inputs.len()
                            )))],
                        }
                    })
                    .collect()
            }
        }
    }

    /// Each guest result checked and negated by its spec; a result that
    /// poisons the store discards it.
    fn finish_all<'a>(
        &mut self,
        results: impl Iterator<Item = (&'a GraderSpec, Result<Score, GuestError>)>,
        limits: &Limits,
    ) -> Vec<Result<Score, PluginError>> {
        let scored: Vec<_> = results
            .map(|(spec, r)| match r {
                Ok(score) => spec.finish(score, limits),
                Err(error) => Err(spec.guest_error(error)),
            })
            .collect();
        if scored
            .iter()
            .any(|r| r.as_ref().is_err_and(PluginError::poisons_store))
        {
            self.live = None;
        }
        scored
    }

    fn live(&mut self) -> Result<&mut Live, PluginError> {
        if self.live.is_none() {
            self.live = Some(self.instantiate()?);
        }
        Ok(self.live.as_mut().expect("just set"))
    }

    /// `spec`'s grader, prepared now if it is not yet.
    fn grader(&mut self, spec: &GraderSpec) -> Result<ResourceAny, PluginError> {
        let key = (spec.scorer.clone(), spec.config.clone());
        let live = self.live()?;
        if let Some(grader) = live.graders.get(&key) {
            return Ok(*grader);
        }
        if live.graders.len() >= MAX_GRADERS {
            self.live = Some(self.instantiate()?);
        }
        let limits = self.limits.clone();
        let live = self.live.as_mut().expect("just set");
        arm(&mut live.store, &limits);
        let prepared = live.bindings.cautilus_plugin_scorer_api().call_prepare(
            &mut live.store,
            &spec.scorer,
            &spec.config,
        );
        match prepared {
            Ok(Ok(grader)) => {
                live.graders.insert(key, grader);
                Ok(grader)
            }
            Ok(Err(error)) => Err(spec.guest_error(error)),
            Err(trap) => {
                let error = classify(trap, &live.store, &limits, &spec.scorer);
                self.live = None;
                Err(error)
            }
        }
    }

    fn instantiate(&self) -> Result<Live, PluginError> {
        let PluginPre::Scorer(pre) = self.plugin.pre()? else {
            unreachable!("checked in ScorerInstance::new");
        };
        let name = self.plugin.id().to_string();
        let mut store = self.plugin.armed_store(&self.limits, self.grants.clone())?;
        let bindings = pre
            .instantiate(&mut store)
            .map_err(|e| classify(e, &store, &self.limits, &name))?;
        Ok(Live {
            store,
            bindings,
            graders: HashMap::new(),
        })
    }
}

/// A copy of an error for every item it concerns (the typed error holds
/// no source, so its message is what is kept).
fn clone_error(error: &PluginError) -> PluginError {
    PluginError::Host(error.to_string())
}
