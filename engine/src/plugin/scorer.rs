//! Scorer configurations ([`GraderSpec`]), the inputs scorers read
//! ([`ScoreInput`]) and negation; a scorer bound to one config is a
//! [`ScorerSession`](super::scorer_session::ScorerSession).
//!
//! The config is validated once (`prepare`) when the session is created, so
//! a bad config is reported before anything is scored. A call that traps or
//! hits a limit discards the store; the next call instantiates a fresh one
//! and prepares again, so one bad input never poisons the inputs after it.
//! Runs that score many configurations share one
//! `ScorerInstance` (`scorer_instance.rs`) per plugin
//! instead of a session each.
//!
//! Negation (`negate: true` in the config) is applied here, by the host, so
//! every scorer supports it the same way, including third-party ones.

use serde_json::Value;

use super::bindings::scorer_api;
use super::bindings::types::{CaseView, Observation, PluginError as GuestError, Score};
use super::error::PluginError;
use super::limits::Limits;
use super::runtime::Plugin;
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
            cost_source: None,
            retries: None,
            duration_ms: None,
            provider: None,
            model: None,
            harness: None,
            mode: None,
            structured: None,
            trace: None,
        }
    }
}

/// Keys of a scorer config that the host consumes itself.
pub(crate) const HOST_KEYS: &[&str] = &["negate"];

/// One configuration of one scorer of a plugin: what a `grader` is
/// prepared from. Checked against the plugin's `describe` when built; the
/// config itself is checked by the plugin's `prepare`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GraderSpec {
    /// The scorer id within the plugin.
    pub scorer: String,
    /// The config as JSON text, without the host's keys.
    pub config: String,
    /// Invert the outcome (`negate: true`), done by the host.
    pub negate: bool,
}

impl GraderSpec {
    /// Binds `scorer` of `plugin` to `config` (a JSON object, or null).
    ///
    /// Fails with a definition error when the plugin is not a scorer, has
    /// no such scorer, or `negate` is not a boolean.
    pub fn new(plugin: &Plugin, scorer: &str, config: &Value) -> Result<Self, PluginError> {
        check_scorer(plugin, scorer)?;
        let (config, negate) =
            split_host_keys(config).map_err(|(field, message)| PluginError::InvalidConfig {
                plugin: scorer.to_string(),
                field,
                message,
            })?;
        Ok(Self {
            scorer: scorer.to_string(),
            config: Value::Object(config).to_string(),
            negate,
        })
    }

    /// A spec from a config's compact JSON text, which holds no host-owned
    /// key (the caller took them off, [`HOST_KEYS`]).
    pub fn with_text(plugin: &Plugin, scorer: &str, config: String) -> Result<Self, PluginError> {
        check_scorer(plugin, scorer)?;
        Ok(Self {
            scorer: scorer.to_string(),
            config,
            negate: false,
        })
    }

    pub(crate) fn guest_error(&self, error: GuestError) -> PluginError {
        super::error::guest_error(&self.scorer, error)
    }

    /// Checks the output size and applies negation.
    pub(crate) fn finish(&self, score: Score, limits: &Limits) -> Result<Score, PluginError> {
        let bytes = score.name.len()
            + score.label.as_ref().map_or(0, String::len)
            + score.detail.as_ref().map_or(0, String::len);
        if bytes > limits.output_bytes {
            return Err(PluginError::OutputTooLarge {
                plugin: self.scorer.clone(),
                bytes,
                limit: limits.output_bytes,
            });
        }
        Ok(if self.negate { negate(score) } else { score })
    }
}

/// Fails unless `plugin` is a scorer component with a scorer `scorer`.
fn check_scorer(plugin: &Plugin, scorer: &str) -> Result<(), PluginError> {
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
    Ok(())
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

/// Label of a score on a signal the run did not capture (see the built-in
/// tool-trajectory scorers).
pub const UNCAPTURED: &str = "uncaptured";

/// Inverts a score: value → 1 − value, passed → not passed. A score on a
/// signal that was not captured stays failed: negating an unmeasured check
/// must not make it a pass.
pub fn negate(score: Score) -> Score {
    if score.label.as_deref() == Some(UNCAPTURED) && score.passed == Some(false) {
        return score;
    }
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
    fn an_uncaptured_signal_stays_failed_when_negated() {
        let score = Score {
            name: "tool-not-called".into(),
            value: Some(0.0),
            passed: Some(false),
            label: Some(UNCAPTURED.into()),
            detail: Some("uncaptured: …".into()),
        };
        let negated = negate(score);
        assert_eq!((negated.value, negated.passed), (Some(0.0), Some(false)));
        assert_eq!(negated.detail.as_deref(), Some("uncaptured: …"));
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
