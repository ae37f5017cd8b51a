//! A scorer bound to one configuration, scoring many inputs (the CLI's
//! `score`, and tests): one [`GraderSpec`] on its own [`ScorerInstance`],
//! above both.

use std::sync::Arc;

use serde_json::Value;

use super::bindings::types::Score;
use super::error::PluginError;
use super::grants::Grants;
use super::limits::Limits;
use super::runtime::Plugin;
use super::scorer::{GraderSpec, ScoreInput};
use super::scorer_instance::ScorerInstance;

/// A scorer bound to one configuration: a [`ScorerInstance`] serving one
/// grader. Runs that score many configurations share instances instead.
pub struct ScorerSession {
    spec: GraderSpec,
    instance: ScorerInstance,
}

impl ScorerSession {
    /// Binds `scorer` of `plugin` to `config` (a JSON object, or null for
    /// none) and prepares it, so a bad config is reported now.
    ///
    /// Fails with a definition error when the plugin is not a scorer, has no
    /// such scorer, or rejects the config.
    pub fn new(
        plugin: Arc<Plugin>,
        scorer: &str,
        config: &Value,
        limits: Limits,
        grants: Arc<Grants>,
    ) -> Result<Self, PluginError> {
        let spec = GraderSpec::new(&plugin, scorer, config)?;
        let mut instance = ScorerInstance::new(plugin, limits, grants)?;
        instance.prepare(&spec)?;
        Ok(Self { spec, instance })
    }

    /// The scorer id this session runs.
    pub fn scorer(&self) -> &str {
        &self.spec.scorer
    }

    /// Scores one input.
    pub fn score(&mut self, input: &ScoreInput) -> Result<Score, PluginError> {
        self.instance.score(&self.spec, input)
    }

    /// Scores many inputs in one guest call; falls back to one call per input
    /// after a trap so that one bad input fails alone.
    pub fn score_batch(&mut self, inputs: &[ScoreInput]) -> Vec<Result<Score, PluginError>> {
        self.instance.score_batch(&self.spec, inputs)
    }
}
