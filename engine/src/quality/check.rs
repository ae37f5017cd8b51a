//! The offline check of one fixture, as `eval test` would make it before
//! running anything: the fixture loads, its experiment fields are read,
//! the cells are planned under the run's filters, and every variant's
//! suite is checked through the preset contract (its suite fields, every
//! case's shape, assertions, golden files, unique ids). No provider is set
//! up and no model is called.
//!
//! `eval validate`, `eval list` and a project run (`eval test` without
//! `--fixture`, which checks every suite before it runs any) share it, so
//! the three agree on what is invalid.

use std::path::Path;

use crate::eval::{self, CellFilters, EvalError, SuiteOptions};
use crate::fixture::{self, Fixture};
use crate::plugin::Registry;

/// What a valid fixture holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub suite_id: String,
    /// `surface/preset` (a multi-step fixture: empty).
    pub pair: String,
    /// Its cases (a multi-step fixture: 0, its steps are counted instead).
    pub cases: usize,
    /// Its declared variants (0: none declared).
    pub variants: usize,
    /// A multi-step fixture's steps.
    pub steps: Option<usize>,
}

/// How to check: the judge and provider settings `eval test` applies.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions<'a> {
    pub path_root: Option<&'a Path>,
    /// `--judge`, over the fixture's.
    pub judge: Option<&'a serde_json::Value>,
    /// The project's `[judge]`, where the fixture names none.
    pub default_judge: Option<&'a serde_json::Value>,
    /// The project's `[providers.*]` stand-ins for environment variables.
    pub provider_env: std::collections::BTreeMap<String, String>,
    /// The run's `--case`, `--tag`, `--variant`, `--shard`, `--trials`.
    pub cells: CellFilters,
}

/// Checks `file` (see the module docs); the error is the one `eval test`
/// would stop with, before running anything, placed in its file
/// ([`eval::positions`]).
pub fn check_fixture(
    registry: &Registry,
    file: &Path,
    options: &CheckOptions<'_>,
) -> Result<Checked, EvalError> {
    check(registry, file, options).map_err(|e| eval::positions::placed(e, file, options.path_root))
}

fn check(
    registry: &Registry,
    file: &Path,
    options: &CheckOptions<'_>,
) -> Result<Checked, EvalError> {
    let suite_options = SuiteOptions {
        provider_env: options.provider_env.clone(),
        ..SuiteOptions::default()
    };
    let validate = |suite| {
        eval::validate_suite(
            registry,
            suite,
            eval::default_jobs(),
            &suite_options,
            None,
            None,
        )
    };
    let mut suite = match fixture::load_fixture_within(file, options.path_root)? {
        Fixture::Suite(suite) => suite,
        Fixture::Steps(steps, warnings) => {
            for warning in &warnings {
                eprintln!("warning: {}", crate::term::shown(warning));
            }
            // Steps that read no earlier output can be checked in full now.
            for step in &steps.steps {
                if let Ok(suite) = step.suite(&steps.file, &[]) {
                    validate(suite).map_err(|e| EvalError::Step {
                        index: step.index,
                        error: Box::new(e),
                    })?;
                }
            }
            return Ok(Checked {
                suite_id: steps.suite_id.clone(),
                pair: String::new(),
                cases: 0,
                variants: 0,
                steps: Some(steps.steps.len()),
            });
        }
    };
    if let Some(judge) = options.judge {
        suite.body.insert("judge".into(), judge.clone());
    } else if let Some(judge) = options.default_judge {
        suite.body.entry("judge").or_insert_with(|| judge.clone());
    }
    // The experiment fields, the cases' own trials/tags/skip/only, and the
    // suite as each variant runs it.
    let spec = super::plan::take_spec(&mut suite)?;
    let contract = crate::eval::run::check_pass::declared_contract(registry, &suite);
    let plan = super::plan::plan(&suite, spec, &options.cells, false, &contract.input_fields)?;
    let mut cases = 0;
    for group in plan.groups.iter().filter(|g| g.trial == 1) {
        cases = validate(plan.suite_of(&suite, group))?.case_count;
    }
    Ok(Checked {
        suite_id: suite.suite_id.clone(),
        pair: suite.pair.to_string(),
        cases,
        variants: plan.spec.variants.len(),
        steps: None,
    })
}
