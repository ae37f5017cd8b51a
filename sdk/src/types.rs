//! The WIT types, re-exported with helpers (builders, JSON accessors).

use serde_json::Value;

use crate::bindings::scorer_api;
use crate::bindings::types as wit;

pub use scorer_api::ScoreInput;
pub use wit::{
    CaseView, CostClass, FieldError, Message, Observation, PluginError, PluginInfo, Score,
    ToolCall, Usage, WorkspaceTrace,
};

/// A capability a plugin requests (granted or not by the user's run).
pub use wit::Capability;

impl PluginError {
    /// A config error at `path` (a JSON path such as `value` or `flags`).
    pub fn config(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidConfig(FieldError {
            path: path.into(),
            message: message.into(),
        })
    }

    /// An input error at `path`.
    pub fn input(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidInput(vec![FieldError {
            path: path.into(),
            message: message.into(),
        }])
    }

    /// Any other failure.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// The config path of an [`PluginError::InvalidConfig`], if it is one.
    pub fn config_path(&self) -> Option<&str> {
        match self {
            Self::InvalidConfig(field) => Some(&field.path),
            _ => None,
        }
    }
}

impl Score {
    /// A score with `value` in 0..=1 and no verdict yet.
    pub fn new(name: impl Into<String>, value: f64) -> Self {
        Self {
            name: name.into(),
            value: Some(value.clamp(0.0, 1.0)),
            passed: None,
            label: None,
            detail: None,
        }
    }

    /// A passing score of 1.
    pub fn pass(name: impl Into<String>) -> Self {
        Self::new(name, 1.0).passed(true)
    }

    /// A failing score of 0 that says why.
    pub fn fail(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(name, 0.0).passed(false).detail(detail)
    }

    /// 1 when `ok`, else 0 with `detail`.
    pub fn check(name: impl Into<String>, ok: bool, detail: impl FnOnce() -> String) -> Self {
        if ok {
            Self::pass(name)
        } else {
            Self::fail(name, detail())
        }
    }

    /// `part / whole` (1 when `whole` is 0).
    pub fn ratio(name: impl Into<String>, part: usize, whole: usize) -> Self {
        let value = if whole == 0 {
            1.0
        } else {
            part as f64 / whole as f64
        };
        Self::new(name, value)
    }

    /// Not applicable: no value and no verdict, with the reason.
    pub fn not_applicable(name: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: None,
            passed: None,
            label: None,
            detail: Some(why.into()),
        }
    }

    /// Sets the verdict.
    pub fn passed(mut self, passed: bool) -> Self {
        self.passed = Some(passed);
        self
    }

    /// Sets the verdict to `value >= threshold`.
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.passed = Some(self.value.unwrap_or(0.0) >= threshold);
        self
    }

    /// Explains the score (what was expected, what was seen).
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// A short label (e.g. a classification).
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
}

impl Observation {
    /// An observation that reports nothing: start from it and set what a
    /// provider captured (`Observation { final_text: …, ..Observation::empty() }`).
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

impl ScoreInput {
    /// The observed final text; empty when none was captured.
    pub fn output(&self) -> &str {
        self.observation.final_text.as_deref().unwrap_or("")
    }

    /// Whether the provider captured a final text at all.
    pub fn has_output(&self) -> bool {
        self.observation.final_text.is_some()
    }

    /// The case's `expected`, parsed.
    pub fn expected(&self) -> Option<Value> {
        self.subject
            .expected
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
    }

    /// The case's `input`, parsed.
    pub fn input(&self) -> Option<Value> {
        self.subject
            .input
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
    }

    /// `configured` if the config set it, else the case's `expected`; the
    /// usual rule for a scorer's needle, pattern or reference.
    pub fn value_or_expected(&self, configured: Option<&Value>) -> Result<Value, PluginError> {
        if let Some(value) = configured {
            return Ok(value.clone());
        }
        self.expected().ok_or_else(|| {
            PluginError::config(
                "value",
                "no `value` in the config and the case has no `expected` to fall back to",
            )
        })
    }
}

/// A small JSON Schema builder for config schemas shown by `cautilus plugin inspect`.
pub struct ConfigSchema(pub Value);

impl ConfigSchema {
    /// An object schema with described properties and the required ones.
    pub fn object(properties: &[(&str, &str)], required: &[&str]) -> Self {
        let props: serde_json::Map<String, Value> = properties
            .iter()
            .map(|(name, description)| {
                (
                    name.to_string(),
                    serde_json::json!({ "description": description }),
                )
            })
            .collect();
        Self(serde_json::json!({
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": false,
        }))
    }

    /// Uses a full JSON Schema document.
    pub fn raw(schema: Value) -> Self {
        Self(schema)
    }
}

impl Default for ConfigSchema {
    fn default() -> Self {
        Self(serde_json::json!({ "type": "object" }))
    }
}

/// The first `max` characters of `text` in quotes, with an ellipsis when cut.
pub fn excerpt(text: &str, max: usize) -> String {
    let (shown, cut) = if text.len() <= max {
        (text, false) // no more chars than bytes
    } else if text.as_bytes()[..max].is_ascii() {
        (&text[..max], true)
    } else {
        match text.char_indices().nth(max) {
            None => (text, false),
            Some((cut, _)) => (&text[..cut], true),
        }
    };
    // Plain printable ASCII prints as `{:?}` would, without its per-character
    // escape tables (scorers build an excerpt for every failure).
    let plain = shown
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\');
    let mut out = if plain {
        format!("\"{shown}\"")
    } else {
        format!("{shown:?}")
    };
    if cut {
        out.push_str(&format!("… ({} bytes in all)", text.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn excerpt_quotes_like_debug_and_cuts_at_max_chars() {
        for text in [
            "",
            "plain text, with 'single' quotes ~",
            "a \"quoted\" word",
            "back\\slash",
            "tab\tnewline\n",
            "\u{7f} delete",
            "naïve café ✓",
            "zero\u{200b}width",
        ] {
            assert_eq!(excerpt(text, 100), format!("{text:?}"), "{text}");
        }
        assert_eq!(excerpt("abcdef", 3), "\"abc\"… (6 bytes in all)");
        assert_eq!(excerpt("éé\"é", 3), "\"éé\\\"\"… (7 bytes in all)");
        assert_eq!(excerpt("abc", 3), "\"abc\"");
        assert_eq!(excerpt("ééé", 3), "\"ééé\"");
        assert_eq!(excerpt("ab✓d", 3), "\"ab✓\"… (6 bytes in all)");
    }
}
