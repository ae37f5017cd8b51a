//! What every packet of a run carries: the header of identity fields (the
//! host's, then those the preset's contract declares), the verdicts pushed
//! in case order, the fixture's reference, and the preset's description.

use std::path::Path;

use serde_json::{Map, Value};

use crate::eval::EvalError;
use crate::eval::files::PacketWriter;
use crate::eval::verdict::tally::Tally;
use crate::fixture::SuiteContract;
use crate::plugin::Plugin;
use crate::plugin::bindings::preset_api::{PresetInfo, Verdict};
use crate::schema::packets::Header;

/// The packets a run writes, by file name.
pub const CASES: &str = "eval-cases.json";
pub const OBSERVED: &str = "eval-observed.json";
pub const SUMMARY: &str = "eval-summary.json";
/// The header every packet of a run starts with: the host's identity
/// fields, then those the preset's contract marks as identity.
pub(crate) fn header(
    schema: &str,
    fields: &Map<String, Value>,
    contract: &SuiteContract,
) -> Map<String, Value> {
    let field = |key: &str| fields.get(key).filter(|v| !v.is_null()).cloned();
    // A declared field the host writes itself (or the schema id) is the
    // host's: it is written once, where the host's identity fields are.
    let declared = contract
        .header_fields()
        .filter(|key| *key != "schemaVersion" && !HEADER_KEYS.contains(key))
        .filter_map(|key| Some((key.to_string(), field(key)?)))
        .collect();
    crate::schema::object_of(&Header {
        schema_version: schema.to_string(),
        surface: field("surface"),
        preset: field("preset"),
        suite_id: field("suiteId"),
        suite_display_name: field("suiteDisplayName"),
        fixture_ref: field("fixtureRef"),
        declared,
    })
}

/// Suite identity carried from packet to packet: the host's, then the
/// preset's declared identity fields.
pub(crate) fn header_keys(contract: &SuiteContract) -> impl Iterator<Item = &str> {
    HEADER_KEYS.iter().copied().chain(contract.header_fields())
}

/// The host's suite identity fields.
const HEADER_KEYS: &[&str] = &[
    "surface",
    "preset",
    "suiteId",
    "suiteDisplayName",
    "fixtureRef",
];

pub(crate) fn write_verdicts(
    out: &mut PacketWriter,
    tally: &mut Tally,
    verdicts: &[Verdict],
) -> Result<(), EvalError> {
    for verdict in verdicts {
        out.push(&verdict.body)?;
        tally.add(verdict);
    }
    Ok(())
}

pub(crate) fn preset_info(preset: &Plugin) -> PresetInfo {
    preset_description(preset).info.clone()
}

/// What a preset plugin said about itself (its info and suite contract).
pub(crate) fn preset_description(preset: &Plugin) -> &crate::plugin::preset::PresetDescription {
    match &preset.description {
        crate::plugin::Description::Preset(preset) => preset,
        _ => unreachable!("the registry resolves presets by world"),
    }
}

/// The fixture's reference recorded on every result: its path relative to
/// the workspace when inside it, with `/` separators, so it is byte-equal
/// across harnesses and machines.
pub fn fixture_ref(fixture: &Path, workspace: &Path) -> String {
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let fixture_abs = absolute(fixture);
    let relative = fixture_abs
        .strip_prefix(absolute(workspace))
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| fixture.to_path_buf());
    // `/`-separated; an absolute path (a fixture outside the workspace)
    // keeps one leading `/`.
    let parts: Vec<_> = relative
        .components()
        .filter(|c| !matches!(c, std::path::Component::RootDir))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    let joined = parts.join("/");
    if relative.has_root() {
        format!("/{joined}")
    } else {
        joined
    }
}
