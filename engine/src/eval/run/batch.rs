//! One batch of a suite's cases made ready for the preset: each case's
//! origin and host-owned fields (`trials`, `tags`, `skip`, `only`) taken
//! off, its golden file read, its own assertions resolved and removed, and
//! its JSON text written. Both passes of `eval test` (checking
//! every case, then running them) prepare batches the same way, so a suite
//! is never held whole: a batch at a time is.

use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value};

use crate::eval::assert::assertions::{Assertions, BatchPlan, ScorerPool, Source};
use crate::eval::assert::snapshots::{self, Snapshot};
use crate::eval::cases::origins;
use crate::fixture::{CaseOrigin, PathRoot, SourcedCase, case_fields};
use crate::json_text::to_text;
use crate::plugin::Registry;

/// Cases read from the source, with their indices in the suite (ascending
/// and consecutive).
#[derive(Default)]
pub struct RawBatch {
    pub indices: Vec<usize>,
    pub cases: Vec<Value>,
    /// Where each case came from.
    pub origins: Vec<CaseOrigin>,
}

/// The range from the first to the last of `indices` (ascending).
fn span(indices: &[usize]) -> Range<usize> {
    match (indices.first(), indices.last()) {
        (Some(&first), Some(&last)) => first..last + 1,
        _ => 0..0,
    }
}

impl RawBatch {
    /// Consecutive cases starting at `first`.
    pub fn consecutive(first: usize, sourced: Vec<SourcedCase>) -> Self {
        let (cases, origins): (Vec<Value>, Vec<CaseOrigin>) =
            sourced.into_iter().map(|c| (c.case, c.origin)).unzip();
        Self {
            indices: (first..first + cases.len()).collect(),
            cases,
            origins,
        }
    }

    pub fn range(&self) -> Range<usize> {
        span(&self.indices)
    }
}

/// A prepared batch.
#[derive(Default)]
pub struct Batch {
    pub indices: Vec<usize>,
    pub origins: Vec<CaseOrigin>,
    pub snapshots: Vec<Option<Snapshot>>,
    pub assertions: BatchPlan,
    /// Each case's `metadata` (code graders read it).
    pub metadata: Vec<Option<Value>>,
    /// Each case's own `assertions` as written (part of the fingerprint).
    pub assertion_texts: Vec<Option<String>>,
    /// Each case as the preset sees it.
    pub texts: Vec<String>,
    /// Each case's own generation settings (empty: the suite's apply).
    pub settings: Vec<Map<String, Value>>,
}

impl Batch {
    pub fn range(&self) -> Range<usize> {
        span(&self.indices)
    }

    /// The cases from `at` on, as a batch of their own (this keeps the
    /// ones before).
    pub fn split_off(&mut self, at: usize) -> Self {
        Self {
            indices: self.indices.split_off(at),
            origins: self.origins.split_off(at),
            snapshots: self.snapshots.split_off(at),
            assertions: self.assertions.split_off(at),
            metadata: self.metadata.split_off(at),
            assertion_texts: self.assertion_texts.split_off(at),
            texts: self.texts.split_off(at),
            settings: self.settings.split_off(at),
        }
    }
}

/// What preparing needs of the suite.
pub struct Preparer<'a> {
    pub registry: &'a Registry,
    pub fixture: &'a Path,
    pub assertions: &'a Assertions,
    /// What the suite's preset declared: whether its cases name golden
    /// files, and the fields a case's derived id comes from.
    pub contract: &'a crate::fixture::SuiteContract,
    pub update_snapshots: bool,
    /// The directory every path the fixture names stays inside.
    pub root: &'a PathRoot,
    /// The run's outermost directory, resolved (checking pass only): a
    /// golden file under it is refused, since the run writes there.
    pub run_root: Option<&'a Path>,
}

impl Preparer<'_> {
    /// Prepares `raw`; with `validate`, every new assertion config is
    /// prepared once by its scorer. Problems (JSON path naming the case's
    /// own file when it has one, message) stop the batch.
    pub fn prepare(
        &self,
        raw: RawBatch,
        validate: Option<&mut ScorerPool>,
    ) -> Result<Batch, Vec<(String, String)>> {
        let RawBatch {
            indices,
            mut cases,
            origins,
        } = raw;
        let located = |problems: Vec<(String, String)>| -> Vec<(String, String)> {
            problems
                .into_iter()
                .map(|(path, message)| (origins::locate(&path, &origins, &indices), message))
                .collect()
        };
        // Trials, tags, skip and only are the host's: checked here, then
        // taken off (the run already selected the cases they ask for).
        let mut problems = Vec::new();
        let mut settings = Vec::with_capacity(cases.len());
        for ((case, i), origin) in cases.iter_mut().zip(&indices).zip(&origins) {
            let mut own = Map::new();
            if let Some(fields) = case.as_object_mut() {
                match case_fields::read(fields) {
                    Ok(read) => own = read.settings,
                    Err((field, message)) => {
                        problems.push((format!("cases[{i}].{field}"), message));
                    }
                }
                case_fields::ensure_id(fields, &self.contract.input_fields);
                case_fields::strip(fields);
            }
            // A template leading out of the root is refused before anything runs.
            if let Err(message) = origins::workspace_template(origin, self.root) {
                problems.push((format!("cases[{i}]"), message));
            }
            settings.push(own);
        }
        if !problems.is_empty() {
            return Err(located(problems));
        }
        let snapshots = if self.contract.snapshots {
            snapshots::resolve(
                self.fixture,
                &mut cases,
                &indices,
                &origins,
                self.update_snapshots,
                self.root,
            )
            .map_err(&located)?
        } else {
            vec![None; cases.len()]
        };
        if let Some(root) = self.run_root {
            let inside: Vec<(String, String)> = snapshots
                .iter()
                .zip(&indices)
                .filter_map(|(snapshot, i)| {
                    let snapshot = snapshot.as_ref()?;
                    snapshot
                        .real
                        .starts_with(root)
                        .then(|| {
                            (
                                format!("cases[{i}].expected.snapshot"),
                                format!(
                                    "golden file {}, which this run reads, is inside its output directory {}, where it writes its records: choose an output directory that holds none of the fixture's files",
                                    snapshot.path.display(),
                                    root.display()
                                ),
                            )
                        })
                })
                .collect();
            if !inside.is_empty() {
                return Err(located(inside));
            }
        }
        // Assertions are the host's: the preset sees each case without them.
        let own: Vec<Option<Value>> = cases
            .iter_mut()
            .map(|case| case.as_object_mut().and_then(|c| c.remove("assertions")))
            .collect();
        let sources: Vec<Option<Source<'_>>> = own
            .iter()
            .zip(&indices)
            .zip(&origins)
            .map(|((list, i), origin)| {
                list.as_ref().map(|list| Source {
                    path: format!("cases[{i}].assertions"),
                    list,
                    base: origin.base(self.fixture).to_path_buf(),
                })
            })
            .collect();
        let assertions = self
            .assertions
            .plan_batch(self.registry, &sources, validate)
            .map_err(&located)?;
        drop(sources);
        let metadata = cases.iter().map(|c| c.get("metadata").cloned()).collect();
        let texts = cases.iter().map(to_text).collect();
        let assertion_texts = own.iter().map(|a| a.as_ref().map(to_text)).collect();
        Ok(Batch {
            indices,
            origins,
            snapshots,
            assertions,
            metadata,
            assertion_texts,
            texts,
            settings,
        })
    }
}
