//! What a preset declares about its suites: the suite fields it reads,
//! the shape of a case, whether it uses snapshots, the schemas it publishes.

use serde_json::Value;

#[cfg(doc)]
use super::{Preset, PresetInfo};

/// What a preset declares about its suites (see [`Preset::contract`]): the
/// host validates every suite against it, so it knows no preset's fields.
#[derive(Debug, Clone, Default)]
pub struct SuiteContract {
    pub fields: Vec<SuiteField>,
    /// JSON Schema of one fixture case's own fields (the host adds its own
    /// case fields and closes the object); `Null` publishes none.
    pub case_schema: Value,
    /// A case's `expected.snapshot` names a golden file the host reads into
    /// `expected.snapshotText` (and rewrites on `--update-snapshots`).
    pub snapshots: bool,
    /// JSON Schemas the preset publishes, by schema id.
    pub schemas: Vec<(String, Value)>,
    /// The case fields holding what a case asks, most telling first: a
    /// case without a `caseId` gets an id derived from the first it has.
    pub input_fields: Vec<String>,
    /// Where an evaluation of its packets holds the answer's text, as a
    /// JSON Pointer into the evaluation (`/observed/finalText`); `None`:
    /// its evaluations carry none.
    pub answer: Option<String>,
}

impl SuiteContract {
    /// Publishes a JSON Schema under `id` (usually a packet schema id of
    /// [`PresetInfo`]), from its text (`include_str!` of a committed file).
    ///
    /// # Panics
    /// When `text` is not JSON: a build-time asset, caught by the first test.
    pub fn with_schema(mut self, id: impl Into<String>, text: &str) -> Self {
        let id = id.into();
        let schema = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("the schema published as `{id}` is not JSON: {e}"));
        self.schemas.push((id, schema));
        self
    }

    /// Names the case fields holding what a case asks, most telling first
    /// (a case without a `caseId` gets an id derived from the first it has).
    pub fn with_input_fields(mut self, fields: &[&str]) -> Self {
        self.input_fields = fields.iter().map(|f| (*f).to_string()).collect();
        self
    }

    /// Says where an evaluation holds the answer's text: a JSON Pointer into
    /// the evaluation, e.g. `/observed/finalText`. The host shows it as a
    /// cell's `output` and hands it back on `--reuse-outputs`.
    pub fn with_answer(mut self, pointer: impl Into<String>) -> Self {
        self.answer = Some(pointer.into());
        self
    }

    /// Sets the JSON Schema of one fixture case's own fields, from its text.
    ///
    /// # Panics
    /// When `text` is not JSON.
    pub fn with_case_schema(mut self, text: &str) -> Self {
        self.case_schema = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("the case schema is not JSON: {e}"));
        self
    }
}

/// A suite-level field a preset reads.
#[derive(Debug, Clone)]
pub struct SuiteField {
    pub name: String,
    /// JSON Schema of the value.
    pub schema: Value,
    pub description: String,
    /// Filled from this other suite field when the fixture leaves it out.
    pub default_from: Option<String>,
    /// Copied into every packet's header.
    pub header: bool,
    /// An experiment's variant may set it.
    pub overridable: bool,
}

impl SuiteField {
    /// A field an experiment's variant may override, not in the header, with
    /// no default.
    pub fn new(name: impl Into<String>, schema: Value, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            schema,
            description: description.into(),
            default_from: None,
            header: false,
            overridable: true,
        }
    }

    /// A field identifying the suite: copied into every packet's header, and
    /// not overridable by a variant.
    pub fn identity(mut self) -> Self {
        self.header = true;
        self.overridable = false;
        self
    }

    /// Filled from suite field `other` when left out.
    pub fn default_from(mut self, other: impl Into<String>) -> Self {
        self.default_from = Some(other.into());
        self
    }
}
