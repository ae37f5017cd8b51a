//! JSON Schemas of the fixture and the packets, as a [`Catalog`]: the
//! host's own (generated from the Rust types in [`fixture`], [`packets`]
//! and [`experiment`]) and those each preset publishes in its suite
//! contract. The fixture schema is composed: the host's suite and case
//! fields, and per preset its declared suite fields and case shape.
//!
//! The generated files are committed under `schemas/` (host) and
//! `schemas/presets/` (the built-in presets'); an integration test fails
//! when they drift and checks that real runs' packets validate against
//! them. `cautilus schema <id>` prints one.

pub mod experiment;
pub mod fixture;
pub mod packets;

use schemars::{JsonSchema, schema_for};
use serde_json::{Map, Value, json};

use crate::fixture::SuiteContract;
use crate::taxonomy::Mode;

/// A record part (a packet's header or trailer, an experiment record's) as
/// the JSON object a packet writer starts or ends with.
pub fn object_of<T: serde::Serialize>(part: &T) -> Map<String, Value> {
    match serde_json::to_value(part) {
        Ok(Value::Object(members)) => members,
        _ => unreachable!("record parts are structs of plain data"),
    }
}

/// The fixture schema's id.
const FIXTURE: &str = "cautilus.evaluation_input.v1";
/// Shared by the repo/whole-repo summary and the multi-step summary.
const EVALUATION_SUMMARY: &str = "cautilus.evaluation_summary.v1";

/// The schemas the host owns, in a stable order.
const HOST_IDS: &[&str] = &[
    FIXTURE,
    EVALUATION_SUMMARY,
    "cautilus.config.v1",
    "cautilus.manifest.v1",
    "cautilus.project_summary.v1",
    "cautilus.experiment.v1",
    "cautilus.baseline.v1",
];

/// A preset's part of the catalog: its pair and its suite contract.
#[derive(Debug, Clone)]
pub struct PresetSchemas {
    pub surface: String,
    pub preset: String,
    pub contract: SuiteContract,
}

/// Every schema a host with these presets describes.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    presets: Vec<PresetSchemas>,
}

impl Catalog {
    pub fn new(presets: Vec<PresetSchemas>) -> Self {
        Self { presets }
    }

    /// The built-in presets' catalog.
    pub fn builtin(registry: &crate::plugin::Registry) -> Result<Self, crate::plugin::PluginError> {
        Ok(Self::new(
            registry
                .builtin_presets()?
                .into_iter()
                .map(|p| PresetSchemas {
                    surface: p.info.surface,
                    preset: p.info.preset,
                    contract: p.contract,
                })
                .collect(),
        ))
    }

    /// Every id: the fixture, the presets' packets, then the host's others.
    pub fn ids(&self) -> Vec<String> {
        let mut ids = vec![FIXTURE.to_string()];
        let published = self
            .presets
            .iter()
            .flat_map(|p| p.contract.schemas.iter().map(|(id, _)| id.as_str()));
        let evidence = crate::evidence::IDS.iter().copied();
        for id in published.chain(HOST_IDS.iter().copied()).chain(evidence) {
            if !ids.iter().any(|known| known == id) {
                ids.push(id.to_string());
            }
        }
        ids
    }

    /// The schema with id `id`, or `None` for an id nobody describes.
    pub fn schema(&self, id: &str) -> Option<Value> {
        let published = self.published(id);
        Some(match id {
            FIXTURE => fixture_schema(&self.presets),
            EVALUATION_SUMMARY => evaluation_summary(published),
            "cautilus.config.v1" => {
                let mut schema = generate::<crate::project::ProjectConfig>();
                schema["$id"] = json!(format!("https://cautilus.dev/schemas/{}", file_name(id)));
                schema["description"] = json!(
                    "A project's cautilus.toml (TOML; this schema describes its parsed form)."
                );
                schema
            }
            "cautilus.manifest.v1" => pinned(id, generate::<crate::project::Manifest>(), &[]),
            "cautilus.project_summary.v1" => {
                pinned(id, generate::<crate::project::run::ProjectSummary>(), &[])
            }
            "cautilus.experiment.v1" => pinned(id, generate::<experiment::ExperimentRecord>(), &[]),
            "cautilus.baseline.v1" => pinned(id, generate::<experiment::BaselineRecord>(), &[]),
            id if crate::evidence::IDS.contains(&id) => crate::evidence::schema(id)?,
            _ => return published.cloned(),
        })
    }

    /// The schema a preset publishes under `id`.
    fn published(&self, id: &str) -> Option<&Value> {
        self.presets.iter().find_map(|p| p.contract.schema(id))
    }
}

/// `cautilus.evaluation_summary.v1` names two packets: the multi-step run's
/// summary (the host's) and, as upstream does, a preset's summary that
/// uses the same id (repo/whole-repo). The schema accepts either; a `steps`
/// list tells them apart.
fn evaluation_summary(preset: Option<&Value>) -> Value {
    let id = EVALUATION_SUMMARY;
    let mut defs = Map::new();
    let mut any_of = Vec::new();
    if let Some(preset) = preset {
        let mut preset = preset.clone();
        if let Some(object) = preset.as_object_mut() {
            if let Some(Value::Object(nested)) = object.remove("$defs") {
                defs.extend(nested);
            }
            for key in ["$schema", "$id", "title"] {
                object.remove(key);
            }
        }
        defs.insert("PresetSummary".into(), preset);
        any_of.push(json!({"$ref": "#/$defs/PresetSummary"}));
    }
    let mut steps = pinned(id, generate::<packets::StepsSummary>(), &[]);
    if let Some(Value::Object(nested)) = steps.as_object_mut().and_then(|s| s.remove("$defs")) {
        defs.extend(nested);
    }
    for key in ["$schema", "$id", "title"] {
        steps.as_object_mut().map(|s| s.remove(key));
    }
    defs.insert("StepsSummary".into(), steps);
    any_of.push(json!({"$ref": "#/$defs/StepsSummary"}));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://cautilus.dev/schemas/{}", file_name(id)),
        "title": id,
        "description": "The summary packet of a preset that uses this id (repo/whole-repo), or of a multi-step run.",
        "anyOf": any_of,
        "$defs": defs,
    })
}

/// The file name a schema is committed under.
pub fn file_name(id: &str) -> String {
    format!("{id}.schema.json")
}

/// The JSON Schema of `T`.
pub fn generate<T: JsonSchema>() -> Value {
    schema_for!(T).to_value()
}

/// Sets the schema's `$id`/title and pins top-level string properties
/// (`schemaVersion`, `surface`, `preset`) to constants.
pub fn pinned(id: &str, mut schema: Value, pins: &[(&str, &str)]) -> Value {
    schema["$id"] = json!(format!("https://cautilus.dev/schemas/{}", file_name(id)));
    schema["title"] = json!(id);
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert("schemaVersion".into(), json!({"const": id}));
        for (key, value) in pins {
            properties.insert((*key).into(), json!({"const": value}));
        }
    }
    schema
}

/// The fixture: one variant per preset (the host's suite fields, the
/// preset's declared ones, its cases: the preset's case shape plus the
/// host's case fields), a multi-step fixture, or a fixture that extends a
/// base (and may be partial).
fn fixture_schema(presets: &[PresetSchemas]) -> Value {
    use fixture::{Agent, CaseHostFields, StepsFixture, SuiteFields};
    let id = FIXTURE;
    let mut defs = Map::new();
    let mut take = |mut schema: Value| -> Value {
        if let Some(object) = schema.as_object_mut() {
            if let Some(Value::Object(nested)) = object.remove("$defs") {
                defs.extend(nested);
            }
            object.remove("$schema");
            object.remove("title");
        }
        schema
    };
    let suite = take(generate::<SuiteFields>());
    let case_host = take(generate::<CaseHostFields>());
    let agent = take(generate::<Agent>());
    let mut steps = take(generate::<StepsFixture>());
    steps["properties"]["schemaVersion"] = json!({"const": id});

    let mut variants = Vec::new();
    let mut preset_defs = Map::new();
    for preset in presets {
        let (surface, name) = (preset.surface.as_str(), preset.preset.as_str());
        let key = format!("{surface}-{name}");
        let mut properties = suite["properties"].as_object().cloned().unwrap_or_default();
        properties.insert("schemaVersion".into(), json!({"const": id}));
        properties.insert("surface".into(), json!({"const": surface}));
        properties.insert("preset".into(), json!({"const": name}));
        // The host's fields scoped by the pair's mode (see fixture/suite.rs).
        match crate::taxonomy::lookup(surface, name).map(|pair| pair.mode) {
            Ok(Mode::Workspace) => {
                properties.insert(
                    "agent".into(),
                    json!({"anyOf": [{"$ref": "#/$defs/Agent"}, {"type": "null"}]}),
                );
            }
            Ok(Mode::Messaging) => {
                properties.insert("provider".into(), json!({"type": ["string", "null"], "description": "The provider the cases are sent to (`anthropic`, `openai`, a pack's …) unless a case names its own."}));
                properties.insert("model".into(), json!({"type": ["string", "null"], "description": "The model the cases ask for unless a case names its own."}));
                properties.insert("settings".into(), settings_schema());
                properties.insert("exec".into(), exec_schema());
                properties.insert("http".into(), http_schema());
            }
            Err(_) => {}
        }
        for field in &preset.contract.fields {
            properties.insert(
                field.name.clone(),
                json!({"anyOf": [field.schema.get(), {"type": "null"}], "description": field.description}),
            );
        }
        // The preset's case shape is embedded as its own resource (its
        // `$id`), so its internal `$ref`s resolve within it.
        let mut case = match preset.contract.case_schema.get() {
            Value::Null => json!({}),
            schema => schema.clone(),
        };
        case["$id"] = json!(format!(
            "https://cautilus.dev/schemas/presets/{key}.case.schema.json"
        ));
        preset_defs.insert(format!("{key}-case-shape"), case);
        let mut case_fields = case_host["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        case_fields.remove("$schema");
        case_fields.insert("settings".into(), settings_schema());
        preset_defs.insert(
            format!("{key}-case"),
            json!({
                "description": format!("One {surface}/{name} case: the preset's fields and the host's."),
                "type": "object",
                "$ref": format!("#/$defs/{key}-case-shape"),
                "properties": case_fields,
                "unevaluatedProperties": false,
            }),
        );
        let cases = json!({"anyOf": [
            {"type": "array", "items": {"$ref": format!("#/$defs/{key}-case")}},
            {"type": "string", "description": "A path (relative to this file): a directory with one subdirectory per case (each with `case.yaml`), or a `.yaml`/`.json`/`.jsonl`/`.csv` file of cases."},
            {"type": "null"}
        ]});
        properties.insert("cases".into(), cases.clone());
        properties.insert("tests".into(), cases);
        preset_defs.insert(
            format!("{key}-fixture"),
            json!({
                "description": format!("A {surface}/{name} fixture."),
                "type": "object",
                "properties": properties,
                "additionalProperties": preset.contract.undeclared,
            }),
        );
        variants.push(json!({"$ref": format!("#/$defs/{key}-fixture")}));
    }
    defs.insert("Agent".into(), agent);
    defs.insert("StepsFixture".into(), steps);
    defs.extend(preset_defs);
    variants.push(json!({"$ref": "#/$defs/StepsFixture"}));
    variants.push(json!({
        "description": "A fixture that extends a base: any field may come from the base.",
        "type": "object",
        "required": ["extends"],
        "properties": {"extends": {"type": "string"}}
    }));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://cautilus.dev/schemas/{}", file_name(id)),
        "title": id,
        "description": "A cautilus fixture: suite fields and the cases of one (surface, preset) pair.",
        "anyOf": variants,
        "$defs": defs,
    })
}

/// `settings` (suite, variant, case): the generation settings of the
/// model under test, as `crate::fixture::settings` checks them.
fn settings_schema() -> Value {
    let stop = json!({"type": "string", "minLength": 1, "maxLength": 256});
    json!({
        "description": "Generation settings of the model under test; a variant's override the suite's and a case's win over both, key by key. A provider that cannot apply one says so (run.json `settingsNotApplied`).",
        "type": ["object", "null"],
        "additionalProperties": false,
        "properties": {
            "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
            "maxTokens": {"type": ["integer", "null"], "minimum": 1, "maximum": 1_000_000},
            "topP": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
            "seed": {"type": ["integer", "null"]},
            "stop": {"anyOf": [stop, {"type": "array", "minItems": 1, "maxItems": 4, "items": stop}, {"type": "null"}]}
        }
    })
}

/// The `exec` field (`crate::fixture::exec_field`).
fn exec_schema() -> Value {
    json!({
        "description": "The program the `exec` provider runs for each case: the case as JSON on stdin, the answer on stdout. `./x` is a file next to the fixture (inside its root); a program on PATH or an absolute path runs only when the run grants it (`--grant-program`).",
        "type": ["object", "null"],
        "additionalProperties": false,
        "required": ["command"],
        "properties": {
            "command": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "The program, then its arguments."},
            "output": {"enum": ["text", "json"], "description": "`text` (default): stdout is the answer; `json`: stdout is {finalText, usage?, costUsd?, toolCalls?, model?, structured?}."},
            "timeoutMs": {"type": "integer", "minimum": 1, "description": "The program's time limit (default: --timeout-ms)."}
        }
    })
}

fn http_schema() -> Value {
    let path = |what: &str| json!({"type": "string", "description": format!("The JSONPath (RFC 9535) of {what} in the response (in each event or line of a stream).")});
    json!({
        "description": "The service the `http` provider sends each case to. Strings of `url` and `body` may hold placeholders over the case: `${input}`, `${input.<path>}`, `${messages}`, `${message}` (the last user message), `${system}`, `${model}`, `${caseId}`, `${settings.<name>}`, `${session.id}`; a string that is one placeholder takes its JSON value.",
        "type": ["object", "null"],
        "additionalProperties": false,
        "required": ["url", "answer"],
        "properties": {
            "url": {"type": "string", "description": "http:// or https:// URL; its host is granted to the provider (placeholders may follow the host)."},
            "method": {"enum": ["POST", "GET", "post", "get"], "description": "POST (default) or GET."},
            "headers": {"type": "object", "description": "Header values: text, `{secret: NAME}` or `{bearerSecret: NAME}` (a secret granted with --grant-secret, sent only to a host granted with --grant-http). A header carrying a credential must name a secret.",
                "additionalProperties": {"anyOf": [
                    {"type": "string"},
                    {"type": "object", "additionalProperties": false, "required": ["secret"], "properties": {"secret": {"type": "string"}}},
                    {"type": "object", "additionalProperties": false, "required": ["bearerSecret"], "properties": {"bearerSecret": {"type": "string"}}}
                ]}},
            "body": {"description": "The JSON request body, a template over the case."},
            "answer": path("the answer's text"),
            "usage": {"type": "object", "additionalProperties": false, "description": "JSONPaths of the usage counts.",
                "properties": {"inputTokens": path("input tokens"), "outputTokens": path("output tokens"), "cachedInputTokens": path("cached input tokens"), "reasoningTokens": path("reasoning tokens"), "llmCalls": path("model calls")}},
            "costUsd": path("the call's cost in USD (recorded as reported)"),
            "toolCalls": path("the list of tool calls ({name, arguments?, output?, succeeded?, durationMs?})"),
            "stream": {"enum": ["none", "sse", "ndjson"], "description": "none (default): one JSON body; sse: server-sent events; ndjson: a JSON document per line. A stream's answer is what `answer` finds in each, joined."},
            "session": {"type": "object", "additionalProperties": false, "required": ["idPath"], "description": "One request per user turn of a multi-turn case; the session id read from the first answer (or the start request's) and sent as `${session.id}`.",
                "properties": {
                    "idPath": path("the session id"),
                    "start": {"type": "object", "additionalProperties": false, "description": "A request that opens the session before its first turn, on the service's host; the id is read from its answer.",
                        "properties": {
                            "url": {"type": "string", "description": "Where it goes (default: http.url); placeholders but ${session.id}."},
                            "method": {"enum": ["POST", "GET", "post", "get"], "description": "POST (default) or GET."},
                            "body": {"description": "Its JSON body, a template over the case."}
                        }}
                }},
            "timeoutMs": {"type": "integer", "minimum": 1, "description": "One request's time limit (default and ceiling: --timeout-ms)."}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::SuiteField;

    fn catalog() -> Catalog {
        Catalog::new(vec![PresetSchemas {
            surface: "app".into(),
            preset: "prompt".into(),
            contract: SuiteContract {
                fields: vec![SuiteField {
                    name: "system".into(),
                    schema: json!({"type": "string"}).into(),
                    description: "the system prompt".into(),
                    default_from: None,
                    header: false,
                    overridable: true,
                }],
                case_schema: json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}).into(),
                snapshots: true,
                schemas: vec![(
                    "cautilus.app_prompt_evaluation_inputs.v1".into(),
                    json!({"title": "cautilus.app_prompt_evaluation_inputs.v1"}).into(),
                )],
                ..SuiteContract::default()
            },
        }])
    }

    #[test]
    fn every_id_has_a_schema_pinned_to_it() {
        let catalog = catalog();
        for id in catalog.ids() {
            let schema = catalog.schema(&id).unwrap_or_else(|| panic!("{id}"));
            assert_eq!(schema["title"], id.as_str());
        }
        assert!(
            catalog
                .ids()
                .contains(&"cautilus.app_prompt_evaluation_inputs.v1".to_string())
        );
        assert!(catalog.schema("cautilus.unknown.v1").is_none());
    }

    #[test]
    fn the_fixture_composes_each_presets_fields_and_case_shape() {
        let schema = catalog().schema(FIXTURE).unwrap();
        let fixture = &schema["$defs"]["app-prompt-fixture"];
        assert_eq!(fixture["properties"]["preset"]["const"], "prompt");
        assert_eq!(fixture["additionalProperties"], false);
        assert_eq!(
            fixture["properties"]["system"]["description"],
            "the system prompt"
        );
        // The host's messaging-mode fields, and no workspace-mode one.
        assert!(fixture["properties"]["provider"].is_object());
        assert!(fixture["properties"]["agent"].is_null());
        let case = &schema["$defs"]["app-prompt-case"];
        assert_eq!(case["unevaluatedProperties"], false);
        assert!(case["properties"]["assertions"].is_object());
        assert_eq!(
            schema["$defs"]["app-prompt-case-shape"]["required"][0],
            "input"
        );
    }
}
