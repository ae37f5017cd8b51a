//! Scorer sessions: a scorer bound to one config, scoring many inputs.
//!
//! A session owns at most one live store. The config is validated once
//! (`prepare`) when the session is created, so a bad config is reported
//! before anything is scored. A call that traps or hits a limit discards the
//! store; the next call instantiates a fresh one and prepares again, so one
//! bad input never poisons the inputs after it. Stores never cross sessions,
//! so nothing leaks between plugins, configs or runs.
//!
//! Negation (`negate: true` in the config) is applied here, by the host, so
//! every scorer supports it the same way, including third-party ones.

use std::sync::Arc;

use serde_json::Value;
use wasmtime::Store;
use wasmtime::component::ResourceAny;

use super::bindings::scorer::Scorer;
use super::bindings::scorer::exports::cautilus::plugin::scorer_api;
use super::bindings::types::{CaseView, Observation, PluginError as GuestError, Score};
use super::error::PluginError;
use super::imports::Grants;
use super::limits::{Limits, StoreState};
use super::runtime::{Plugin, PluginPre, arm, classify, new_store};
use super::{Description, PluginKind};

pub use scorer_api::ScoreInput;

impl ScoreInput {
    /// An input scoring `output` (the final text) for a case.
    pub fn from_output(case_id: &str, output: Option<String>) -> Self {
        Self {
            subject: CaseView {
                case_id: case_id.to_string(),
                input: None,
                expected: None,
                criteria: None,
                metadata: None,
            },
            observation: Observation {
                final_text: output,
                ..Observation::empty()
            },
        }
    }
}

impl Observation {
    /// An observation that captured nothing.
    pub fn empty() -> Self {
        Self {
            final_text: None,
            messages: Vec::new(),
            tool_calls: None,
            usage: None,
            cost_usd: None,
            duration_ms: None,
            provider: None,
            model: None,
            harness: None,
            mode: None,
            structured: None,
        }
    }
}

/// Keys of a scorer config that the host consumes itself.
const HOST_KEYS: &[&str] = &["negate"];

/// A scorer bound to one configuration.
pub struct ScorerSession {
    plugin: Arc<Plugin>,
    scorer: String,
    config: String,
    negate: bool,
    limits: Limits,
    grants: Arc<Grants>,
    live: Option<Live>,
}

struct Live {
    store: Store<StoreState>,
    bindings: Scorer,
    grader: ResourceAny,
}

impl ScorerSession {
    /// Binds `scorer` of `plugin` to `config` (a JSON object, or null for none).
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
        let Description::Scorer(pack) = &plugin.description else {
            return Err(PluginError::WrongWorld {
                plugin: plugin.label.clone(),
                found: plugin.kind,
                expected: PluginKind::Scorer,
            });
        };
        if !pack.scorers.iter().any(|s| s.id == scorer) {
            return Err(PluginError::UnknownScorer {
                plugin: plugin.label.clone(),
                scorer: scorer.to_string(),
                available: pack
                    .scorers
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let (config, negate) =
            split_host_keys(config).map_err(|(field, message)| PluginError::InvalidConfig {
                plugin: scorer.to_string(),
                field,
                message,
            })?;
        let config = Value::Object(config).to_string();
        let mut session = Self {
            plugin,
            scorer: scorer.to_string(),
            config,
            negate,
            limits,
            grants,
            live: None,
        };
        session.live()?;
        Ok(session)
    }

    /// The scorer id this session runs.
    pub fn scorer(&self) -> &str {
        &self.scorer
    }

    /// Scores one input.
    pub fn score(&mut self, input: &ScoreInput) -> Result<Score, PluginError> {
        let limits = self.limits.clone();
        let scorer = self.scorer.clone();
        let live = self.live()?;
        arm(&mut live.store, &limits);
        let result = live
            .bindings
            .cautilus_plugin_scorer_api()
            .grader()
            .call_score(&mut live.store, live.grader, input);
        let result = result.map_err(|trap| classify(trap, &live.store, &limits, &scorer));
        let outcome = match result {
            Ok(Ok(score)) => self.finish(score),
            Ok(Err(error)) => Err(self.guest_error(error)),
            Err(error) => Err(error),
        };
        if let Err(error) = &outcome
            && error.poisons_store()
        {
            self.live = None;
        }
        outcome
    }

    /// Scores many inputs in one guest call; falls back to one call per input
    /// after a trap so that one bad input fails alone.
    pub fn score_batch(&mut self, inputs: &[ScoreInput]) -> Vec<Result<Score, PluginError>> {
        let limits = self.limits.clone();
        let live = match self.live() {
            Ok(live) => live,
            Err(error) => {
                let message = error.to_string();
                return inputs
                    .iter()
                    .map(|_| Err(PluginError::Host(message.clone())))
                    .collect();
            }
        };
        arm(&mut live.store, &limits);
        let result = live
            .bindings
            .cautilus_plugin_scorer_api()
            .grader()
            .call_score_batch(&mut live.store, live.grader, inputs);
        match result {
            Ok(results) if results.len() == inputs.len() => {
                let scored: Vec<_> = results
                    .into_iter()
                    .map(|r| match r {
                        Ok(score) => self.finish(score),
                        Err(error) => Err(self.guest_error(error)),
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
            _ => {
                self.live = None;
                inputs.iter().map(|input| self.score(input)).collect()
            }
        }
    }

    fn live(&mut self) -> Result<&mut Live, PluginError> {
        if self.live.is_none() {
            self.live = Some(self.instantiate()?);
        }
        Ok(self.live.as_mut().expect("just set"))
    }

    fn instantiate(&self) -> Result<Live, PluginError> {
        let PluginPre::Scorer(pre) = &self.plugin.pre else {
            unreachable!("checked in ScorerSession::new");
        };
        let mut store = new_store(
            pre.engine(),
            Arc::from(self.scorer.as_str()),
            &self.limits,
            self.grants.clone(),
            self.plugin.requested(),
        );
        arm(&mut store, &self.limits);
        let bindings = pre
            .instantiate(&mut store)
            .map_err(|e| classify(e, &store, &self.limits, &self.scorer))?;
        let prepared = bindings
            .cautilus_plugin_scorer_api()
            .call_prepare(&mut store, &self.scorer, &self.config)
            .map_err(|e| classify(e, &store, &self.limits, &self.scorer))?;
        let grader = prepared.map_err(|e| self.guest_error(e))?;
        Ok(Live {
            store,
            bindings,
            grader,
        })
    }

    fn guest_error(&self, error: GuestError) -> PluginError {
        super::oneshot::guest_error(&self.scorer, error)
    }

    /// Checks the output size and applies negation.
    fn finish(&self, score: Score) -> Result<Score, PluginError> {
        let bytes = score.name.len()
            + score.label.as_ref().map_or(0, String::len)
            + score.detail.as_ref().map_or(0, String::len);
        if bytes > self.limits.output_bytes {
            return Err(PluginError::OutputTooLarge {
                plugin: self.scorer.clone(),
                bytes,
                limit: self.limits.output_bytes,
            });
        }
        Ok(if self.negate { negate(score) } else { score })
    }
}

/// Splits host-owned keys (`negate`) off a config; returns the rest of the
/// config and whether to negate. Also used by the checks the host runs.
pub(crate) fn split_host_keys(
    config: &Value,
) -> Result<(serde_json::Map<String, Value>, bool), (String, String)> {
    match config {
        Value::Null => Ok((serde_json::Map::new(), false)),
        Value::Object(map) => {
            let negate = match map.get("negate") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err((
                        "negate".into(),
                        format!("expected true or false, got {other}"),
                    ));
                }
            };
            let rest: serde_json::Map<String, Value> = map
                .iter()
                .filter(|(k, _)| !HOST_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Ok((rest, negate))
        }
        other => Err((
            String::new(),
            format!("a scorer config must be a JSON object, got {other}"),
        )),
    }
}

/// Inverts a score: value → 1 − value, passed → not passed.
pub fn negate(score: Score) -> Score {
    Score {
        value: score.value.map(|v| 1.0 - v),
        passed: score.passed.map(|p| !p),
        detail: Some(match score.detail {
            Some(detail) => format!("negated: {detail}"),
            None => "negated".into(),
        }),
        ..score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negation_inverts_value_and_verdict() {
        let score = Score {
            name: "contains".into(),
            value: Some(1.0),
            passed: Some(true),
            label: None,
            detail: Some("found `x`".into()),
        };
        let negated = negate(score);
        assert_eq!(negated.value, Some(0.0));
        assert_eq!(negated.passed, Some(false));
        assert_eq!(negated.detail.as_deref(), Some("negated: found `x`"));
    }

    #[test]
    fn not_applicable_stays_not_applicable() {
        let score = Score {
            name: "x".into(),
            value: None,
            passed: None,
            label: None,
            detail: None,
        };
        let negated = negate(score);
        assert_eq!((negated.value, negated.passed), (None, None));
    }

    #[test]
    fn host_keys_are_split_off() {
        let config = serde_json::json!({"value": "a", "negate": true});
        let (rest, negate) = split_host_keys(&config).unwrap();
        assert!(negate);
        assert_eq!(Value::Object(rest).to_string(), r#"{"value":"a"}"#);
        let bad = serde_json::json!({"negate": "yes"});
        assert_eq!(split_host_keys(&bad).unwrap_err().0, "negate");
        assert!(split_host_keys(&serde_json::json!([1])).is_err());
    }
}
