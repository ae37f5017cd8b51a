//! Building blocks for presets of the app surface (chat, prompt): the
//! logic of the built-in `app/chat` and `app/prompt` presets, for a preset
//! of your own that keeps their case shape and packets and changes what it
//! checks (needs the `app` feature: `cautilus-sdk = { version = "…",
//! features = ["app"] }`).
//!
//! Per case, for a [`Shape`]:
//! - [`translate`] validates the case (path-precise errors) and normalizes it
//!   for the cases packet (`cautilus.app_{chat,prompt}_test_cases.v1`);
//! - [`collect`] joins the case with what the host ran into its observed
//!   evaluation (`cautilus.app_{chat,prompt}_evaluation_inputs.v1`);
//! - [`evaluate`] enforces the cross-runtime MUST-be-present fields and scores
//!   `expected.finalText` (case-sensitive substring) or `expected.snapshot`
//!   (the golden file's text, read by the host; see the `snapshot` module) for the summary
//!   (`cautilus.app_{chat,prompt}_evaluation_summary.v1`); a failed or
//!   errored case makes the recommendation `reject`, a case with no
//!   expectations is `unchecked` and makes it `defer`;
//! - [`translate_written`] is `translate`'s fast path for a well-formed case
//!   (see the `translate_text` module);
//! - [`collect_written`] is the fast path of the two in one: the evaluation
//!   and its summary entry written straight to text when the provider
//!   answered (see the `collect_text` module);
//! - [`describe`] and [`contract`] are the preset's `info` and suite
//!   contract (its case and packet JSON Schemas ship in this crate).
//!
//! A preset that asks for the exact final text instead of containment:
//!
//! ```no_run
//! use cautilus_sdk::app::{Shape, collect, contract, describe, evaluate, translate};
//! use cautilus_sdk::preset::{CasePlan, CaseRun, Preset, PresetInfo, SuiteContract, Verdict};
//! use cautilus_sdk::{FieldError, export_preset, plugin_info};
//! use serde_json::{Map, Value};
//!
//! struct Exact;
//!
//! impl Preset for Exact {
//!     fn info() -> PresetInfo { describe(Shape::Prompt, plugin_info!()) }
//!     fn contract() -> SuiteContract { contract(Shape::Prompt) }
//!     fn translate(suite: &Map<String, Value>, case: &Value, at: &str)
//!         -> Result<CasePlan, Vec<FieldError>> { translate(Shape::Prompt, suite, case, at) }
//!     fn collect(case: Value, run: CaseRun) -> Value { collect(Shape::Prompt, case, run) }
//!     fn evaluate(evaluation: Value, at: &str) -> Verdict {
//!         let verdict = evaluate(Shape::Prompt, evaluation, at);
//!         // … turn a pass whose final text is not exactly the expected one into a failure
//!         verdict
//!     }
//! }
//!
//! export_preset!(Exact);
//! ```

mod cases;
mod collect_text;
mod observed;
mod snapshot;
mod summary;
mod translate_text;

use crate::PluginInfo;
use crate::preset::{PresetInfo, SuiteContract, SuiteField};
use serde_json::{Value, json};

pub use cases::translate;
pub use collect_text::collect_written;
pub use observed::collect;
pub use summary::evaluate;
pub use translate_text::translate_written;

/// The turn shape of an app preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `messages: [...]`, last one from the user.
    Chat,
    /// One `input` string.
    Prompt,
}

impl Shape {
    pub fn preset(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Prompt => "prompt",
        }
    }

    fn schema(self, kind: &str) -> String {
        format!("cautilus.app_{}_{kind}.v1", self.preset())
    }

    pub fn cases_schema(self) -> String {
        self.schema("test_cases")
    }

    pub fn observed_schema(self) -> String {
        self.schema("evaluation_inputs")
    }

    pub fn summary_schema(self) -> String {
        self.schema("evaluation_summary")
    }
}

/// The preset's `describe`.
pub fn describe(shape: Shape, plugin: PluginInfo) -> PresetInfo {
    PresetInfo {
        plugin,
        surface: "app".into(),
        preset: shape.preset().into(),
        cases_schema: shape.cases_schema(),
        observed_schema: shape.observed_schema(),
        summary_schema: shape.summary_schema(),
        counts: ["passed", "failed", "errored"].map(String::from).to_vec(),
    }
}

/// The preset's suite contract: the suite-level system prompt,
/// golden-file snapshots, its case shape and its packets' schemas (the
/// committed files under `schemas/presets/`).
pub fn contract(shape: Shape) -> SuiteContract {
    // `provider` and `model` are the host's (it picks the provider); the
    // preset reads them as the cases' defaults all the same.
    SuiteContract {
        fields: vec![SuiteField::new(
            "system",
            json!({"type": "string"}),
            "the system prompt of every case unless it gives its own",
        )],
        snapshots: true,
        ..SuiteContract::default()
    }
    .with_case_schema(match shape {
        Shape::Prompt => include_str!("../../schemas/app-prompt.case.schema.json"),
        Shape::Chat => include_str!("../../schemas/app-chat.case.schema.json"),
    })
    .with_input_fields(match shape {
        Shape::Prompt => &["input"],
        Shape::Chat => &["messages"],
    })
    .with_answer("/observed/finalText")
    .with_schema(
        shape.observed_schema(),
        match shape {
            Shape::Prompt => {
                include_str!("../../schemas/cautilus.app_prompt_evaluation_inputs.v1.schema.json")
            }
            Shape::Chat => {
                include_str!("../../schemas/cautilus.app_chat_evaluation_inputs.v1.schema.json")
            }
        },
    )
    .with_schema(
        shape.summary_schema(),
        match shape {
            Shape::Prompt => {
                include_str!("../../schemas/cautilus.app_prompt_evaluation_summary.v1.schema.json")
            }
            Shape::Chat => {
                include_str!("../../schemas/cautilus.app_chat_evaluation_summary.v1.schema.json")
            }
        },
    )
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Collects field errors and turns them into one `invalid-input` error.
#[derive(Default)]
pub(crate) struct Problems(Vec<crate::FieldError>);

impl Problems {
    pub(crate) fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(crate::FieldError {
            path: path.into(),
            message: message.into(),
        });
    }
}

/// `Some(text)` when `value` is a non-empty string.
pub(crate) fn non_empty_str(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}
