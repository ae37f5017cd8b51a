//! An experiment's plan: which cells a run takes and in which groups.
//!
//! A suite's experiment fields (`trials`, `variants`, `baseline`, `gates`,
//! `fixtureResults`) are taken off its body here; its cases are read once
//! for their host-owned fields (`trials`, `tags`, `skip`, `only`) and ids.
//! The cells are case × variant × trial. They run as groups, one per
//! variant and trial: group (v, t) holds every selected case that runs at
//! least t trials, through the suite with v's overrides deep-merged over
//! it. Each group is an ordinary suite run with its own records, so
//! everything a run does (limits, cassettes, journal, interruption) holds
//! for every cell.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::gates::{self, Gates};
use crate::eval::{CellFilters, EvalError};
use crate::fixture::case_fields::{self, CaseFields};
use crate::fixture::{CaseSource, FixtureError, Suite, kind, variant_may_override};
use crate::wildcard;

/// The name of the one variant of a suite that declares none.
pub const DEFAULT_VARIANT: &str = "default";

/// One variant: its name and what it changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub name: String,
    /// The suite fields it sets, paths resolved (`fixtureResults`).
    pub overrides: Map<String, Value>,
    /// The same, as the fixture wrote them: what the records show (no
    /// path of this machine).
    pub written: Map<String, Value>,
}

/// What a suite declares about its experiment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spec {
    pub trials: Option<u32>,
    /// Declared variants, in order (none: the suite itself is the one).
    pub variants: Vec<Variant>,
    pub baseline: Option<String>,
    pub gates: Option<Gates>,
    /// `gates` as written (kept in the record, so shards merge without the
    /// fixture).
    pub gates_json: Option<Value>,
    /// Canned answers for the fixture backend, relative to the fixture.
    pub fixture_results: Option<PathBuf>,
    /// The suite's `tags`: every case of the suite carries them.
    pub tags: Vec<String>,
}

/// Takes the experiment fields off `suite`'s body.
pub fn take_spec(suite: &mut Suite) -> Result<Spec, FixtureError> {
    let file = suite.file.clone();
    let root = suite.root.clone();
    let err = |path: &str, message: String| FixtureError::new(&file, path, message);
    let body = &mut suite.body;
    let mut spec = Spec::default();
    if let Some(value) = body.remove("trials") {
        spec.trials = Some(case_fields::trials(&value).map_err(|m| err("trials", m))?);
    }
    if let Some(value) = body.remove("tags") {
        spec.tags = case_fields::tags(&value).map_err(|(path, m)| err(&path, m))?;
    }
    if let Some(value) = body.remove("fixtureResults") {
        spec.fixture_results =
            Some(fixture_results(&file, &root, &value).map_err(|m| err("fixtureResults", m))?);
    }
    if let Some(value) = body.remove("gates") {
        spec.gates = Some(gates::parse(&value).map_err(|(path, message)| err(&path, message))?);
        spec.gates_json = Some(value);
    }
    if let Some(value) = body.remove("variants") {
        let Value::Object(variants) = value else {
            return Err(err(
                "variants",
                format!(
                    "must be an object of named overrides ({{name: {{model: …}}}}), got {}",
                    kind(&value)
                ),
            ));
        };
        if variants.is_empty() {
            return Err(err(
                "variants",
                "is empty; name at least one variant, or remove it".into(),
            ));
        }
        for (name, overrides) in variants {
            let at = format!("variants.{name}");
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                || name.starts_with('.')
            {
                return Err(err(
                    &at,
                    "a variant name uses letters, digits, `.`, `_` and `-` (it names the variant's record directory)".into(),
                ));
            }
            let written = overrides.as_object().cloned().unwrap_or_default();
            let Value::Object(mut overrides) = overrides else {
                return Err(err(
                    &at,
                    format!(
                        "must be an object of suite fields to override, got {}",
                        kind(&overrides)
                    ),
                ));
            };
            for (key, value) in overrides.iter_mut() {
                variant_may_override(suite.pair, key)
                    .map_err(|m| err(&format!("{at}.{key}"), m))?;
                if key == "fixtureResults" {
                    // Resolved against the fixture's directory here.
                    let path = fixture_results(&file, &root, value)
                        .map_err(|m| err(&format!("{at}.{key}"), m))?;
                    *value = Value::String(path.to_string_lossy().into_owned());
                }
            }
            spec.variants.push(Variant {
                name,
                overrides,
                written,
            });
        }
    }
    if let Some(value) = body.remove("baseline") {
        let Some(name) = value.as_str() else {
            return Err(err(
                "baseline",
                format!("must be a variant's name, got {}", kind(&value)),
            ));
        };
        if !spec.variants.iter().any(|v| v.name == name) {
            let names: Vec<&str> = spec.variants.iter().map(|v| v.name.as_str()).collect();
            return Err(err(
                "baseline",
                if names.is_empty() {
                    format!("names variant `{name}`, but the suite declares no `variants`")
                } else {
                    format!(
                        "names variant `{name}`, which is not declared; variants: {}",
                        names.join(", ")
                    )
                },
            ));
        }
        spec.baseline = Some(name.to_string());
    }
    Ok(spec)
}

/// A `fixtureResults` path, relative to the fixture's directory and inside
/// its root (where it really is).
fn fixture_results(
    fixture: &std::path::Path,
    root: &crate::fixture::PathRoot,
    value: &Value,
) -> Result<PathBuf, String> {
    match value.as_str().filter(|p| !p.trim().is_empty()) {
        Some(path) => root.resolve(fixture.parent().unwrap_or(std::path::Path::new("")), path),
        None => Err(format!(
            "must be a path (relative to the fixture) to a JSON object of canned answers keyed by caseId, got {}",
            kind(value)
        )),
    }
}

/// One group of cells: a variant's trial over the cases that run it.
#[derive(Debug, Clone)]
pub struct Group {
    pub variant: usize,
    pub trial: u32,
    /// Which of the suite's cases the group holds, by position (`None`:
    /// every case).
    pub keep: Option<Arc<Vec<bool>>>,
    /// How many, when counted.
    pub cases: Option<usize>,
}

/// The cells of a run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub spec: Spec,
    /// The variants that run, the baseline first.
    pub variants: Vec<Variant>,
    /// The baseline, when it runs: index into `variants` (always 0).
    pub baseline: Option<usize>,
    pub groups: Vec<Group>,
    /// Cases skipped (`skip`): (position, caseId, reason).
    pub skipped: Vec<(usize, String, String)>,
    /// Each tagged case's own tags (see [`Plan::tags_of`]).
    pub tags: HashMap<String, Vec<String>>,
    /// `--case`, `--variant`, `--tag` or `only` narrowed the run.
    pub filtered: bool,
    /// `--shard k/n`: the run holds one part of the cells.
    pub shard: Option<(u32, u32)>,
    pub max_trials: u32,
}

impl Plan {
    /// Whether this is more than one plain run of the suite (variants,
    /// trials, gates, or a selection of cases).
    pub fn is_experiment(&self) -> bool {
        !self.spec.variants.is_empty()
            || self.spec.gates.is_some()
            || self.max_trials > 1
            || self.filtered
            || self.shard.is_some()
            || !self.skipped.is_empty()
    }

    /// The suite of group `group`: the variant's overrides over the body,
    /// and the group's cases.
    pub fn suite_of(&self, suite: &Suite, group: &Group) -> Suite {
        let mut body = Value::Object(suite.body.clone());
        let overrides = &self.variants[group.variant].overrides;
        let without_results: Map<String, Value> = overrides
            .iter()
            .filter(|(k, _)| *k != "fixtureResults")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        body = crate::fixture::compose::deep_merge(body, Value::Object(without_results.clone()));
        let Value::Object(body) = body else {
            unreachable!("an object merged with an object")
        };
        let cases = match &group.keep {
            Some(keep) if !keep.iter().all(|k| *k) => {
                CaseSource::Selected(crate::fixture::source::Selection {
                    source: Box::new(suite.cases.clone()),
                    keep: keep.clone(),
                    fixture: suite.file.clone(),
                })
            }
            _ => suite.cases.clone(),
        };
        Suite {
            body,
            overrides: Box::new(without_results),
            variant: Some(self.variants[group.variant].name.clone()),
            cases,
            warnings: Vec::new(),
            ..suite.clone()
        }
    }

    /// The tags case `case_id` carries: its suite's, then its own.
    pub fn tags_of(&self, case_id: &str) -> Vec<String> {
        let mut tags = self.spec.tags.clone();
        for tag in self.tags.get(case_id).into_iter().flatten() {
            if !tags.contains(tag) {
                tags.push(tag.clone());
            }
        }
        tags
    }

    /// The canned answers of `variant`: its own `fixtureResults`, else the
    /// suite's.
    pub fn fixture_results(&self, variant: usize) -> Option<PathBuf> {
        self.variants[variant]
            .overrides
            .get("fixtureResults")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .or_else(|| self.spec.fixture_results.clone())
    }
}

/// How many trials each case runs (0: not run), read from the cases.
struct Selected {
    /// `None`: every case, `uniform` trials each.
    trials: Option<Vec<u8>>,
    skipped: Vec<(usize, String, String)>,
    tags: HashMap<String, Vec<String>>,
    any_only: bool,
}

fn select_cases(
    suite: &Suite,
    suite_tags: &[String],
    filters: &CellFilters,
    uniform: u32,
    strict: bool,
    inputs: &[String],
) -> Result<Selected, EvalError> {
    let mut selected = Selected {
        trials: None,
        skipped: Vec::new(),
        tags: HashMap::new(),
        any_only: false,
    };
    if filters.cases.is_empty()
        && filters.tags.is_empty()
        && filters.shard.is_none()
        && !super::field_scan::may_set_case_fields(&suite.cases)
    {
        return Ok(selected);
    }
    let mut problems = Vec::new();
    let mut matched = vec![false; filters.cases.len()];
    let mut trials = Vec::new();
    let mut only = Vec::new();
    let mut any_tagged = false;
    for (i, case) in suite.cases.open().enumerate() {
        let crate::fixture::SourcedCase { case, origin } = case.map_err(EvalError::from)?;
        let id = case
            .as_object()
            .map(|case| case_fields::id_of(case, inputs))
            .unwrap_or_default();
        let id = id.as_str();
        let fields = match case.as_object().map(case_fields::read) {
            Some(Ok(fields)) => fields,
            Some(Err((field, message))) => {
                // Named in the case's own file when it has one.
                let path = format!("cases[{i}].{field}");
                let origins = std::slice::from_ref(&origin);
                problems.push((
                    crate::eval::cases::origins::locate(&path, origins, &[i]),
                    message,
                ));
                CaseFields::default()
            }
            None => CaseFields::default(), // the preset names it
        };
        if !fields.tags.is_empty() {
            selected.tags.insert(id.to_string(), fields.tags.clone());
        }
        let mut chosen = filters.cases.is_empty();
        for (pattern, hit) in filters.cases.iter().zip(&mut matched) {
            if wildcard::matches(pattern, id) {
                *hit = true;
                chosen = true;
            }
        }
        // A case carries its own tags and its suite's.
        let tagged = fields
            .tags
            .iter()
            .chain(suite_tags)
            .any(|t| filters.tags.contains(t));
        if !filters.tags.is_empty() && !tagged {
            chosen = false;
        } else if !filters.tags.is_empty() {
            any_tagged = true;
        }
        if let Some((k, n)) = filters.shard
            && i % n as usize != (k - 1) as usize
        {
            chosen = false;
        }
        let count = if !chosen {
            0
        } else if let Some(reason) = &fields.skip {
            selected.skipped.push((i, id.to_string(), reason.clone()));
            0
        } else if strict {
            1
        } else {
            filters.trials.or(fields.trials).unwrap_or(uniform)
        };
        trials.push(count as u8);
        only.push(fields.only);
    }
    if !problems.is_empty() {
        return Err(EvalError::Cases {
            file: suite.file.clone(),
            problems,
        });
    }
    if let Some((pattern, _)) = filters.cases.iter().zip(&matched).find(|(_, hit)| !**hit) {
        return Err(EvalError::Input {
            path: suite.file.clone(),
            message: format!(
                "--case `{pattern}` matches no case of suite `{}`",
                suite.suite_id
            ),
        });
    }
    if !filters.tags.is_empty() && !any_tagged {
        return Err(EvalError::Input {
            path: suite.file.clone(),
            message: format!(
                "--tag {} matches no case of suite `{}`",
                filters.tags.join(", "),
                suite.suite_id
            ),
        });
    }
    selected.any_only = only.iter().any(|o| *o);
    if selected.any_only {
        for (count, only) in trials.iter_mut().zip(&only) {
            if !only {
                *count = 0;
            }
        }
    }
    selected.trials = Some(trials);
    Ok(selected)
}

/// Plans the cells of `suite` (whose spec was taken) under `filters`;
/// `strict` (replay-strict) collapses trials to 1. A case without a
/// `caseId` is known by the id derived from its preset's `inputs`.
pub fn plan(
    suite: &Suite,
    spec: Spec,
    filters: &CellFilters,
    strict: bool,
    inputs: &[String],
) -> Result<Plan, EvalError> {
    let uniform = if strict {
        1
    } else {
        filters
            .trials
            .or(spec.trials)
            .or(filters.default_trials)
            .unwrap_or(1)
    };
    let Selected {
        trials,
        skipped,
        tags,
        any_only,
    } = select_cases(suite, &spec.tags, filters, uniform, strict, inputs)?;
    let max_trials = trials
        .as_ref()
        .map_or(uniform, |t| t.iter().copied().max().map_or(0, u32::from));
    if max_trials == 0 {
        return Err(EvalError::Input {
            path: suite.file.clone(),
            message: format!(
                "no case of suite `{}` is left to run ({} skipped); remove `skip` from a case or widen --case",
                suite.suite_id,
                skipped.len()
            ),
        });
    }

    // Variants: the declared ones (or the suite itself), narrowed by
    // --variant, the baseline first.
    let declared = if spec.variants.is_empty() {
        vec![Variant {
            name: DEFAULT_VARIANT.into(),
            overrides: Map::new(),
            written: Map::new(),
        }]
    } else {
        spec.variants.clone()
    };
    for pattern in &filters.variants {
        if !declared.iter().any(|v| wildcard::matches(pattern, &v.name)) {
            let names: Vec<&str> = declared.iter().map(|v| v.name.as_str()).collect();
            return Err(EvalError::Input {
                path: suite.file.clone(),
                message: format!(
                    "--variant `{pattern}` matches no variant; variants: {}",
                    names.join(", ")
                ),
            });
        }
    }
    let mut variants: Vec<Variant> = declared
        .into_iter()
        .filter(|v| {
            filters.variants.is_empty()
                || filters
                    .variants
                    .iter()
                    .any(|p| wildcard::matches(p, &v.name))
        })
        .collect();
    let baseline = spec.baseline.as_ref().and_then(|name| {
        let at = variants.iter().position(|v| &v.name == name)?;
        let base = variants.remove(at);
        variants.insert(0, base);
        Some(0)
    });

    let mut groups = Vec::new();
    for variant in 0..variants.len() {
        for trial in 1..=max_trials {
            let (keep, cases) = match &trials {
                None => (None, None),
                Some(trials) => {
                    let keep: Vec<bool> = trials.iter().map(|&n| u32::from(n) >= trial).collect();
                    let count = keep.iter().filter(|k| **k).count();
                    (Some(Arc::new(keep)), Some(count))
                }
            };
            groups.push(Group {
                variant,
                trial,
                keep,
                cases,
            });
        }
    }
    Ok(Plan {
        spec,
        variants,
        baseline,
        groups,
        skipped,
        tags,
        filtered: !filters.cases.is_empty()
            || !filters.tags.is_empty()
            || !filters.variants.is_empty()
            || any_only,
        shard: filters.shard,
        max_trials,
    })
}
