//! A validated case, normalized, and what the host needs to invoke it
//! ([`super::Preset::translate`]'s answer).

use serde_json::Value;

#[cfg(doc)]
use super::Preset;
use super::WrittenPlan;
use crate::json_text::to_text as json_text;
use crate::types::Message;

/// A validated case, normalized, and what the host needs to invoke it.
#[derive(Debug, Clone)]
pub struct CasePlan {
    pub case_id: String,
    /// The normalized case, written to the cases packet as is.
    pub body: Value,
    /// Turns the provider answers (the last one is the user's).
    pub messages: Vec<Message>,
    pub system: Option<String>,
    /// The provider and model the case pins, when it does.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// The case's input and expectations, handed to the provider.
    pub input: Option<Value>,
    pub expected: Option<Value>,
    /// The value assertions compare against when they give none (e.g. an
    /// app case's `expected.finalText`).
    pub reference: Option<Value>,
    /// How many times the host samples the case (at least 1).
    pub repeat_count: u32,
}

impl CasePlan {
    /// The plan as the host takes it: the body and values as JSON text
    /// (what [`Preset::translate_written`] gives).
    pub fn written(self) -> WrittenPlan {
        WrittenPlan {
            case_id: self.case_id,
            body: json_text(&self.body),
            messages: self.messages,
            system: self.system,
            provider: self.provider,
            model: self.model,
            input: self.input.as_ref().map(json_text),
            expected: self.expected.as_ref().map(json_text),
            reference: self.reference.as_ref().map(json_text),
            repeat_count: self.repeat_count.max(1),
        }
    }

    /// A plan sampled once with no turns; set the other fields as needed.
    pub fn new(case_id: impl Into<String>, body: Value) -> Self {
        Self {
            case_id: case_id.into(),
            body,
            messages: Vec::new(),
            system: None,
            provider: None,
            model: None,
            input: None,
            expected: None,
            reference: None,
            repeat_count: 1,
        }
    }
}
