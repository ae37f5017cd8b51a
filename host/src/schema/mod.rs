//! JSON Schemas of the fixture and of the packets the built-in presets write,
//! generated from the Rust types in [`fixture`] and [`packets`].
//!
//! The generated files are committed under `schemas/` (one
//! `<schemaVersion>.schema.json` per schema); an integration test fails when
//! they drift from these types and checks that real runs' packets validate
//! against them. `cautilus schema <id>` prints one.

pub mod experiment;
pub mod fixture;
pub mod packets;

use schemars::{JsonSchema, schema_for};
use serde_json::{Value, json};

use packets::{
    AppEvaluation, AppScored, ObservedPacket, SkillEvaluation, SkillScored, SummaryPacket,
    WholeRepoEvaluation, WholeRepoScored,
};

/// Every schema id this host describes, in a stable order.
pub const IDS: &[&str] = &[
    "cautilus.evaluation_input.v1",
    "cautilus.app_chat_evaluation_inputs.v1",
    "cautilus.app_chat_evaluation_summary.v1",
    "cautilus.app_prompt_evaluation_inputs.v1",
    "cautilus.app_prompt_evaluation_summary.v1",
    "cautilus.evaluation_observed.v1",
    "cautilus.evaluation_summary.v1",
    "cautilus.skill_evaluation_inputs.v1",
    "cautilus.skill_evaluation_summary.v1",
    "cautilus.config.v1",
    "cautilus.manifest.v1",
    "cautilus.project_summary.v1",
    "cautilus.experiment.v1",
    "cautilus.baseline.v1",
];

/// The schema with id `id`, or `None` for an id this host does not describe.
pub fn schema(id: &str) -> Option<Value> {
    let pair = |surface, preset| [("surface", surface), ("preset", preset)];
    let packet = |schema: Value, surface, preset| {
        let mut schema = pinned(id, schema, &pair(surface, preset));
        let kind = if id.ends_with("summary.v1") {
            "summary"
        } else {
            "observed"
        };
        schema["description"] = json!(format!(
            "The {kind} packet of {surface}/{preset}, as cautilus writes it."
        ));
        schema
    };
    Some(match id {
        "cautilus.evaluation_input.v1" => fixture_schema(),
        "cautilus.app_chat_evaluation_inputs.v1" => {
            packet(generate::<ObservedPacket<AppEvaluation>>(), "app", "chat")
        }
        "cautilus.app_chat_evaluation_summary.v1" => {
            packet(generate::<SummaryPacket<AppScored>>(), "app", "chat")
        }
        "cautilus.app_prompt_evaluation_inputs.v1" => {
            packet(generate::<ObservedPacket<AppEvaluation>>(), "app", "prompt")
        }
        "cautilus.app_prompt_evaluation_summary.v1" => {
            packet(generate::<SummaryPacket<AppScored>>(), "app", "prompt")
        }
        "cautilus.evaluation_observed.v1" => packet(
            generate::<ObservedPacket<WholeRepoEvaluation>>(),
            "repo",
            "whole-repo",
        ),
        "cautilus.evaluation_summary.v1" => evaluation_summary(packet(
            generate::<SummaryPacket<WholeRepoScored>>(),
            "repo",
            "whole-repo",
        )),
        "cautilus.skill_evaluation_inputs.v1" => packet(
            generate::<ObservedPacket<SkillEvaluation>>(),
            "repo",
            "skill",
        ),
        "cautilus.skill_evaluation_summary.v1" => {
            packet(generate::<SummaryPacket<SkillScored>>(), "repo", "skill")
        }
        "cautilus.config.v1" => {
            let mut schema = generate::<crate::project::ProjectConfig>();
            schema["$id"] = json!(format!("https://cautilus.dev/schemas/{}", file_name(id)));
            schema["description"] =
                json!("A project's cautilus.toml (TOML; this schema describes its parsed form).");
            schema
        }
        "cautilus.manifest.v1" => pinned(id, generate::<crate::project::Manifest>(), &[]),
        "cautilus.project_summary.v1" => {
            pinned(id, generate::<crate::project::run::ProjectSummary>(), &[])
        }
        "cautilus.experiment.v1" => pinned(id, generate::<experiment::ExperimentRecord>(), &[]),
        "cautilus.baseline.v1" => pinned(id, generate::<experiment::BaselineRecord>(), &[]),
        _ => return None,
    })
}

/// `cautilus.evaluation_summary.v1` names two packets: the repo/whole-repo
/// summary and the summary of a multi-step run (as upstream does). The
/// schema accepts either; a `steps` list tells them apart.
fn evaluation_summary(whole_repo: Value) -> Value {
    let id = "cautilus.evaluation_summary.v1";
    let mut whole_repo = whole_repo;
    let mut defs = whole_repo
        .as_object_mut()
        .and_then(|s| s.remove("$defs"))
        .and_then(|d| d.as_object().cloned())
        .unwrap_or_default();
    for key in ["$schema", "$id", "title", "description"] {
        whole_repo.as_object_mut().map(|s| s.remove(key));
    }
    let mut steps = pinned(id, generate::<packets::StepsSummary>(), &[]);
    if let Some(nested) = steps.as_object_mut().and_then(|s| s.remove("$defs")) {
        defs.extend(nested.as_object().cloned().unwrap_or_default());
    }
    for key in ["$schema", "$id", "title"] {
        steps.as_object_mut().map(|s| s.remove(key));
    }
    defs.insert("WholeRepoSummary".into(), whole_repo);
    defs.insert("StepsSummary".into(), steps);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://cautilus.dev/schemas/{}", file_name(id)),
        "title": id,
        "description": "The summary packet of repo/whole-repo, or of a multi-step run.",
        "anyOf": [
            {"$ref": "#/$defs/WholeRepoSummary"},
            {"$ref": "#/$defs/StepsSummary"}
        ],
        "$defs": defs,
    })
}

/// The file name a schema is committed under.
pub fn file_name(id: &str) -> String {
    format!("{id}.schema.json")
}

fn generate<T: JsonSchema>() -> Value {
    schema_for!(T).to_value()
}

/// Sets the schema's `$id`/title and pins top-level string properties
/// (`schemaVersion`, `surface`, `preset`) to constants.
fn pinned(id: &str, mut schema: Value, pins: &[(&str, &str)]) -> Value {
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

/// The fixture: one of the four preset shapes, told apart by `surface` and
/// `preset`, or a fixture that extends a base (and may be partial).
fn fixture_schema() -> Value {
    use fixture::{AppChatFixture, AppPromptFixture, SkillFixture, StepsFixture, WholeRepoFixture};
    let id = "cautilus.evaluation_input.v1";
    let variants = [
        (generate::<AppPromptFixture>(), "app", "prompt"),
        (generate::<AppChatFixture>(), "app", "chat"),
        (generate::<WholeRepoFixture>(), "repo", "whole-repo"),
        (generate::<SkillFixture>(), "repo", "skill"),
    ];
    let mut defs = serde_json::Map::new();
    let mut one_of = Vec::new();
    for (mut schema, surface, preset) in variants {
        let title = schema["title"].as_str().unwrap_or_default().to_string();
        if let Some(nested) = schema.as_object_mut().and_then(|s| s.remove("$defs")) {
            defs.extend(nested.as_object().cloned().unwrap_or_default());
        }
        for key in ["$schema", "title"] {
            schema.as_object_mut().map(|s| s.remove(key));
        }
        let schema = pinned(id, schema, &[("surface", surface), ("preset", preset)]);
        let mut schema = schema;
        schema.as_object_mut().map(|s| {
            s.remove("$id");
            s.remove("title")
        });
        one_of.push(json!({"$ref": format!("#/$defs/{title}")}));
        defs.insert(title, schema);
    }
    let mut steps = generate::<StepsFixture>();
    if let Some(nested) = steps.as_object_mut().and_then(|s| s.remove("$defs")) {
        defs.extend(nested.as_object().cloned().unwrap_or_default());
    }
    for key in ["$schema", "title"] {
        steps.as_object_mut().map(|s| s.remove(key));
    }
    steps["properties"]["schemaVersion"] = json!({"const": id});
    defs.insert("StepsFixture".into(), steps);
    one_of.push(json!({"$ref": "#/$defs/StepsFixture"}));
    one_of.push(json!({
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
        "anyOf": one_of,
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_has_a_schema_pinned_to_it() {
        for id in IDS {
            let schema = schema(id).unwrap_or_else(|| panic!("{id}"));
            assert_eq!(schema["title"], *id);
        }
        assert!(schema("cautilus.unknown.v1").is_none());
    }

    #[test]
    fn fixture_variants_pin_their_pair() {
        let schema = schema("cautilus.evaluation_input.v1").unwrap();
        let prompt = &schema["$defs"]["AppPromptFixture"];
        assert_eq!(prompt["properties"]["preset"]["const"], "prompt");
        assert_eq!(prompt["additionalProperties"], false);
        assert!(
            schema["$defs"]["AppPromptCase"]["required"]
                .as_array()
                .unwrap()
                .contains(&json!("input"))
        );
    }
}
