//! `cautilus.toml`: a project's evaluation settings, found upward from the
//! current directory (or named with `--config`).
//!
//! ```toml
//! dir = ".cautilus"                                  # records root
//! include = ["evals/**/*.fixture.{json,yaml,yml}"]   # fixtures, relative to this file
//! exclude = ["evals/drafts/**"]
//! redact = ["customer.email", "items.*.token"]       # kept out of every record
//!
//! [defaults]            # what `eval test` uses when no flag says otherwise
//! provider = "claude-code"
//! concurrency = 8
//! jobs = 2
//! timeout_ms = 600000
//! replay = "replay-strict"
//! trials = 3                                       # when a fixture names none
//!
//! [grants]              # what a provider component is granted (adds to a built-in's own)
//! http = ["api.acme.dev"]
//! programs = ["acme-agent"]
//! secrets = { ACME_KEY = "ACME_API_KEY" }
//!
//! [providers.openai]    # a built-in API provider's settings, by id (its variable wins)
//! base_url = "http://127.0.0.1:8080/v1"
//!
//! [judge]               # grades plain-string criteria where a fixture names no judge
//! provider = "openai"
//! model = "gpt-5-mini"
//! ```
//!
//! Unknown keys are errors that say which keys exist (and the closest
//! one); values are checked when the file is read, naming the key. The
//! `[providers.<id>]` tables are checked against what the built-in
//! providers declare ([`super::providers`]) by the commands that use them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The file name looked for.
pub const FILE: &str = crate::fixture::root::PROJECT_FILE;

/// The fixtures found when a config names none.
pub const DEFAULT_INCLUDE: &[&str] = &["evals/**/*.fixture.{json,yaml,yml}"];

/// A project's `cautilus.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "cautilus.config.v1",
    description = "A project's cautilus.toml."
)]
pub struct ProjectConfig {
    /// Records root, relative to this file (default `.cautilus`): run
    /// directories, cassettes.
    #[serde(default)]
    pub dir: Option<String>,
    /// Globs of the project's fixtures, relative to this file (default
    /// `evals/**/*.fixture.{json,yaml,yml}`).
    #[serde(default)]
    pub include: Option<Vec<String>>,
    /// Globs of files the includes match that are not fixtures of the
    /// project.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Value-relative paths redacted in everything a run keeps (packets,
    /// journal, experiment.json, cassettes), e.g. `customer.email` or
    /// `items.*.token`; `--redact` adds to them.
    #[serde(default)]
    pub redact: Vec<String>,
    /// What `eval test` uses when no flag says otherwise.
    #[serde(default)]
    pub defaults: Defaults,
    /// Capabilities granted to the run's provider component.
    #[serde(default)]
    pub grants: ConfigGrants,
    /// The judge of suites whose fixture names none (`judge:`).
    #[serde(default)]
    pub judge: Option<ConfigJudge>,
    /// Settings of the built-in providers calling a model API, by
    /// provider id (`[providers.openai]`); each is checked against what its
    /// provider declares when a command runs or checks suites.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ProviderSettings>")]
    pub providers: BTreeMap<String, toml::Value>,
}

/// One `[providers.<id>]` table: the settings of a built-in provider
/// calling a model API; the variable its endpoint declares for each wins
/// over it. Checked against what that provider declares (the keys it
/// takes) when a command runs or checks suites.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// The server's base URL (its URL variable overrides it:
    /// `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`), e.g. a local llama.cpp or
    /// vLLM server.
    pub base_url: Option<String>,
    /// Prices of this endpoint's models, USD per million tokens (model →
    /// `{input, output, cached_input}`), for a provider with a price
    /// family; `CAUTILUS_<FAMILY>_PRICES` (JSON) overrides them. Calls to
    /// any server but the provider's public API get a cost only from these.
    #[serde(default)]
    pub prices: Option<crate::eval::provider::pricing::PriceTable>,
    /// For a provider that can stream (`openai`): ask for answers as event
    /// streams, so a case's `firstByteMs` is the time to the model's first
    /// token (its stream variable, `CAUTILUS_OPENAI_STREAM`, overrides it).
    #[serde(default)]
    pub stream: Option<bool>,
}

/// `[judge]`: the model that grades plain-string criteria where a
/// fixture's `judge` does not say.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigJudge {
    /// Provider id or `.wasm` path, as a fixture's `judge.provider`.
    pub provider: String,
    /// The judge model's name.
    pub model: String,
}

impl ConfigJudge {
    /// The fixture-level `judge` value this stands for.
    pub fn to_fixture_value(&self) -> serde_json::Value {
        serde_json::json!({"provider": self.provider, "model": self.model})
    }
}

/// Defaults of `eval test`; a flag overrides each.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Provider id or `.wasm` path (`--provider`).
    pub provider: Option<String>,
    /// Provider calls in flight (`--concurrency`, 1–256).
    #[schemars(range(min = 1, max = 256))]
    pub concurrency: Option<u16>,
    /// Worker threads (`--jobs`, 1–256).
    #[schemars(range(min = 1, max = 256))]
    pub jobs: Option<u16>,
    /// Wall-clock limit of one provider call in ms (`--timeout-ms`).
    pub timeout_ms: Option<u64>,
    /// `live`, `record-new`, `replay-strict` or `refresh` (`--replay`).
    pub replay: Option<String>,
    /// Trials of each case of a suite whose fixture names no `trials`
    /// (1–100; `--trials` overrides both).
    #[schemars(range(min = 1, max = 100))]
    pub trials: Option<u32>,
    /// Suites of a project run at once (`--parallel-suites`, 1–64).
    #[schemars(range(min = 1, max = 64))]
    pub parallel_suites: Option<u16>,
}

/// Grants of the run's provider (`--grant-http`, `--grant-program`,
/// `--grant-secret` add to them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigGrants {
    /// Host names it may reach through `http`.
    #[serde(default)]
    pub http: Vec<String>,
    /// Programs it may run through `process`.
    #[serde(default)]
    pub programs: Vec<String>,
    /// Secret name → the environment variable it is read from.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
}

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

/// A loaded config and where it is.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub file: PathBuf,
    /// The directory globs and `dir` are relative to.
    pub root: PathBuf,
    pub config: ProjectConfig,
}

impl Loaded {
    /// The records root.
    pub fn records_dir(&self) -> PathBuf {
        self.root
            .join(self.config.dir.as_deref().unwrap_or(".cautilus"))
    }

    /// The include globs (the default when the file names none).
    pub fn include(&self) -> Vec<String> {
        self.config
            .include
            .clone()
            .unwrap_or_else(|| DEFAULT_INCLUDE.iter().map(|g| g.to_string()).collect())
    }
}

/// The nearest `cautilus.toml` in `start` or one of its ancestors.
pub fn find(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(FILE))
        .find(|candidate| candidate.is_file())
}

/// Every key a table of the config may hold, by table.
const KEYS: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "dir",
            "include",
            "exclude",
            "redact",
            "defaults",
            "grants",
            "judge",
            "providers",
        ],
    ),
    ("judge", &["provider", "model"]),
    (
        "defaults",
        &[
            "provider",
            "concurrency",
            "jobs",
            "timeout_ms",
            "replay",
            "trials",
            "parallel_suites",
        ],
    ),
    ("grants", &["http", "programs", "secrets"]),
];

/// The error of `key` in `table` (`""`: the top level), which is none of
/// `keys`: it names the closest.
pub(super) fn unknown_key(table: &str, key: &str, keys: &[&str]) -> String {
    let at = if table.is_empty() {
        format!("`{key}`")
    } else {
        format!("`{table}.{key}`")
    };
    let near = keys
        .iter()
        .map(|k| (strsim::jaro_winkler(k, key), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    format!("unknown key {at}; {near}keys here: {}", keys.join(", "))
}

/// Reads and checks `file`.
pub fn load(file: &Path) -> Result<Loaded, ConfigError> {
    let error = |message: String| ConfigError {
        path: file.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(file).map_err(|e| error(format!("cannot read it: {e}")))?;
    let value: toml::Table = toml::from_str(&text).map_err(|e| error(e.to_string()))?;
    for (table, keys) in KEYS {
        let entries = if table.is_empty() {
            Some(&value)
        } else {
            let mut parts = table.split('.');
            let first = parts.next().and_then(|p| value.get(p));
            parts
                .try_fold(first, |at, part| Some(at?.get(part)))
                .flatten()
                .and_then(toml::Value::as_table)
        };
        for key in entries.into_iter().flat_map(|t| t.keys()) {
            if !keys.contains(&key.as_str()) {
                return Err(error(unknown_key(table, key, keys)));
            }
        }
    }
    let config: ProjectConfig = value
        .try_into()
        .map_err(|e: toml::de::Error| error(e.message().to_string()))?;
    check(&config).map_err(error)?;
    let root = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    Ok(Loaded {
        file: file.to_path_buf(),
        root,
        config,
    })
}

/// Checks values serde cannot.
fn check(config: &ProjectConfig) -> Result<(), String> {
    if let Some(replay) = &config.defaults.replay
        && crate::eval::provider::cassette::ReplayMode::parse(replay).is_err()
    {
        return Err(format!(
            "`defaults.replay`: unknown mode `{replay}`; use live, record-new, replay-strict or refresh"
        ));
    }
    for (key, value) in [
        ("concurrency", config.defaults.concurrency),
        ("jobs", config.defaults.jobs),
    ] {
        if value.is_some_and(|n| !(1..=256).contains(&n)) {
            return Err(format!("`defaults.{key}`: must be from 1 to 256"));
        }
    }
    crate::eval::redact::Redaction::parse(&config.redact).map_err(|e| format!("`redact`: {e}"))?;
    if config
        .defaults
        .trials
        .is_some_and(|n| !(1..=100).contains(&n))
    {
        return Err("`defaults.trials`: must be from 1 to 100".into());
    }
    if let Some(judge) = &config.judge {
        for (key, value) in [("provider", &judge.provider), ("model", &judge.model)] {
            if value.trim().is_empty() {
                return Err(format!("`judge.{key}`: must not be empty"));
            }
        }
    }
    if config
        .defaults
        .parallel_suites
        .is_some_and(|n| !(1..=64).contains(&n))
    {
        return Err("`defaults.parallel_suites`: must be from 1 to 64".into());
    }
    for glob in config.include.iter().flatten().chain(&config.exclude) {
        globset::Glob::new(glob).map_err(|e| format!("glob `{glob}`: {e}"))?;
    }
    for (name, var) in &config.grants.secrets {
        crate::eval::provider::setup::GrantFlags::parse_secret(&format!("{name}={var}"))
            .map_err(|e| format!("`grants.secrets`: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Loaded, String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE);
        std::fs::write(&file, text).unwrap();
        load(&file).map_err(|e| e.message)
    }

    #[test]
    fn a_full_config_reads_back() {
        let loaded = load_text(
            r#"
dir = "records"
include = ["suites/*.fixture.yaml"]
exclude = ["suites/draft.fixture.yaml"]
[defaults]
provider = "fixture"
concurrency = 16
replay = "replay-strict"
[grants]
http = ["api.acme.dev"]
secrets = { ACME_KEY = "ACME_API_KEY" }
"#,
        )
        .unwrap();
        assert!(loaded.records_dir().ends_with("records"));
        assert_eq!(loaded.include(), ["suites/*.fixture.yaml"]);
        assert_eq!(loaded.config.defaults.concurrency, Some(16));
        assert_eq!(loaded.config.grants.secrets["ACME_KEY"], "ACME_API_KEY");
        let empty = load_text("").unwrap();
        assert_eq!(empty.include(), DEFAULT_INCLUDE);
    }

    #[test]
    fn unknown_keys_say_what_exists_and_the_closest() {
        let error = load_text("incude = []").unwrap_err();
        assert_eq!(
            error,
            "unknown key `incude`; did you mean `include`? keys here: dir, include, exclude, redact, defaults, grants, judge, providers"
        );
        let error = load_text("[defaults]\nconcurency = 4").unwrap_err();
        assert!(
            error.starts_with("unknown key `defaults.concurency`; did you mean `concurrency`?"),
            "{error}"
        );
        let error = load_text("[grants]\nnetwork = []").unwrap_err();
        assert!(
            error.starts_with("unknown key `grants.network`; keys here"),
            "{error}"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        assert!(
            load_text("[defaults]\nreplay = \"sometimes\"")
                .unwrap_err()
                .contains("defaults.replay")
        );
        assert!(
            load_text("[defaults]\nconcurrency = 0")
                .unwrap_err()
                .contains("defaults.concurrency")
        );
        assert!(
            load_text("include = [\"evals/[\"]")
                .unwrap_err()
                .contains("glob `evals/[`")
        );
        assert!(load_text("[defaults]\njobs = \"two\"").is_err());
        assert!(load_text("dir = ").is_err(), "TOML syntax");
    }

    #[test]
    fn the_nearest_config_upward_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(find(&nested), None);
        std::fs::write(dir.path().join(FILE), "").unwrap();
        assert_eq!(find(&nested), Some(dir.path().join(FILE)));
    }
}
