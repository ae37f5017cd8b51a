//! A worker's scorer instances and the batched guest calls that use them:
//! one instance per scorer plugin (and grant set), each holding the graders
//! of the configs it serves, and `check` calls grouped per scorer.

use std::sync::Arc;

use crate::eval::assert::kinds::{Check, ScorerCheck, Spec};
use crate::plugin::{GraderSpec, PluginError, ScorerInstance};

/// Scorer plugins a worker keeps an instance of at once.
const MAX_INSTANCES: usize = 16;

/// Which instance serves a scorer check, and the scorer: configs with the
/// same key are sent to the guest in one call.
pub(in crate::eval) type CallKey<'a> = (usize, usize, &'a str);

/// Which instance serves a scorer check: configs used once with the same
/// key are scored in one guest call, whatever their scorers.
pub(in crate::eval) type InstanceKey = (usize, usize);

impl ScorerCheck {
    pub(in crate::eval) fn instance_key(&self) -> InstanceKey {
        (
            Arc::as_ptr(&self.plugin) as usize,
            Arc::as_ptr(&self.grants) as usize,
        )
    }

    pub(in crate::eval) fn call_key(&self) -> CallKey<'_> {
        (
            Arc::as_ptr(&self.plugin) as usize,
            Arc::as_ptr(&self.grants) as usize,
            self.grader.scorer.as_str(),
        )
    }
}

/// Appends `item` to the group of `key`, keeping groups in order of first use.
pub(in crate::eval) fn group<K: PartialEq, T>(groups: &mut Vec<(K, Vec<T>)>, key: K, item: T) {
    match groups.iter_mut().find(|(k, _)| *k == key) {
        Some((_, list)) => list.push(item),
        None => groups.push((key, vec![item])),
    }
}

/// A worker's scorer instances: one per scorer plugin (and grant set),
/// each holding the graders of every config it serves. Bounded: past
/// [`MAX_INSTANCES`] plugins the least recently used instance is dropped.
#[derive(Default)]
pub struct ScorerPool {
    instances: Vec<PoolEntry>,
    clock: u64,
}

struct PoolEntry {
    /// Addresses of the plugin and grants the instance serves (identities).
    plugin: usize,
    grants: usize,
    instance: ScorerInstance,
    last_used: u64,
}

impl ScorerPool {
    pub fn new() -> Self {
        Self::default()
    }

    pub(in crate::eval) fn instance(
        &mut self,
        check: &ScorerCheck,
    ) -> Result<&mut ScorerInstance, PluginError> {
        self.clock += 1;
        let plugin = Arc::as_ptr(&check.plugin) as usize;
        let grants = Arc::as_ptr(&check.grants) as usize;
        let found = self
            .instances
            .iter()
            .position(|e| e.plugin == plugin && e.grants == grants);
        let at = match found {
            Some(at) => at,
            None => {
                if self.instances.len() >= MAX_INSTANCES {
                    let oldest = (0..self.instances.len())
                        .min_by_key(|&i| self.instances[i].last_used)
                        .expect("the pool is full");
                    self.instances.swap_remove(oldest);
                }
                self.instances.push(PoolEntry {
                    plugin,
                    grants,
                    instance: ScorerInstance::new(
                        check.plugin.clone(),
                        check.limits.clone(),
                        check.grants.clone(),
                    )?,
                    last_used: 0,
                });
                self.instances.len() - 1
            }
        };
        let entry = &mut self.instances[at];
        entry.last_used = self.clock;
        Ok(&mut entry.instance)
    }
}

/// Checks the scorer configs of `new` (spec, path of its first
/// assertion): one `check` call per scorer plugin and scorer.
pub(in crate::eval) fn check_new<P: std::fmt::Display>(
    pool: &mut ScorerPool,
    new: &[(Arc<Spec>, P)],
    problems: &mut Vec<(String, String)>,
) {
    let mut groups: Vec<(CallKey<'_>, Vec<(&ScorerCheck, &P)>)> = Vec::new();
    for (spec, at) in new {
        if let Check::Scorer(check) = &spec.check {
            group(&mut groups, check.call_key(), (check, at));
        }
    }
    for (_, list) in groups {
        let specs: Vec<&GraderSpec> = list.iter().map(|(check, _)| &check.grader).collect();
        let results = match pool.instance(list[0].0) {
            Ok(instance) => instance.check(&specs),
            Err(error) => specs
                .iter()
                .map(|_| Err(PluginError::Host(error.to_string())))
                .collect(),
        };
        for ((_, at), result) in list.iter().zip(results) {
            if let Err(error) = result {
                problems.push((at.to_string(), error.to_string()));
            }
        }
    }
}
