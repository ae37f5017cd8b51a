//! `eval evaluate`: scores an observed packet written by any runner.
//!
//! Which preset scores the packet:
//!
//! - its `schemaVersion` names the preset that reads it (each built-in
//!   preset declares its `observed-schema` in `describe`);
//! - when the packet also declares its `surface`/`preset`, that pair must be
//!   a pair of the host's taxonomy, and its preset must be the one that
//!   reads the `schemaVersion`. A packet that says it is app/chat but carries
//!   repo/whole-repo's schema id is refused (exit 2) naming both, instead of
//!   being scored by whichever preset the id happens to select;
//! - an evaluation that declares its own `surface`/`preset` must agree too.
//!
//! The evaluations are then scored by that preset in batches, in parallel,
//! and the summary packet is streamed in order, as `eval test` does.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::files::{self, PacketWriter};
use crate::eval::options::{batch_size, preset_limits};
use crate::eval::run::packets::{header, preset_info, write_verdicts};
use crate::eval::run::suite_outcome::SuiteOutcome;
use crate::eval::run::workers::{never, ranges, run_ordered};
use crate::eval::verdict::tally::Tally;
use crate::plugin::bindings::preset_api::PresetInfo;
use crate::plugin::preset::PresetSession;
use crate::plugin::{Plugin, PluginError, Registry};
use crate::taxonomy;

/// Options of `eval evaluate`.
#[derive(Debug, Clone)]
pub struct EvaluateOptions {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub jobs: usize,
}

/// Scores an observed packet written by any runner.
pub fn evaluate(registry: &Registry, options: &EvaluateOptions) -> Result<SuiteOutcome, EvalError> {
    let input_error = |message: String| EvalError::Input {
        path: options.input.clone(),
        message,
    };
    let text = std::fs::read_to_string(&options.input)
        .map_err(|e| input_error(format!("cannot read: {e}")))?;
    let observed: Value = serde_json::from_str(&text).map_err(|e| {
        input_error(format!(
            "not valid JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    drop(text);
    let Value::Object(mut fields) = observed else {
        return Err(input_error(format!(
            "an observed packet must be a JSON object with `schemaVersion` and `evaluations`, got {}",
            kind(&observed)
        )));
    };
    let preset = select_preset(registry, &fields).map_err(|e| match e {
        Refusal::Input(message) => input_error(message),
        Refusal::Plugin(e) => e.into(),
    })?;
    let info = preset_info(&preset);
    let evaluations = match fields.remove("evaluations") {
        Some(Value::Array(list)) if !list.is_empty() => list,
        Some(Value::Array(_)) | Some(Value::Null) | None => {
            return Err(input_error(
                "evaluations: is missing or empty: an observed packet needs at least one evaluation"
                    .into(),
            ));
        }
        Some(other) => {
            return Err(input_error(format!(
                "evaluations: must be a list of evaluations, got {}",
                kind(&other)
            )));
        }
    };
    let problems = evaluation_pairs(&evaluations, &info);
    if !problems.is_empty() {
        return Err(EvalError::Cases {
            file: options.input.clone(),
            problems,
        });
    }
    let evaluations: Vec<String> = evaluations.iter().map(Value::to_string).collect();
    // The packet declared this pair or none; the summary always records it.
    fields.insert("surface".into(), json!(info.surface));
    fields.insert("preset".into(), json!(info.preset));

    let scratch = match &options.output {
        Some(_) => None,
        None => Some(tempfile::tempdir().map_err(|source| EvalError::Write {
            path: std::env::temp_dir(),
            source,
        })?),
    };
    let summary_path = match (&options.output, &scratch) {
        (Some(path), _) => path.clone(),
        (None, Some(dir)) => dir.path().join("eval-summary.json"),
        (None, None) => unreachable!("a scratch dir exists without --output"),
    };
    let mut summary_out = PacketWriter::create(
        &summary_path,
        &header(
            &info.summary_schema,
            &fields,
            &crate::eval::run::packets::preset_description(&preset).contract,
        ),
        "evaluations",
    )?;
    drop(fields);
    let mut tally = Tally::new(&info.counts);
    run_ordered(
        ranges(
            evaluations.len(),
            batch_size(evaluations.len(), options.jobs),
        ),
        options.jobs,
        never(),
        || PresetSession::new(preset.clone(), preset_limits()).map_err(EvalError::from),
        |session, range, _| Ok(session.evaluate(&evaluations[range.clone()], range.start)?),
        |verdicts| write_verdicts(&mut summary_out, &mut tally, &verdicts),
    )
    .map_err(|e| match e {
        EvalError::Plugin(PluginError::InvalidInput { errors, .. }) => EvalError::Cases {
            file: options.input.clone(),
            problems: errors,
        },
        other => other,
    })?;
    summary_out.finish(&crate::schema::object_of(
        &tally.trailer(files::now_rfc3339()),
    ))?;
    let total = evaluations.len();
    Ok(SuiteOutcome {
        tally,
        summary_path,
        output_dir: None,
        outputs: Vec::new(),
        interrupted: None,
        finished: total,
        total,
        _scratch: scratch,
        _claim: None,
    })
}

/// Why no preset can score a packet.
enum Refusal {
    /// The packet is at fault (exit 2, with the file named by the caller).
    Input(String),
    Plugin(PluginError),
}

impl From<PluginError> for Refusal {
    fn from(e: PluginError) -> Self {
        Self::Plugin(e)
    }
}

/// What a packet (or an evaluation) says about its own pair.
#[derive(Debug, PartialEq)]
enum Declared<'a> {
    Nothing,
    Surface(&'a str),
    Preset(&'a str),
    Pair(&'a str, &'a str),
}

impl Declared<'_> {
    /// How a message names what was declared: `app/chat`, `surface `app``.
    fn describe(&self) -> String {
        match self {
            Self::Nothing => "no surface/preset".into(),
            Self::Surface(surface) => format!("surface `{}`", excerpt(surface)),
            Self::Preset(preset) => format!("preset `{}`", excerpt(preset)),
            Self::Pair(surface, preset) => format!("{}/{}", excerpt(surface), excerpt(preset)),
        }
    }

    /// The member a mismatch is reported at.
    fn member(&self, info: &PresetInfo) -> &'static str {
        match self {
            Self::Pair(surface, _) if *surface != info.surface => "surface",
            Self::Surface(_) => "surface",
            _ => "preset",
        }
    }

    /// Whether the preset of `info` is what was declared.
    fn agrees_with(&self, info: &PresetInfo) -> bool {
        match self {
            Self::Nothing => true,
            Self::Surface(surface) => *surface == info.surface,
            Self::Preset(preset) => *preset == info.preset,
            Self::Pair(surface, preset) => *surface == info.surface && *preset == info.preset,
        }
    }
}

/// The `surface`/`preset` members of `object` (null counts as absent); the
/// error names the member that is not a string.
fn declared<'a>(object: &'a Map<String, Value>, at: &str) -> Result<Declared<'a>, String> {
    let member = |key: &str| match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.as_str())),
        Some(other) => Err(format!(
            "{at}{key}: must be a string, got {}; valid surface/preset pairs: {}",
            kind(other),
            taxonomy::valid_pairs()
        )),
    };
    Ok(match (member("surface")?, member("preset")?) {
        (None, None) => Declared::Nothing,
        (Some(surface), None) => Declared::Surface(surface),
        (None, Some(preset)) => Declared::Preset(preset),
        (Some(surface), Some(preset)) => Declared::Pair(surface, preset),
    })
}

/// The preset that scores `packet`: the one its `schemaVersion` selects,
/// which must be the one its declared pair names (when it declares one).
fn select_preset(registry: &Registry, packet: &Map<String, Value>) -> Result<Arc<Plugin>, Refusal> {
    let declared = declared(packet, "").map_err(Refusal::Input)?;
    // A full pair picks the preset through the taxonomy (a cross-axis or
    // unknown pair is refused with the valid ones).
    let by_pair = match declared {
        Declared::Pair(surface, preset) => {
            let pair = taxonomy::lookup(surface, preset).map_err(|e| {
                Refusal::Input(if surface.len().max(preset.len()) > 80 {
                    format!(
                        "surface/preset: {} is not a pair of the taxonomy; valid surface/preset pairs: {}",
                        declared.describe(),
                        taxonomy::valid_pairs()
                    )
                } else {
                    format!("surface/preset: {e}")
                })
            })?;
            Some(registry.preset_for(pair, None)?)
        }
        _ => None,
    };
    let schema = match packet.get("schemaVersion") {
        Some(Value::String(schema)) => Some(schema.as_str()),
        None | Some(Value::Null) => None,
        Some(other) => {
            let (_, known) = registry.preset_for_observed("")?;
            return Err(Refusal::Input(format!(
                "schemaVersion: must be a string (the observed packet's schema id), got {}; known: {}",
                kind(other),
                known.join(", ")
            )));
        }
    };
    let (by_schema, known) = registry.preset_for_observed(schema.unwrap_or_default())?;
    let Some(by_schema) = by_schema else {
        let found = match schema {
            Some(schema) => format!(
                "unknown observed packet schemaVersion `{}`",
                excerpt(schema)
            ),
            None => "schemaVersion: is missing: an observed packet names its schema".into(),
        };
        let hint = match &by_pair {
            Some(plugin) => {
                let info = preset_info(plugin);
                format!(
                    "; the packet declares {}, whose observed packet has schemaVersion `{}`",
                    declared.describe(),
                    info.observed_schema
                )
            }
            None => String::new(),
        };
        return Err(Refusal::Input(format!(
            "{found}{hint}; known: {}",
            known.join(", ")
        )));
    };
    let info = preset_info(&by_schema);
    if !declared.agrees_with(&info) {
        let fix = match &by_pair {
            Some(plugin) => {
                let wanted = preset_info(plugin);
                format!(
                    "; {}/{}'s observed packet has schemaVersion `{}`",
                    wanted.surface, wanted.preset, wanted.observed_schema
                )
            }
            None => format!("; valid surface/preset pairs: {}", taxonomy::valid_pairs()),
        };
        return Err(Refusal::Input(format!(
            "schemaVersion `{}` is {}/{}'s observed packet, but the packet declares {}{fix}; \
             correct whichever is wrong (a packet is scored by one preset only)",
            info.observed_schema,
            info.surface,
            info.preset,
            declared.describe(),
        )));
    }
    Ok(by_schema)
}

/// Each evaluation that declares a `surface`/`preset` other than the
/// preset's (or a non-string one), as (path, message).
fn evaluation_pairs(evaluations: &[Value], info: &PresetInfo) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    for (i, evaluation) in evaluations.iter().enumerate() {
        let Some(object) = evaluation.as_object() else {
            continue; // the preset makes it an `errored` verdict
        };
        let at = format!("evaluations[{i}].");
        let message = match declared(object, &at) {
            Ok(declared) if declared.agrees_with(info) => continue,
            Ok(declared) => {
                let case = object
                    .get("caseId")
                    .or_else(|| object.get("evaluationId"))
                    .and_then(Value::as_str)
                    .map(|id| format!("case `{}` ", excerpt(id)))
                    .unwrap_or_default();
                (
                    format!("{at}{}", declared.member(info)),
                    format!(
                        "{case}declares {}, but the packet is {}/{} (schemaVersion `{}`); \
                         every evaluation of a packet belongs to its pair",
                        declared.describe(),
                        info.surface,
                        info.preset,
                        info.observed_schema
                    ),
                )
            }
            Err(message) => match message.split_once(": ") {
                Some((path, why)) => (path.to_string(), why.to_string()),
                None => (String::new(), message),
            },
        };
        problems.push(message);
    }
    problems
}

/// At most 80 characters of `text`, for messages.
fn excerpt(text: &str) -> String {
    crate::plugin::excerpt(text, 80)
}

use crate::fixture::kind;

/// Property test: any packet (random shapes, missing fields, wrong types,
/// huge strings, deep nesting) is scored or refused with a definition error
/// naming the file; never a panic, and never a preset trap.
#[cfg(test)]
mod tests {
    use crate::plugin::registry::test_registry as registry;
    use std::path::Path;

    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::{EvaluateOptions, evaluate};

    const SCHEMAS: &[&str] = &[
        "cautilus.app_chat_evaluation_inputs.v1",
        "cautilus.app_prompt_evaluation_inputs.v1",
        "cautilus.evaluation_observed.v1",
        "cautilus.skill_evaluation_inputs.v1",
    ];

    /// Field names the presets read, so random objects hit real code paths.
    const FIELDS: &[&str] = &[
        "caseId",
        "evaluationId",
        "displayName",
        "provider",
        "model",
        "harness",
        "mode",
        "durationMs",
        "costUsd",
        "error",
        "surface",
        "preset",
        "observed",
        "messages",
        "role",
        "content",
        "finalText",
        "input",
        "structured",
        "expected",
        "snapshot",
        "snapshotText",
        "observationStatus",
        "summary",
        "entryFile",
        "expectedEntryFile",
        "loadedInstructionFiles",
        "requiredInstructionFiles",
        "forbiddenInstructionFiles",
        "loadedSupportingFiles",
        "requiredSupportingFiles",
        "forbiddenSupportingFiles",
        "allowedFirstToolCalls",
        "expectedRouting",
        "routingDecision",
        "selectedSkill",
        "workSkill",
        "bootstrapHelper",
        "firstToolCall",
        "firstToolCallPattern",
        "reasoningSoundness",
        "verdict",
        "evaluationKind",
        "expectedTrigger",
        "invoked",
        "outcome",
        "blocked",
        "sampling",
        "thresholds",
        "metrics",
    ];

    const WORDS: &[&str] = &[
        "",
        " ",
        "app",
        "repo",
        "dev",
        "chat",
        "prompt",
        "whole-repo",
        "skill",
        "messaging",
        "workspace",
        "user",
        "assistant",
        "observed",
        "blocked",
        "sound",
        "unsound",
        "trigger",
        "execution",
        "must_invoke",
        "passed",
        "AGENTS.md",
        "golden.json",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => "\\PC{0,12}",
            4 => prop::sample::select(WORDS).prop_map(String::from),
            1 => prop::sample::select(SCHEMAS).prop_map(String::from),
            // Huge strings.
            1 => (any::<char>(), 0usize..300_000).prop_map(|(c, n)| c.to_string().repeat(n)),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::sample::select(FIELDS).prop_map(String::from),
            1 => "\\PC{0,6}",
        ]
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text().prop_map(Value::from),
        ];
        leaf.prop_recursive(6, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    /// `value` wrapped in `depth` lists (kept under serde_json's limit of
    /// 128 so the packet still parses; deeper text is generated raw).
    fn nested(depth: usize, value: Value) -> Value {
        (0..depth).fold(value, |inner, _| Value::Array(vec![inner]))
    }

    /// A well-formed evaluation of some preset, then edited at random:
    /// fields removed, replaced by anything, or nested deeply.
    fn evaluation() -> impl Strategy<Value = Value> {
        let app = json!({
            "caseId": "c", "provider": "p", "model": "m", "harness": "h",
            "mode": "messaging", "durationMs": 1,
            "observed": {"messages": [{"role": "user", "content": "q"},
                                      {"role": "assistant", "content": "a"}],
                         "finalText": "a", "input": "q"},
            "expected": {"finalText": "a"}
        });
        let whole_repo = json!({
            "evaluationId": "c", "prompt": "p", "observationStatus": "observed",
            "summary": "s", "entryFile": "AGENTS.md",
            "loadedInstructionFiles": ["AGENTS.md"],
            "expectedEntryFile": "AGENTS.md",
            "expectedRouting": {"selectedSkill": "impl"},
            "routingDecision": {"selectedSkill": "impl", "firstToolCall": "ls"}
        });
        let skill = json!({
            "evaluationId": "c", "evaluationKind": "trigger",
            "expectedTrigger": "must_invoke", "invoked": true, "summary": "s",
            "sampling": {"sampleCount": 3, "matchingCount": 2, "consensusCount": 2, "stable": true}
        });
        let base = prop::sample::select(vec![app, whole_repo, skill]);
        let edit = (
            prop::sample::select(&["", "observed", "expected", "routingDecision", "sampling"][..]),
            key(),
            prop_oneof![
                2 => Just(None),
                4 => json().prop_map(Some),
                1 => (1usize..124, json()).prop_map(|(d, v)| Some(nested(d, v))),
            ],
        );
        prop_oneof![
            1 => json(),
            6 => (base, prop::collection::vec(edit, 0..6)).prop_map(|(mut e, edits)| {
                for (under, key, value) in edits {
                    let target = if under.is_empty() { Some(&mut e) } else { e.get_mut(under) };
                    if let Some(Value::Object(object)) = target {
                        match value {
                            Some(value) => object.insert(key, value),
                            None => object.remove(&key),
                        };
                    }
                }
                e
            }),
        ]
    }

    /// Optionally `choice`, else a random value or nothing.
    fn member(choice: impl Strategy<Value = String>) -> impl Strategy<Value = Option<Value>> {
        prop_oneof![
            3 => Just(None),
            6 => choice.prop_map(|s| Some(Value::String(s))),
            1 => json().prop_map(Some),
        ]
    }

    /// Packet text: mostly objects with (maybe) a schema id, a pair and
    /// evaluations; also any JSON, and raw deep nesting.
    fn packet() -> impl Strategy<Value = String> {
        let schema = member(prop_oneof![
            4 => prop::sample::select(SCHEMAS).prop_map(String::from),
            1 => text(),
        ]);
        let surface =
            member(prop::sample::select(&["app", "repo", "dev", ""][..]).prop_map(String::from));
        let preset = member(
            prop::sample::select(&["chat", "prompt", "whole-repo", "skill", "judge"][..])
                .prop_map(String::from),
        );
        let evaluations = prop_oneof![
            1 => json().prop_map(Some),
            1 => Just(None),
            8 => prop::collection::vec(evaluation(), 0..8).prop_map(|list| Some(Value::Array(list))),
        ];
        let extra = prop::collection::vec((key(), json()), 0..3);
        let shaped = (schema, surface, preset, evaluations, extra).prop_map(
            |(schema, surface, preset, evaluations, extra)| {
                let mut packet: Map<String, Value> = extra.into_iter().collect();
                for (key, value) in [
                    ("schemaVersion", schema),
                    ("surface", surface),
                    ("preset", preset),
                    ("evaluations", evaluations),
                ] {
                    if let Some(value) = value {
                        packet.insert(key.into(), value);
                    }
                }
                Value::Object(packet).to_string()
            },
        );
        // A packet whose schema id and pair agree (or whose pair is left
        // out), so that its evaluations reach the preset.
        let consistent = (
            0usize..4,
            0usize..3,
            prop::collection::vec(evaluation(), 1..8),
        )
            .prop_map(|(which, declared, evaluations)| {
                let (surface, preset) = [
                    ("app", "chat"),
                    ("app", "prompt"),
                    ("repo", "whole-repo"),
                    ("repo", "skill"),
                ][which];
                let mut packet = json!({"schemaVersion": SCHEMAS[which], "suiteId": "s"});
                if declared > 0 {
                    packet["surface"] = json!(surface);
                }
                if declared > 1 {
                    packet["preset"] = json!(preset);
                }
                packet["evaluations"] = Value::Array(evaluations);
                packet.to_string()
            });
        prop_oneof![
            8 => consistent,
            4 => shaped,
            1 => json().prop_map(|v| v.to_string()),
            1 => (1usize..5_000).prop_map(|d| {
                format!("{{\"schemaVersion\":\"{}\",\"evaluations\":{}", SCHEMAS[0], "[".repeat(d))
            }),
            1 => "\\PC{0,40}",
        ]
    }

    fn check(dir: &Path, text: &str) -> Result<(), TestCaseError> {
        let input = dir.join("observed.json");
        std::fs::write(&input, text).unwrap();
        let options = EvaluateOptions {
            input: input.clone(),
            output: Some(dir.join("summary.json")),
            jobs: 1,
        };
        match evaluate(registry(), &options) {
            Ok(outcome) => {
                let expected = serde_json::from_str::<Value>(text)
                    .ok()
                    .and_then(|p| p["evaluations"].as_array().map(Vec::len));
                prop_assert_eq!(Some(outcome.total), expected);
                let summary = std::fs::read_to_string(&outcome.summary_path).unwrap();
                let summary: Value = serde_json::from_str(&summary).expect("the summary is JSON");
                prop_assert_eq!(
                    summary["evaluations"].as_array().map(Vec::len),
                    Some(outcome.total)
                );
            }
            Err(error) => {
                // Refused as a bad packet (exit 2) naming the file; a preset
                // that trapped or overran a limit would not be.
                prop_assert!(error.is_definition_error(), "{error}");
                let message = error.to_string();
                prop_assert!(
                    message.contains(&input.display().to_string()),
                    "{}",
                    super::excerpt(&message)
                );
            }
        }
        Ok(())
    }

    proptest! {
        // About 1.5 s in a debug build once the built-in pack is compiled
        // (the first run compiles it into the cache beside the test binary).
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn any_packet_is_scored_or_refused_naming_the_file(text in packet()) {
            let dir = tempfile::tempdir().unwrap();
            check(dir.path(), &text)?;
        }
    }

    #[test]
    fn the_reproduction_and_its_fixes_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/eval/observed/upstream-app-chat.observed.json"
        );
        let text = std::fs::read_to_string(fixture).unwrap();
        let input = dir.path().join("observed.json");
        std::fs::write(&input, &text).unwrap();
        let options = EvaluateOptions {
            input,
            output: None,
            jobs: 1,
        };
        let error = evaluate(registry(), &options).unwrap_err();
        assert!(error.is_definition_error());
        assert!(
            error.to_string().contains(
                "schemaVersion `cautilus.evaluation_observed.v1` is repo/whole-repo's observed \
                 packet, but the packet declares app/chat"
            ),
            "{error}"
        );
        let fixed = text.replace(
            "cautilus.evaluation_observed.v1",
            "cautilus.app_chat_evaluation_inputs.v1",
        );
        std::fs::write(&options.input, fixed).unwrap();
        let outcome = evaluate(registry(), &options).unwrap();
        assert_eq!(outcome.recommendation(), "reject");
        assert_eq!(outcome.tally.counts()["errored"], 4);
    }
}
