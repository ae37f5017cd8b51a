//! The preset trait and the `export_preset!` macro.
//!
//! A preset owns one (surface, preset) pair of the host's taxonomy. It works
//! one case at a time; the host batches cases, runs batches in parallel and
//! owns the packets' headers, counts and the suite recommendation:
//!
//! - [`Preset::translate`] validates and normalizes one case of a suite;
//! - [`Preset::collect`] turns a case and what the host ran for it into the
//!   case's observed evaluation (which the SDK then scores with
//!   [`Preset::evaluate`] in the same call);
//! - [`Preset::evaluate`] scores one observed evaluation (from `collect` or
//!   any other runner) into a [`Verdict`].
//!
//! Cases and evaluations are JSON ([`serde_json::Value`]); what the host must
//! reason about (invocation fields, status, recommendation) is typed.

use std::marker::PhantomData;

use serde_json::{Map, Value};

use crate::bindings::preset::exports::cautilus::plugin::{preset_api, preset_contract};
use crate::types::{FieldError, Message, PluginError};

/// A [`CasePlan`] with its body and values as JSON text, as the host takes it.
pub use preset_api::CasePlan as WrittenPlan;
pub use preset_api::{CaseRun, CaseStatus, PresetInfo, Recommendation, Sample};

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

/// A scored evaluation.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub case_id: String,
    pub status: CaseStatus,
    /// What this case asks of the suite recommendation (the host takes the
    /// most severe over all cases).
    pub recommendation: Recommendation,
    /// Extra `evaluationCounts` keys this case counts toward.
    pub tags: Vec<String>,
    /// One line: why this status.
    pub summary: String,
    /// The scored evaluation written to the summary packet.
    pub body: Value,
    /// How many of `body`'s first members the evaluation's own, unchanged
    /// ([`Verdict::carrying`]).
    carried: usize,
    /// The body as JSON text without `status` and `summary`, when the
    /// preset wrote it ([`Verdict::written`]).
    written: Option<String>,
}

impl Verdict {
    /// A verdict whose recommendation follows its status: `passed` →
    /// accept-now, `blocked`/`degraded`/`unchecked` → defer,
    /// `failed`/`errored` → reject. The status and summary are also written
    /// into `body`.
    ///
    /// Use [`CaseStatus::Unchecked`] for a case that was observed but
    /// declares nothing to check: it is not a pass, and a suite with one is
    /// not `accept-now`.
    pub fn new(
        case_id: impl Into<String>,
        status: CaseStatus,
        summary: impl Into<String>,
        mut body: Value,
    ) -> Self {
        let summary = summary.into();
        let case_id = case_id.into();
        if !body.is_object() {
            // Whatever the evaluation was, its summary entry is an object.
            let mut map = Map::new();
            if !case_id.is_empty() {
                map.insert("caseId".into(), Value::String(case_id.clone()));
            }
            body = Value::Object(map);
        }
        if let Value::Object(map) = &mut body {
            map.insert("status".into(), Value::String(status_name(status).into()));
            map.insert("summary".into(), Value::String(summary.clone()));
        }
        Self {
            case_id,
            status,
            recommendation: recommendation_of(status),
            tags: Vec::new(),
            summary,
            body,
            carried: 0,
            written: None,
        }
    }

    /// A verdict whose summary entry the preset wrote itself as JSON text
    /// (see [`Preset::collect_written`]): `body` is the text of an object
    /// without `status` and `summary`, which the SDK appends as
    /// [`Verdict::new`] sets them. The recommendation follows the status as
    /// in `new`; `body` (the value) is `Null`.
    pub fn written(
        case_id: impl Into<String>,
        status: CaseStatus,
        summary: impl Into<String>,
        body: String,
    ) -> Self {
        debug_assert!(body.starts_with('{') && body.ends_with('}'), "{body}");
        Self {
            case_id: case_id.into(),
            status,
            recommendation: recommendation_of(status),
            tags: Vec::new(),
            summary: summary.into(),
            body: Value::Null,
            carried: 0,
            written: Some(body),
        }
    }

    /// The summary entry's JSON text, as the host receives it.
    pub fn entry_text(&self) -> String {
        body_text(self, None, keeps_insertion_order())
    }

    /// Declares that the body's first `count` members are members of the
    /// scored evaluation, moved into it unchanged (same key, same value;
    /// `status` and `summary` excepted, which [`Verdict::new`] sets). When
    /// the SDK has just written the evaluation (a run's `collect`), it then
    /// copies those members' JSON text instead of writing them again. Keep
    /// the promise: a member edited after the move would be written as the
    /// evaluation had it (debug builds check and panic). Without serde_json's
    /// `preserve_order` (members sorted by key) the declaration is ignored.
    /// A body that is not an object (which `new` replaces with one holding
    /// `caseId`) carries nothing: call this only on an object body.
    pub fn carrying(mut self, count: usize) -> Self {
        self.carried = count;
        self
    }

    /// Counts this case toward `evaluationCounts.<tag>` too.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Asks at least `recommendation` of the suite (never lowers it).
    pub fn at_least(mut self, recommendation: Recommendation) -> Self {
        if severity(recommendation) > severity(self.recommendation) {
            self.recommendation = recommendation;
        }
        self
    }
}

/// What a case with `status` asks of the suite: `passed` → accept-now,
/// `blocked`/`degraded`/`unchecked` → defer, `failed`/`errored` → reject.
fn recommendation_of(status: CaseStatus) -> Recommendation {
    match status {
        CaseStatus::Passed => Recommendation::AcceptNow,
        CaseStatus::Blocked | CaseStatus::Degraded | CaseStatus::Unchecked => Recommendation::Defer,
        CaseStatus::Failed | CaseStatus::Errored => Recommendation::Reject,
    }
}

fn severity(recommendation: Recommendation) -> u8 {
    match recommendation {
        Recommendation::AcceptNow => 0,
        Recommendation::Defer => 1,
        Recommendation::Reject => 2,
    }
}

/// The name a status has in packets (`passed`, `failed`, …).
pub fn status_name(status: CaseStatus) -> &'static str {
    match status {
        CaseStatus::Passed => "passed",
        CaseStatus::Failed => "failed",
        CaseStatus::Errored => "errored",
        CaseStatus::Blocked => "blocked",
        CaseStatus::Degraded => "degraded",
        CaseStatus::Unchecked => "unchecked",
    }
}

/// A preset plugin. Each method handles one case; the SDK does the batching.
pub trait Preset: 'static {
    /// Identity, the (surface, preset) pair, the packet schema ids and the
    /// summary's count keys.
    fn info() -> PresetInfo;

    /// Validates and normalizes one case. `suite` holds the suite-level
    /// fields (everything but `cases`); `at` is the case's JSON path
    /// (`cases[3]`): report every problem at a path under it.
    fn translate(
        suite: &Map<String, Value>,
        case: &Value,
        at: &str,
    ) -> Result<CasePlan, Vec<FieldError>>;

    /// Optional fast path of [`Preset::translate`] for a preset whose
    /// suites are large: the plan of one case written straight from `case`,
    /// the case's JSON text as the host sends it (written by `serde_json`:
    /// compact, canonical escapes and numbers). It must give what
    /// `translate` gives ([`CasePlan::written`]), byte for byte; return
    /// `None` for any case it does not handle, and always for a case with a
    /// problem, and the SDK runs `translate`, which names the problems. The
    /// default handles none.
    fn translate_written(suite: &Map<String, Value>, case: &str) -> Option<WrittenPlan> {
        let _ = (suite, case);
        None
    }

    /// The observed evaluation of one case: `case` is the body from
    /// [`Preset::translate`], `run` what the host ran (one sample per repeat).
    fn collect(case: Value, run: CaseRun) -> Value;

    /// Optional fast path of [`Preset::collect`] for a preset whose cases
    /// are many: the observed evaluation's JSON text and its verdict
    /// ([`Verdict::written`]), written straight from `case`, the JSON text
    /// of the body [`Preset::translate`] gave, as the SDK wrote it (the
    /// SDK's [`crate::json`] writers help). It must give what `collect` and
    /// then `evaluate` give, byte for byte, members in the same order; read
    /// numbers with `serde_json`'s `float_roundtrip` if it copies any, so
    /// that the value path writes the same digits ([`Verdict::entry_text`]
    /// gives either verdict's entry for a test). Return `None` for any case
    /// it does not handle, and the SDK runs those two. The default handles
    /// none.
    fn collect_written(case: &str, run: &CaseRun) -> Option<(String, Verdict)> {
        let _ = (case, run);
        None
    }

    /// Scores one observed evaluation (always a JSON object: the SDK makes
    /// anything else an `errored` verdict); `at` is its JSON path
    /// (`evaluations[3]`). A malformed evaluation is an `errored` verdict
    /// naming the field; one that declares nothing to check is
    /// [`CaseStatus::Unchecked`], never `passed`.
    fn evaluate(evaluation: Value, at: &str) -> Verdict;

    /// The suite fields this preset reads, whether it uses snapshots, and
    /// the schemas it publishes. The default declares nothing: its suites
    /// may use only the host's own fields.
    fn contract() -> SuiteContract {
        SuiteContract::default()
    }
}

impl<P: Preset> preset_contract::Guest for PresetExport<P> {
    fn contract() -> preset_contract::SuiteContract {
        let contract = P::contract();
        preset_contract::SuiteContract {
            fields: contract
                .fields
                .into_iter()
                .map(|f| preset_contract::SuiteField {
                    name: f.name,
                    schema: json_text(&f.schema),
                    description: f.description,
                    default_from: f.default_from,
                    header: f.header,
                    overridable: f.overridable,
                })
                .collect(),
            case_schema: if contract.case_schema.is_null() {
                "{}".into()
            } else {
                json_text(&contract.case_schema)
            },
            snapshots: contract.snapshots,
            schemas: contract
                .schemas
                .into_iter()
                .map(|(id, schema)| preset_contract::SchemaDocument {
                    id,
                    schema: json_text(&schema),
                })
                .collect(),
        }
    }
}

#[doc(hidden)]
pub struct PresetExport<P>(PhantomData<P>);

fn json_text(value: &Value) -> String {
    crate::json_text::to_text(value)
}

impl<P: Preset> preset_api::Guest for PresetExport<P> {
    fn describe() -> PresetInfo {
        P::info()
    }

    fn translate(
        suite: String,
        cases: Vec<String>,
        first_index: u32,
    ) -> Result<Vec<preset_api::CasePlan>, PluginError> {
        let suite = match serde_json::from_str(&suite) {
            Ok(Value::Object(map)) => map,
            _ => return Err(PluginError::input("", "the suite must be a JSON object")),
        };
        let mut plans = Vec::with_capacity(cases.len());
        let mut problems = Vec::new();
        for (offset, text) in cases.iter().enumerate() {
            if let Some(mut plan) = P::translate_written(&suite, text) {
                if problems.is_empty() {
                    plan.repeat_count = plan.repeat_count.max(1);
                    plans.push(plan);
                }
                continue;
            }
            let at = format!("cases[{}]", first_index as usize + offset);
            let case: Value = match serde_json::from_str(text) {
                Ok(case) => case,
                Err(e) => {
                    problems.push(FieldError {
                        path: at,
                        message: format!("not valid JSON: {e}"),
                    });
                    continue;
                }
            };
            match P::translate(&suite, &case, &at) {
                Ok(plan) if problems.is_empty() => plans.push(plan.written()),
                Ok(_) => {}
                Err(errors) => problems.extend(errors),
            }
        }
        if problems.is_empty() {
            Ok(plans)
        } else {
            Err(PluginError::InvalidInput(problems))
        }
    }

    fn collect(
        cases: Vec<String>,
        runs: Vec<CaseRun>,
        first_index: u32,
    ) -> Result<Vec<preset_api::Collected>, PluginError> {
        if cases.len() != runs.len() {
            return Err(PluginError::input(
                "runs",
                format!(
                    "{} runs for {} cases; give one run per case, in order",
                    runs.len(),
                    cases.len()
                ),
            ));
        }
        cases
            .iter()
            .zip(runs)
            .enumerate()
            .map(|(offset, (text, run))| {
                if let Some((evaluation, verdict)) = P::collect_written(text, &run) {
                    return Ok(preset_api::Collected {
                        evaluation,
                        verdict: exported(verdict, None),
                    });
                }
                let case = serde_json::from_str(text).map_err(|e| {
                    PluginError::input(
                        "cases",
                        format!("case `{}` is not valid JSON: {e}", run.case_id),
                    )
                })?;
                let evaluation = P::collect(case, run);
                // Scored from the value itself: the same verdict `evaluate`
                // gives the text, without parsing it back.
                let written = crate::json_text::to_text_with_members(&evaluation);
                let at = format!("evaluations[{}]", first_index as usize + offset);
                let verdict = exported(verdict_of::<P>(evaluation, &at), Some(&written));
                Ok(preset_api::Collected {
                    evaluation: written.text,
                    verdict,
                })
            })
            .collect()
    }

    fn evaluate(
        evaluations: Vec<String>,
        first_index: u32,
    ) -> Result<Vec<preset_api::Verdict>, PluginError> {
        Ok(evaluations
            .iter()
            .enumerate()
            .map(|(offset, text)| {
                let at = format!("evaluations[{}]", first_index as usize + offset);
                let verdict = match serde_json::from_str::<Value>(text) {
                    Ok(evaluation) => verdict_of::<P>(evaluation, &at),
                    Err(e) => Verdict::new(
                        "",
                        CaseStatus::Errored,
                        format!("{at} is not valid JSON: {e}"),
                        Value::Null,
                    ),
                };
                exported(verdict, None)
            })
            .collect())
    }
}

/// The verdict of the evaluation at `at`: anything but an object is an
/// `errored` verdict.
fn verdict_of<P: Preset>(evaluation: Value, at: &str) -> Verdict {
    if evaluation.is_object() {
        P::evaluate(evaluation, at)
    } else {
        Verdict::new(
            packet::evaluation_id(&evaluation),
            CaseStatus::Errored,
            format!("{at} must be an object (an evaluation)"),
            Value::Null,
        )
    }
}

/// The verdict body's JSON text. `ordered`: objects keep insertion order,
/// so the body's first members are the ones the preset moved in first.
fn body_text(
    verdict: &Verdict,
    evaluation: Option<&crate::json_text::Written>,
    ordered: bool,
) -> String {
    if let Some(written) = &verdict.written {
        return with_status(written, verdict);
    }
    // `Verdict::new` sets these two after the preset moved its members.
    let carried = match &verdict.body {
        Value::Object(map) if ordered && verdict.carried > 0 => map
            .keys()
            .take(verdict.carried)
            .take_while(|key| !matches!(key.as_str(), "status" | "summary"))
            .count(),
        _ => 0,
    };
    match evaluation {
        Some(written) if carried > 0 => {
            crate::json_text::to_text_carrying(&verdict.body, carried, written)
        }
        _ => json_text(&verdict.body),
    }
}

/// `object` (an object's JSON text) with the verdict's `status` and
/// `summary` appended, as [`Verdict::new`] sets them.
fn with_status(object: &str, verdict: &Verdict) -> String {
    let members = object.strip_suffix('}').unwrap_or(object);
    let mut out = String::with_capacity(members.len() + verdict.summary.len() + 32);
    out.push_str(members);
    if !members.trim_end().ends_with('{') {
        out.push(',');
    }
    out.push_str("\"status\":");
    crate::json_text::write_str(&mut out, status_name(verdict.status));
    out.push_str(",\"summary\":");
    crate::json_text::write_str(&mut out, &verdict.summary);
    out.push('}');
    out
}

/// Whether objects keep their members in insertion order (serde_json's
/// `preserve_order`, which presets enable): only then are "the body's first
/// members" the ones the preset moved in first.
fn keeps_insertion_order() -> bool {
    static KEEPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPS.get_or_init(|| {
        let mut map = Map::new();
        map.insert("b".into(), Value::Null);
        map.insert("a".into(), Value::Null);
        map.keys().next().is_some_and(|key| key == "b")
    })
}

/// The verdict as the host takes it; `evaluation` is the scored
/// evaluation's text when the SDK just wrote it, so that members the body
/// carries are copied from it.
fn exported(
    verdict: Verdict,
    evaluation: Option<&crate::json_text::Written>,
) -> preset_api::Verdict {
    let body = body_text(&verdict, evaluation, keeps_insertion_order());
    preset_api::Verdict {
        case_id: verdict.case_id,
        status: verdict.status,
        recommendation: verdict.recommendation,
        tags: verdict.tags,
        summary: verdict.summary,
        body,
    }
}

/// Identity of a plugin from the crate's `Cargo.toml`.
#[macro_export]
macro_rules! plugin_info {
    ($($capability:expr),* $(,)?) => {
        $crate::PluginInfo {
            id: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            description: env!("CARGO_PKG_DESCRIPTION").to_string(),
            capabilities: vec![$($capability),*],
        }
    };
}

/// Exports a [`Preset`] as this component's preset world.
#[macro_export]
macro_rules! export_preset {
    ($preset:ty) => {
        const _: () = {
            type __CautilusPresetExport = $crate::__private::PresetExport<$preset>;
            $crate::__private::__export_preset_world!(
                __CautilusPresetExport with_types_in $crate::__private::preset_bindings
            );
        };
    };
}

/// Helpers for building packets.
pub mod packet {
    use serde_json::{Map, Value, json};

    /// The value at `path` (object keys, or array indices written as
    /// numbers), like [`Value::pointer`] without building a string per
    /// step: `at(&e, &["observed", "finalText"])`.
    pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
        path.iter().try_fold(value, |value, key| match value {
            Value::Object(map) => map.get(*key),
            Value::Array(list) => key.parse::<usize>().ok().and_then(|i| list.get(i)),
            _ => None,
        })
    }

    use super::CaseRun;
    use crate::types::Observation;

    /// Copies `keys` from `from` into `to`, skipping absent and null values.
    pub fn copy_fields(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
        for key in keys {
            if let Some(value) = from.get(*key).filter(|v| !v.is_null()) {
                to.insert((*key).to_string(), value.clone());
            }
        }
    }

    /// An evaluation's id: `evaluationId`, else `caseId`, else empty.
    pub fn evaluation_id(evaluation: &Value) -> String {
        evaluation
            .get("evaluationId")
            .or_else(|| evaluation.get("caseId"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    /// The first missing or empty string among `keys` of `value`.
    pub fn first_missing<'a>(value: &Value, keys: &[&'a str]) -> Option<&'a str> {
        keys.iter().copied().find(|key| {
            value
                .get(*key)
                .and_then(Value::as_str)
                .is_none_or(|s| s.trim().is_empty())
        })
    }

    /// The runtime fields of a run, as every observed evaluation records them:
    /// `provider`, `model`, `harness`, `mode` (what the first observation
    /// reports, else the host's fallbacks), `durationMs` (summed over samples;
    /// a provider-reported duration wins over the host's measurement),
    /// `costUsd` and `usage` (summed, present only when every sample reports
    /// them), `costSource` (`reported`, `derived:<table>`, or `mixed`),
    /// `retries` (summed, when any call was retried) and
    /// `error` (the first failed sample's).
    pub fn run_fields(run: &CaseRun) -> Map<String, Value> {
        let observations: Vec<&Observation> = run
            .samples
            .iter()
            .filter_map(|s| s.outcome.as_ref().ok())
            .collect();
        let first = observations.first();
        let pick = |reported: Option<&Option<String>>, fallback: Option<&str>| {
            reported
                .and_then(|r| r.as_deref())
                .filter(|r| !r.is_empty())
                .or(fallback)
                .map(|s| Value::String(s.to_string()))
        };
        let mut out = Map::new();
        let identity = [
            (
                "provider",
                pick(first.map(|o| &o.provider), Some(&run.provider)),
            ),
            ("model", pick(first.map(|o| &o.model), run.model.as_deref())),
            (
                "harness",
                pick(first.map(|o| &o.harness), Some(&run.harness)),
            ),
            ("mode", pick(first.map(|o| &o.mode), Some(&run.mode))),
        ];
        for (key, value) in identity {
            if let Some(value) = value {
                out.insert(key.into(), value);
            }
        }
        let duration: u64 = run
            .samples
            .iter()
            .map(|s| match &s.outcome {
                Ok(o) => o.duration_ms.unwrap_or(s.duration_ms),
                Err(_) => s.duration_ms,
            })
            .sum();
        out.insert("durationMs".into(), json!(duration));
        let all = observations.len() == run.samples.len() && !observations.is_empty();
        if all && let Some(cost) = observations.iter().map(|o| o.cost_usd).sum::<Option<f64>>() {
            out.insert("costUsd".into(), json!(cost));
            // One source when every sample agrees, else `mixed`.
            let sources: Vec<Option<&str>> = observations
                .iter()
                .map(|o| o.cost_source.as_deref())
                .collect();
            match sources.first() {
                Some(Some(first)) if sources.iter().all(|s| *s == Some(*first)) => {
                    out.insert("costSource".into(), json!(first));
                }
                Some(_) if sources.iter().any(Option::is_some) => {
                    out.insert("costSource".into(), json!("mixed"));
                }
                _ => {}
            }
        }
        let retries: u32 = observations.iter().filter_map(|o| o.retries).sum();
        if retries > 0 {
            out.insert("retries".into(), json!(retries));
        }
        if all && let Some(usage) = usage(&observations) {
            out.insert("usage".into(), usage);
        }
        if let Some(error) = run.samples.iter().find_map(|s| s.outcome.as_ref().err()) {
            out.insert("error".into(), json!(error));
        }
        out
    }

    /// Token accounting summed over observations; a field is present only when
    /// every observation captured it.
    fn usage(observations: &[&Observation]) -> Option<Value> {
        let usages: Option<Vec<_>> = observations.iter().map(|o| o.usage).collect();
        let usages = usages?;
        let sum = |f: fn(&crate::types::Usage) -> Option<u64>| -> Value {
            usages
                .iter()
                .map(f)
                .sum::<Option<u64>>()
                .map_or(Value::Null, |n| json!(n))
        };
        let mut out = Map::new();
        for (key, value) in [
            ("inputTokens", sum(|u| u.input_tokens)),
            ("outputTokens", sum(|u| u.output_tokens)),
            ("cachedInputTokens", sum(|u| u.cached_input_tokens)),
            ("reasoningTokens", sum(|u| u.reasoning_tokens)),
            ("llmCalls", sum(|u| u.llm_calls.map(u64::from))),
        ] {
            if !value.is_null() {
                out.insert(key.into(), value);
            }
        }
        Some(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json_text::to_text_with_members;

    #[test]
    fn a_written_verdict_crosses_with_its_own_text() {
        let body = r#"{"caseId":"c-1","match":false}"#;
        let verdict = Verdict::written("c-1", CaseStatus::Failed, "no \"x\"", body.into());
        assert!(verdict.body.is_null());
        let entry = r#"{"caseId":"c-1","match":false,"status":"failed","summary":"no \"x\""}"#;
        assert_eq!(verdict.entry_text(), entry);
        let crossed = exported(verdict, None);
        assert_eq!(crossed.body, entry);
        assert_eq!(crossed.recommendation, Recommendation::Reject);
        assert_eq!(crossed.summary, "no \"x\"");
        // An empty object takes the two members alone; a value is written
        // with them as `new` sets them.
        let verdict = Verdict::written("c-2", CaseStatus::Unchecked, "?", "{}".into());
        assert_eq!(
            verdict.entry_text(),
            r#"{"status":"unchecked","summary":"?"}"#
        );
        let crossed = exported(
            Verdict::new("c-2", CaseStatus::Unchecked, "?", json!({})),
            None,
        );
        assert_eq!(crossed.body, r#"{"status":"unchecked","summary":"?"}"#);
        assert_eq!(crossed.recommendation, Recommendation::Defer);
    }

    #[test]
    fn a_carried_body_is_written_as_serde_json_writes_it() {
        // Members the preset moved, then `status` and `summary`, which
        // `Verdict::new` sets over the evaluation's own: never copied.
        let evaluation = json!({
            "a": "say \"hi\"", "b": [1, {"c": null}], "status": "old", "summary": "old"
        });
        let written = to_text_with_members(&evaluation);
        let Value::Object(mut moved) = evaluation else {
            unreachable!()
        };
        moved.remove("summary");
        let verdict =
            Verdict::new("c-1", CaseStatus::Passed, "new", Value::Object(moved)).carrying(3);
        // Members sorted by key here (no `preserve_order` in this crate's
        // tests): a, b, status, summary, so the guard is what stops at
        // `status`.
        let text = body_text(&verdict, Some(&written), true);
        assert_eq!(text, serde_json::to_string(&verdict.body).unwrap());
        assert!(text.contains(r#""status":"passed""#), "{text}");
        // Unordered maps, or no evaluation text: written from the values.
        for text in [
            body_text(&verdict, Some(&written), false),
            body_text(&verdict, None, true),
        ] {
            assert_eq!(text, serde_json::to_string(&verdict.body).unwrap());
        }
    }
}
