//! A project's suites: the fixtures its config's globs match, their ids
//! (duplicates are a definition error naming both files), and the manifest
//! (`cautilus eval list`): what each suite is, computed without running
//! anything or contacting any provider.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::config::Loaded;
use crate::fixture::{Fixture, FixtureError, load_fixture};

/// The manifest's schema id.
pub const SCHEMA: &str = "cautilus.manifest.v1";

/// Why a project's suites could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error(
        "suite id `{id}` is used by two fixtures: {} and {}; give one of them another `suiteId`",
        first.display(),
        second.display()
    )]
    Duplicate {
        id: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error(
        "no fixture matches {globs:?} under {}; write one there, or set `include` in cautilus.toml",
        root.display()
    )]
    Empty { root: PathBuf, globs: Vec<String> },
}

/// What `cautilus eval list --json` prints.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "cautilus.manifest.v1")]
pub struct Manifest {
    pub schema_version: String,
    /// The config file, when the project has one.
    pub config: Option<String>,
    /// The directory fixture paths are relative to.
    pub root: String,
    pub suites: Vec<SuiteEntry>,
    /// The fixtures that are invalid (they do not load, or fail the check
    /// `eval test` makes before running: the preset contract, every case,
    /// the assertions), each with its error. `eval list` exits 2 when any
    /// is, and `eval test` over the project runs nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<InvalidSuite>,
    /// Why the project lists no suite: where fixtures are looked for in a
    /// project that has none yet (`eval list --json` prints this manifest
    /// and still exits 2, as for an invalid fixture).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// A fixture of the project that is invalid.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvalidSuite {
    /// The fixture, relative to the root (`/`-separated).
    pub path: String,
    /// Its suite id, when it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What is wrong with it (one problem a line).
    pub error: String,
    /// Every line break of `error` is the host's (a list of problems).
    #[serde(skip)]
    #[schemars(skip)]
    pub lines_are_ours: bool,
}

/// One suite of the project.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuiteEntry {
    /// The suite's `suiteId`, unique in the project.
    pub id: String,
    /// The fixture, relative to the root (`/`-separated).
    pub path: String,
    pub surface: String,
    pub preset: String,
    /// The provider the fixture asks for (app suites), if any.
    pub provider: Option<String>,
    /// The model the fixture pins, if any.
    pub model: Option<String>,
    /// Its cases (for a multi-step fixture, those of its first step).
    pub cases: u64,
    /// Steps of a multi-step fixture (1 otherwise).
    pub steps: u64,
    /// Most executions of a case: the suite's `trials`, or the most a
    /// case asks for (1 when nothing says).
    pub trials: u64,
    /// The declared variants, in order.
    pub variants: Vec<String>,
    /// The variant the others are compared with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// The declared gates (`passRate.min`, `scores.<name>.min` …); none:
    /// the default policy (every cell passes).
    pub gates: Vec<String>,
    /// Every tag its cases carry, the suite's own `tags` first, in
    /// first-seen order (`--tag` selects the suite when one matches).
    pub tags: Vec<String>,
    /// The suite's own `tags` (every case carries them).
    pub suite_tags: Vec<String>,
}

/// The fixtures `loaded`'s globs match, in path order.
pub fn discover(loaded: &Loaded) -> Result<Vec<PathBuf>, ProjectError> {
    let set = |globs: &[String]| {
        let mut builder = globset::GlobSetBuilder::new();
        for glob in globs {
            // Checked when the config was read.
            if let Ok(glob) = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
            {
                builder.add(glob);
            }
        }
        builder.build().map_err(|e| ProjectError::Io {
            path: loaded.file.clone(),
            message: e.to_string(),
        })
    };
    let include = set(&loaded.include())?;
    let exclude = set(&loaded.config.exclude)?;
    let records = loaded.records_dir();
    let mut found = Vec::new();
    let walk = ignore::WalkBuilder::new(&loaded.root)
        .hidden(false)
        .require_git(false)
        .filter_entry(move |e| e.file_name() != ".git" && e.path() != records)
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| ProjectError::Io {
            path: loaded.root.clone(),
            message: e.to_string(),
        })?;
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(&loaded.root) else {
            continue;
        };
        if include.is_match(relative) && !exclude.is_match(relative) {
            found.push(entry.path().to_path_buf());
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(ProjectError::Empty {
            root: loaded.root.clone(),
            globs: loaded.include(),
        });
    }
    Ok(found)
}

/// The manifest of the project's suites; loads every fixture (nothing
/// runs). A fixture that does not load is listed in `invalid`, not an
/// error: the others are still listed.
pub fn manifest(loaded: &Loaded, config: Option<&Path>) -> Result<Manifest, ProjectError> {
    let mut suites: Vec<SuiteEntry> = Vec::new();
    let mut invalid = Vec::new();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in discover(loaded)? {
        let entry = match entry(&file, &loaded.root) {
            Ok(entry) => entry,
            Err(ProjectError::Fixture(mut error)) => {
                crate::fixture::place::Placer::new(&file, None).place_error(&mut error);
                invalid.push(InvalidSuite {
                    path: relative(&file, &loaded.root),
                    id: None,
                    error: error.to_string(),
                    lines_are_ours: false,
                });
                continue;
            }
            Err(error) => return Err(error),
        };
        if let Some(first) = seen.insert(entry.id.clone(), file.clone()) {
            return Err(ProjectError::Duplicate {
                id: entry.id,
                first,
                second: file,
            });
        }
        suites.push(entry);
    }
    Ok(Manifest {
        schema_version: SCHEMA.into(),
        config: config.map(|c| c.display().to_string()),
        root: loaded.root.display().to_string(),
        suites,
        invalid,
        notice: None,
    })
}

/// The manifest of a project none of whose globs matches a file yet
/// (`why`, the listing's [`ProjectError::Empty`]), with a `notice` saying so.
pub fn empty(loaded: &Loaded, config: Option<&Path>, why: &ProjectError) -> Manifest {
    Manifest {
        schema_version: SCHEMA.into(),
        config: config.map(|c| c.display().to_string()),
        root: loaded.root.display().to_string(),
        suites: Vec::new(),
        invalid: Vec::new(),
        notice: Some(why.to_string()),
    }
}

/// `file` relative to `root`, `/`-separated.
fn relative(file: &Path, root: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/")
}

/// One fixture's entry.
fn entry(file: &Path, root: &Path) -> Result<SuiteEntry, ProjectError> {
    let path = relative(file, root);
    let (suite, steps) = match load_fixture(file)? {
        Fixture::Suite(suite) => (suite, 1),
        Fixture::Steps(steps, _) => {
            let count = steps.steps.len() as u64;
            let first = steps.steps.first().ok_or_else(|| ProjectError::Io {
                path: file.to_path_buf(),
                message: "a multi-step fixture without steps".into(),
            })?;
            (first.suite(file, &[])?, count)
        }
    };
    let mut suite = suite;
    let spec = crate::quality::plan::take_spec(&mut suite)?;
    let mut cases = 0u64;
    let mut trials = u64::from(spec.trials.unwrap_or(1));
    let mut tags: Vec<String> = spec.tags.clone();
    for case in suite.cases.open() {
        let case = case?.case;
        if let Some(fields) = case
            .as_object()
            .and_then(|c| crate::fixture::case_fields::read(c).ok())
        {
            trials = trials.max(u64::from(fields.trials.unwrap_or(0)));
            for tag in fields.tags {
                if !tags.contains(&tag) {
                    tags.push(tag);
                }
            }
        }
        cases += 1;
    }
    let text = |key: &str| {
        suite
            .body
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Ok(SuiteEntry {
        id: suite.suite_id.clone(),
        path,
        surface: suite.pair.surface.into(),
        preset: suite.pair.preset.into(),
        provider: text("provider"),
        model: text("model").or_else(|| {
            suite
                .body
                .get("agent")
                .and_then(|a| a.get("model"))
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        cases,
        steps,
        trials,
        variants: spec.variants.iter().map(|v| v.name.clone()).collect(),
        baseline: spec.baseline.clone(),
        gates: spec.gates.as_ref().map(|g| g.names()).unwrap_or_default(),
        tags,
        suite_tags: spec.tags.clone(),
    })
}
