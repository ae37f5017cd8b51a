//! What a run directory may hold before a run claims it: none of what the
//! run reads ([`Inputs`]), and no entry named like a record unless it is a
//! cautilus run directory ([`RECORD_NAMES`], [`MARKERS`]). See the
//! module docs of `eval::run_dir`.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{LOCK_FILE, refuse, resolved};
use crate::eval::EvalError;
use crate::fixture::{CaseSource, Suite};

/// Entries a run may write directly in its directory (files, their
/// in-progress `.partial`, and the directories of transcripts, experiment
/// groups, steps and a project's suites).
pub const RECORD_NAMES: &[&str] = &[
    LOCK_FILE,
    "run.json",
    "cells.jsonl",
    "answers.jsonl",
    "eval-cases.json",
    "eval-cases.json.partial",
    "eval-observed.json",
    "eval-observed.json.partial",
    "eval-summary.json",
    "eval-summary.json.partial",
    "experiment.json",
    "experiment.json.partial",
    "experiment-run.json",
    "project-summary.json",
    "reused-outputs.json",
    "transcripts",
    "variants",
    "steps",
    "suites",
];

/// Records that mark a directory an earlier cautilus run wrote (before
/// [`LOCK_FILE`] existed), with the schema each starts with.
pub const MARKERS: &[(&str, &str)] = &[
    ("run.json", "cautilus.run.v1"),
    ("experiment-run.json", "cautilus.experiment_run.v1"),
    ("experiment.json", "cautilus.experiment.v1"),
    ("project-summary.json", "cautilus.project_summary.v1"),
    ("eval-summary.json", "cautilus.evaluation_summary.v1"),
];

/// What a run reads: no run directory may hold any of it.
#[derive(Debug, Default, Clone)]
pub struct Inputs {
    /// Files and directories the run reads.
    pub(super) paths: Vec<PathBuf>,
    /// Cases' own directories (a run directory may not lie inside one).
    pub(super) case_dirs: Vec<PathBuf>,
}

impl Inputs {
    /// Files and directories the run reads.
    pub fn of_files<'a>(files: impl IntoIterator<Item = &'a PathBuf>) -> Self {
        Self {
            paths: files.into_iter().cloned().collect(),
            case_dirs: Vec::new(),
        }
    }

    /// A loaded suite's fixture, what loading it read, and its cases' own
    /// files and directories.
    pub fn of_suite(suite: &Suite) -> Self {
        let mut inputs = Self::of_files(std::iter::once(&suite.file).chain(&suite.read));
        inputs.cases(&suite.cases);
        inputs
    }

    /// Adds a file or directory the run reads.
    pub fn with(mut self, path: Option<&Path>) -> Self {
        self.paths.extend(path.map(Path::to_path_buf));
        self
    }

    /// Adds everything `other` holds.
    pub fn merge(&mut self, other: Self) {
        self.paths.extend(other.paths);
        self.case_dirs.extend(other.case_dirs);
    }

    fn cases(&mut self, source: &CaseSource) {
        match source {
            CaseSource::Streamed(streamed) => self.paths.push(streamed.path.clone()),
            CaseSource::Selected(selection) => self.cases(&selection.source),
            CaseSource::Held(cases) => {
                for origin in cases.iter().map(|c| &c.origin) {
                    self.paths
                        .extend(origin.file.as_deref().map(Path::to_path_buf));
                    if let Some(dir) = &origin.dir {
                        self.paths.push(dir.to_path_buf());
                        self.case_dirs.push(dir.to_path_buf());
                    }
                }
            }
        }
    }
}

/// Refuses a directory that holds what the run reads, or lies in a case's
/// own directory.
pub(super) fn check_inputs(dir: &Path, area: &Path, inputs: &Inputs) -> Result<(), EvalError> {
    let advice = "a run writes its records into its output directory and must never write among the files it reads: choose a directory that holds none of them (by default runs go to <workspace>/.cautilus/runs/<id>)";
    for input in &inputs.paths {
        if resolved(input).starts_with(area) {
            return Err(refuse(
                dir,
                format!(
                    "the output directory holds {}, which this run reads; {advice}",
                    input.display()
                ),
            ));
        }
    }
    for case_dir in &inputs.case_dirs {
        if area.starts_with(resolved(case_dir)) {
            return Err(refuse(
                dir,
                format!(
                    "the output directory is inside case directory {}, which this run reads (its case file, workspace template and golden files); {advice}",
                    case_dir.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses record entries that are links, and a directory that is no run
/// directory yet holds an entry a run would write.
pub(super) fn check_entries(dir: &Path) -> Result<(), EvalError> {
    let mut present = Vec::new();
    for name in RECORD_NAMES {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            return Err(refuse(
                dir,
                format!(
                    "{} is a symbolic link; a run writes its records itself and never through a link: remove the link, or choose another --output-dir",
                    path.display()
                ),
            ));
        }
        present.push(path);
    }
    match present.first() {
        Some(first) if !is_run_dir(dir) => Err(refuse(
            dir,
            format!(
                "the output directory holds {}{}, which a run would overwrite, and it is not a cautilus run directory (no {LOCK_FILE} or run.json); choose a new or empty directory, or move {} away",
                first.display(),
                match present.len() {
                    1 => String::new(),
                    n => format!(" (and {} more such entries)", n - 1),
                },
                if present.len() == 1 { "it" } else { "them" },
            ),
        )),
        _ => Ok(()),
    }
}

/// Whether `dir` was written by a cautilus run (see the module docs).
pub fn is_run_dir(dir: &Path) -> bool {
    let regular =
        |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if regular(&dir.join(LOCK_FILE)) {
        return true;
    }
    MARKERS.iter().any(|(name, schema)| {
        let path = dir.join(name);
        if !regular(&path) {
            return false;
        }
        let mut head = Vec::new();
        let Ok(file) = File::open(&path) else {
            return false;
        };
        if file.take(4096).read_to_end(&mut head).is_err() {
            return false;
        }
        let head = String::from_utf8_lossy(&head);
        head.contains(&format!("\"schemaVersion\": \"{schema}\""))
            || head.contains(&format!("\"schemaVersion\":\"{schema}\""))
    })
}
