//! Logic of the built-in scorers, independent of WebAssembly.
//!
//! Each scorer is a config struct (deserialized with `deny_unknown_fields`,
//! so typos are errors) plus a prepared form that scores outputs. The
//! component crate adapts them to the plugin SDK; the benchmark calls them
//! natively to measure the cost of the sandbox.
//!
//! The needle, pattern or reference is the config's `value`; when absent it
//! falls back to the case's `expected`, as promptfoo and AgentV users write it.

pub mod distance;
pub mod json;
pub mod pattern;
pub mod retrieval;
pub mod text;
pub mod trajectory;

/// Failure excerpts are the SDK's, so every plugin quotes output the same way.
pub use cautilus_sdk::excerpt;
use serde_json::Value;

/// The outcome of one score.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// 0..=1, or `None` when the scorer does not apply.
    pub value: Option<f64>,
    pub passed: Option<bool>,
    /// Why it failed: what was expected and an excerpt of what was seen;
    /// for a check that passed, what it found, when it says (a negated
    /// assertion fails with it).
    pub detail: Option<String>,
}

impl Verdict {
    pub fn pass() -> Self {
        Self {
            value: Some(1.0),
            passed: Some(true),
            detail: None,
        }
    }

    pub fn fail(detail: String) -> Self {
        Self {
            value: Some(0.0),
            passed: Some(false),
            detail: Some(detail),
        }
    }

    pub fn check(ok: bool, detail: impl FnOnce() -> String) -> Self {
        if ok {
            Self::pass()
        } else {
            Self::fail(detail())
        }
    }

    /// [`Verdict::check`] that also says what a pass found (`found "foo"
    /// at char 12`): what a negated assertion reports when it fails.
    pub fn explain(
        ok: bool,
        found: impl FnOnce() -> String,
        missing: impl FnOnce() -> String,
    ) -> Self {
        if ok {
            Self {
                detail: Some(found()),
                ..Self::pass()
            }
        } else {
            Self::fail(missing())
        }
    }
}

/// `found "foo" at char 12`: `needle` found at byte `at` of `hay` (the
/// position counted in characters, from 0).
pub fn found_at(needle: &str, hay: &str, at: usize) -> String {
    let chars = hay.get(..at).map_or(0, |before| before.chars().count());
    format!("found {} at char {chars}", excerpt(needle, EXCERPT_CHARS))
}

/// A config problem at a JSON path (`value`, `flags`).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

/// Why a scorer gave no verdict: its config is wrong, or it could not
/// check this answer (the assertion is then `errored` with the reason,
/// never failed: a limit of the scorer is not a fault of the answer).
#[derive(Debug, Clone, PartialEq)]
pub enum ScoreError {
    Config(ConfigError),
    Unchecked(String),
}

impl From<ConfigError> for ScoreError {
    fn from(error: ConfigError) -> Self {
        Self::Config(error)
    }
}

/// The reference a scorer compares against: the configured `value`, else the case's `expected`.
pub fn reference<'a>(
    configured: Option<&'a Value>,
    expected: Option<&'a Value>,
) -> Result<&'a Value, ConfigError> {
    configured.or(expected).ok_or_else(|| {
        ConfigError::new(
            "value",
            "no `value` in the config and the case has no `expected` to fall back to",
        )
    })
}

/// A reference as text: strings as-is, other JSON as its compact encoding.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Excerpt length used in failure details.
pub const EXCERPT_CHARS: usize = 160;
