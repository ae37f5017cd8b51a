//! `cautilus-pack.toml`: what a pack holds, what each component is, and
//! what each may ask of the host.
//!
//! ```toml
//! [pack]
//! name = "acme-evals"
//! version = "0.1.0"
//! description = "Acme's scorers"
//! wit = "0.1.0"                      # the contract its components are built against
//!
//! [[component]]
//! path = "components/acme_scorers.wasm"
//! kind = "scorer"                    # scorer | preset | provider
//! ids = ["mentions-all"]             # the scorer, preset (`app/prompt`) or provider ids it serves
//! sha256 = "…"                       # written by `cautilus pack build`
//! capabilities = ["model"]           # model | http:<host> | process:<program>
//! build = "cargo build --release --target wasm32-wasip2"   # optional, run by `pack build`
//! source = "target/wasm32-wasip2/release/acme_scorers.wasm" # optional: copied to `path` after `build`
//! inputs = ["Cargo.toml", "Cargo.lock", "src"]   # optional: what `build` reads; unchanged → not rebuilt
//! examples = "scorers/acme/examples.yaml"  # optional (scorers): run by `cautilus pack test`, not packed
//!
//! [[template]]
//! name = "chat-base"
//! path = "templates/chat-base.fixture.yaml"
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::PackError;

/// The manifest's file name, at the root of a pack.
pub const MANIFEST: &str = "cautilus-pack.toml";

/// A parsed and checked manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub pack: PackInfo,
    #[serde(default, rename = "component", skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<ComponentEntry>,
    #[serde(default, rename = "template", skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<TemplateEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackInfo {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The version of the `cautilus:plugin` contract its components use.
    pub wit: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComponentKind {
    Scorer,
    Preset,
    Provider,
}

impl ComponentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scorer => "scorer",
            Self::Preset => "preset",
            Self::Provider => "provider",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentEntry {
    /// Where the component is inside the pack (relative, `/`-separated).
    pub path: String,
    pub kind: ComponentKind,
    /// What it serves: scorer ids, a preset's `surface/preset`, a provider id.
    pub ids: Vec<String>,
    /// Hex sha256 of the component's bytes (required once built).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Everything the component may request in `describe`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// A command `pack build` runs in the pack's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// What `build` produces, copied to `path` (relative to the pack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The files and directories `build` reads (relative to the pack): while
    /// they are unchanged since `path` was built, `pack build` keeps `path`
    /// instead of building it again (see [`super::build_inputs`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// Hex sha256 of `inputs` when `path` was built (written by `pack build`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_sha256: Option<String>,
    /// A scorer's examples file (relative to the pack), run by `pack test`;
    /// not part of the archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateEntry {
    /// What fixtures name it by: `extends: pack:<pack>/<name>`.
    pub name: String,
    pub path: String,
}

/// A capability as a manifest spells it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Capability {
    Model,
    Http(String),
    Process(String),
}

impl Capability {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            None if text == "model" => Ok(Self::Model),
            Some(("http", host)) if valid_word(host) => Ok(Self::Http(host.to_ascii_lowercase())),
            Some(("process", program)) if valid_word(program) => {
                Ok(Self::Process(program.to_string()))
            }
            _ => Err(format!(
                "`{text}` is not a capability; write `model`, `http:<host>` or `process:<program>`"
            )),
        }
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Model => f.write_str("model"),
            Self::Http(host) => write!(f, "http:{host}"),
            Self::Process(program) => write!(f, "process:{program}"),
        }
    }
}

fn valid_word(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// Whether `name` is a pack name: lowercase letters, digits and `-`,
/// starting with a letter, at most 64 characters.
pub fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Whether `path` is a safe relative path inside a pack.
pub fn valid_relative_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 240
        && !path.starts_with('/')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

impl Manifest {
    /// Parses and checks a manifest; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Self, PackError> {
        let manifest: Manifest = toml::from_str(text).map_err(|e| PackError::Manifest {
            file: file.to_path_buf(),
            message: e.to_string(),
        })?;
        manifest.check().map_err(|message| PackError::Manifest {
            file: file.to_path_buf(),
            message,
        })?;
        Ok(manifest)
    }

    /// Reads `<dir>/cautilus-pack.toml`.
    pub fn read(dir: &Path) -> Result<Self, PackError> {
        let file = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&file).map_err(|source| PackError::Io {
            path: file.clone(),
            source,
        })?;
        Self::parse(&text, &file)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a manifest always serializes")
    }

    /// The hash of what the manifest says (sha256 of its compact JSON, in
    /// field order): the same for the same content however the TOML is
    /// laid out, different for any change of a value. The lock pins it.
    pub fn content_hash(&self) -> String {
        let json = serde_json::to_vec(self).expect("a manifest always serializes");
        sha256_hex(&json)
    }

    /// The pack's version, parsed (checked in [`Self::parse`]).
    pub fn version(&self) -> semver::Version {
        semver::Version::parse(&self.pack.version).expect("checked when parsed")
    }

    fn check(&self) -> Result<(), String> {
        let pack = &self.pack;
        if !valid_name(&pack.name) {
            return Err(format!(
                "pack.name `{}` must be lowercase letters, digits and `-`, starting with a letter (at most 64)",
                pack.name
            ));
        }
        semver::Version::parse(&pack.version).map_err(|e| {
            format!(
                "pack.version `{}` is not a semantic version (e.g. 0.1.0): {e}",
                pack.version
            )
        })?;
        check_wit(&pack.wit)?;
        let mut paths = BTreeSet::new();
        let mut ids = BTreeSet::new();
        for (k, component) in self.components.iter().enumerate() {
            let at = format!("component[{k}]");
            if !valid_relative_path(&component.path) {
                return Err(format!(
                    "{at}.path `{}` must be a relative path inside the pack (no `..`, no leading `/`)",
                    component.path
                ));
            }
            if !paths.insert(component.path.as_str()) {
                return Err(format!("{at}.path `{}` is listed twice", component.path));
            }
            if component.ids.is_empty() {
                return Err(format!(
                    "{at}.ids is empty; list the {} ids it serves",
                    component.kind.as_str()
                ));
            }
            for id in &component.ids {
                if id.is_empty() || id.len() > 128 || id.chars().any(char::is_whitespace) {
                    return Err(format!("{at}.ids: `{id}` is not an id"));
                }
                if !ids.insert((component.kind, id.as_str())) {
                    return Err(format!(
                        "{at}.ids: {} `{id}` is served by two components",
                        component.kind.as_str()
                    ));
                }
            }
            if let Some(sha) = &component.sha256
                && (sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_hexdigit()))
            {
                return Err(format!("{at}.sha256 `{sha}` is not 64 hex digits"));
            }
            for capability in &component.capabilities {
                Capability::parse(capability).map_err(|e| format!("{at}.capabilities: {e}"))?;
            }
            if let Some(source) = &component.source
                && !valid_relative_path(source)
            {
                return Err(format!(
                    "{at}.source `{source}` must be a relative path inside the pack"
                ));
            }
            if let Some(input) = component.inputs.iter().find(|i| !valid_relative_path(i)) {
                return Err(format!(
                    "{at}.inputs: `{input}` must be a relative path inside the pack"
                ));
            }
            if let Some(sha) = &component.inputs_sha256
                && (sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_hexdigit()))
            {
                return Err(format!("{at}.inputs_sha256 `{sha}` is not 64 hex digits"));
            }
            check_examples(&at, component)?;
        }
        let mut names = BTreeSet::new();
        for (k, template) in self.templates.iter().enumerate() {
            if !valid_name(&template.name) {
                return Err(format!(
                    "template[{k}].name `{}` must be lowercase letters, digits and `-`",
                    template.name
                ));
            }
            if !names.insert(template.name.as_str()) {
                return Err(format!(
                    "template[{k}].name `{}` is listed twice",
                    template.name
                ));
            }
            if !valid_relative_path(&template.path) || !paths.insert(template.path.as_str()) {
                return Err(format!(
                    "template[{k}].path `{}` must be a relative path inside the pack, not used by another entry",
                    template.path
                ));
            }
        }
        Ok(())
    }

    /// Every file the pack carries besides its manifest.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.components
            .iter()
            .map(|c| c.path.as_str())
            .chain(self.templates.iter().map(|t| t.path.as_str()))
    }
}

/// A component's `examples`: a relative path inside the pack, on a scorer.
fn check_examples(at: &str, component: &ComponentEntry) -> Result<(), String> {
    let Some(examples) = &component.examples else {
        return Ok(());
    };
    if !valid_relative_path(examples) {
        return Err(format!(
            "{at}.examples `{examples}` must be a relative path inside the pack"
        ));
    }
    if component.kind != ComponentKind::Scorer {
        return Err(format!(
            "{at}.examples: only a scorer component has examples (this one is a {})",
            component.kind.as_str()
        ));
    }
    Ok(())
}

/// A pack's contract version must be one this host serves
/// ([`crate::contract::compatible`]).
pub fn check_wit(wit: &str) -> Result<(), String> {
    crate::contract::compatible(wit, crate::contract::WIT_VERSION)
        .map_err(|e| format!("pack.wit: {e}"))
}

/// The lowercase hex sha256 of `bytes` (a component's hash, as manifests
/// and lock files write it).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[pack]
name = "acme-evals"
version = "0.2.1"
description = "Acme's scorers"
wit = "0.1.0"

[[component]]
path = "components/scorers.wasm"
kind = "scorer"
ids = ["mentions-all", "tone"]
capabilities = ["model", "http:API.example.com", "process:python3"]

[[template]]
name = "chat-base"
path = "templates/chat.fixture.yaml"
"#;

    fn parse(text: &str) -> Result<Manifest, String> {
        Manifest::parse(text, Path::new("cautilus-pack.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_good_manifest_parses_and_round_trips() {
        let manifest = parse(GOOD).unwrap();
        assert_eq!(manifest.pack.name, "acme-evals");
        assert_eq!(manifest.components[0].kind, ComponentKind::Scorer);
        assert_eq!(
            manifest.files().collect::<Vec<_>>(),
            ["components/scorers.wasm", "templates/chat.fixture.yaml"]
        );
        assert_eq!(parse(&manifest.to_toml()).unwrap(), manifest);
    }

    #[test]
    fn bad_manifests_name_the_field_and_what_to_write() {
        let cases = [
            (GOOD.replace("acme-evals", "Acme"), "pack.name `Acme`"),
            (GOOD.replace("0.2.1", "two"), "pack.version `two`"),
            (
                GOOD.replace("wit = \"0.1.0\"", "wit = \"0.1.2\""),
                "pack.wit: cautilus:plugin@0.1.2 is newer than this host's 0.1.1; upgrade cautilus",
            ),
            (
                GOOD.replace("wit = \"0.1.0\"", "wit = \"0.2.0\""),
                "pack.wit: cautilus:plugin@0.2.0 is not compatible",
            ),
            (
                GOOD.replace("components/scorers.wasm", "../x.wasm"),
                "component[0].path `../x.wasm`",
            ),
            (
                GOOD.replace("\"tone\"", "\"tone\", \"tone\""),
                "`tone` is served by two",
            ),
            (
                GOOD.replace("\"model\",", "\"gpu\","),
                "`gpu` is not a capability",
            ),
            (
                GOOD.replace("capabilities", "sha256 = \"abc\"\ncapabilities"),
                "sha256 `abc`",
            ),
            (
                GOOD.replace("ids = [\"mentions-all\", \"tone\"]", "ids = []"),
                "ids is empty",
            ),
            (
                GOOD.replace("kind = \"scorer\"", "kind = \"judge\""),
                "unknown variant",
            ),
            (GOOD.replace("description", "descripton"), "unknown field"),
            (
                GOOD.replace("capabilities", "examples = \"../x.yaml\"\ncapabilities"),
                "component[0].examples `../x.yaml`",
            ),
            (
                GOOD.replace(
                    "kind = \"scorer\"",
                    "kind = \"provider\"\nexamples = \"x.yaml\"",
                ),
                "only a scorer component has examples",
            ),
            (
                GOOD.replace("templates/chat.fixture.yaml", "components/scorers.wasm"),
                "template[0].path",
            ),
        ];
        for (text, expected) in cases {
            let error = parse(&text).unwrap_err();
            assert!(error.contains(expected), "{expected:?} not in {error}");
            assert!(error.contains("cautilus-pack.toml"), "{error}");
        }
    }

    #[test]
    fn capabilities_parse_to_typed_values() {
        assert_eq!(Capability::parse("model"), Ok(Capability::Model));
        assert_eq!(
            Capability::parse("http:API.x.com"),
            Ok(Capability::Http("api.x.com".into()))
        );
        assert_eq!(
            Capability::parse("process:python3"),
            Ok(Capability::Process("python3".into()))
        );
        for bad in ["", "http:", "http:a b", "process:/bin/sh", "fs:/"] {
            assert!(Capability::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn contract_versions_follow_semver_below_one() {
        assert!(check_wit("0.1.0").is_ok());
        assert!(check_wit("0.1.1").is_ok());
        assert!(check_wit("0.1.2").is_err(), "newer patch than the host");
        assert!(check_wit("0.0.9").is_err());
        assert!(check_wit("0.2.0").is_err());
    }
}
