//! The runs of a project's records root, by id, and the check of an id a
//! client gives.
//!
//! A run's id is its directory relative to `<records>/runs/`: a plain run
//! or an experiment is `20261127T001128270Z-6175`, a suite of a project run
//! `20261127T001128270Z-6175/suites/support`. Names start with the time
//! the run started, so the greatest id is the newest. Only finished runs
//! are listed ([`crate::project::latest::finished`]: a run still going, or
//! killed before it said how it ended, is passed over).
//!
//! An id from a client is untrusted. [`Records::resolve`] takes only ids
//! made of plain path segments (`[A-Za-z0-9._-]`, no `.` or `..`, no
//! absolute path), and only a directory that, links resolved, is still
//! beneath the runs directory and holds a run's final record.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::EvidenceError;
use super::index::{LoadedRuns, RunIndex};
use super::summary::RunSummary;
use crate::project::latest::{LATEST, finished};

/// The longest run id taken.
const MAX_ID: usize = 512;
/// Runs [`Records::summarized`] reads at once.
const SUMMARIZED: usize = 8;

/// One run: its id and its directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    pub id: String,
    pub dir: PathBuf,
}

/// A project's records root (its config's `dir`), and the project's root
/// (the only place a run's fixture is read from); with the index of its
/// runs and the runs last read whole ([`super::index`]), shared by its
/// clones.
#[derive(Debug, Clone)]
pub struct Records {
    root: PathBuf,
    project: PathBuf,
    index: Arc<RunIndex>,
    loaded: Arc<LoadedRuns>,
}

impl Records {
    /// The records under `root` (which need not exist yet) of the project
    /// rooted at `project`, their run index kept in memory.
    pub fn new(root: &Path, project: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            project: project.to_path_buf(),
            index: Arc::new(RunIndex::in_memory(root)),
            loaded: Arc::new(LoadedRuns::default()),
        }
    }

    /// The records under `root` of the project rooted at `project`, their
    /// run index kept on disk (`<root>/index/runs.jsonl`, or the cache
    /// directory's when the records cannot be written).
    pub fn indexed(root: &Path, project: &Path) -> Self {
        Self {
            index: Arc::new(RunIndex::persisted(root)),
            ..Self::new(root, project)
        }
    }

    /// The records of the project `loaded` (its config's `dir`), their run
    /// index kept on disk.
    pub fn of_project(loaded: &crate::project::Loaded) -> Self {
        Self::indexed(&loaded.records_dir(), &loaded.root)
    }

    /// Run `run`'s summary, or why its records cannot be read (`id:
    /// reason`): from the index while the run's records are unchanged.
    pub fn summary(&self, run: &RunRef) -> Result<RunSummary, String> {
        self.index.summary(run)
    }

    /// What each of `runs` reads as ([`Records::summary`]), in order, those
    /// not indexed read at once (on a few threads).
    pub fn summaries(&self, runs: &[RunRef]) -> Vec<Result<RunSummary, String>> {
        self.index.summaries(runs)
    }

    /// `runs` with what each reads as ([`Records::summary`]), in order, a
    /// few at a time ([`Records::summaries`]): a loop that stops early has
    /// read at most a few runs past the one it stopped at.
    pub fn summarized<'a>(
        &'a self,
        runs: &'a [RunRef],
    ) -> impl Iterator<Item = (&'a RunRef, Result<RunSummary, String>)> + 'a {
        runs.chunks(SUMMARIZED)
            .flat_map(|chunk| chunk.iter().zip(self.summaries(chunk)))
    }

    /// [`Records::summarized`] for a series of suite `suite`: `None` for
    /// a run not read whole because its records name another suite (of
    /// another suite, or unreadable: passed over either way).
    pub fn summarized_of<'a>(
        &'a self,
        runs: &'a [RunRef],
        suite: &'a str,
    ) -> impl Iterator<Item = Option<Result<RunSummary, String>>> + 'a {
        runs.chunks(SUMMARIZED)
            .flat_map(move |chunk| self.index.summaries_of(chunk, Some(suite)))
    }

    /// Forgets the indexed runs that are not in `runs` (every finished run
    /// now) and saves the index when it changed.
    pub fn settle_index(&self, runs: &[RunRef]) {
        self.index.settle(runs);
    }

    /// Run `run` read whole: kept from a recent read while its records
    /// are unchanged.
    pub fn report(&self, run: &RunRef) -> Result<Arc<crate::report::Report>, EvidenceError> {
        self.loaded
            .report(&run.dir)
            .map_err(|source| EvidenceError::Read {
                run: run.id.clone(),
                source,
            })
    }

    /// The project's root.
    pub fn project_root(&self) -> &Path {
        &self.project
    }

    /// The records root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<records>/runs`.
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// Every finished run, newest first; a project run's suites in the
    /// order it recorded them.
    pub fn runs(&self) -> Vec<RunRef> {
        let runs = self.runs_dir();
        let mut found = Vec::new();
        for name in self.run_dir_names() {
            let dir = runs.join(&name);
            match crate::project::run::read_summary(&dir) {
                Ok(Some((_, summary))) => {
                    for suite in &summary.suites {
                        let Some(relative) = &suite.run_dir else {
                            continue;
                        };
                        let id = format!("{name}/{relative}");
                        if let Ok(run) = self.resolve(&id) {
                            found.push(run);
                        }
                    }
                }
                _ if finished(&dir) && holds_a_run(&dir) => found.push(RunRef { id: name, dir }),
                _ => {}
            }
        }
        found
    }

    /// The names of the directories under `<records>/runs` that can be
    /// run ids, newest first (finished or not).
    pub fn run_dir_names(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.runs_dir()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|name| plain_segment(name))
            .collect();
        names.sort_unstable_by(|a, b| b.cmp(a));
        names
    }

    /// The run `id` names (`latest`: the newest), checked (see the module
    /// docs).
    pub fn resolve(&self, id: &str) -> Result<RunRef, EvidenceError> {
        self.resolve_as(id, true)
    }

    /// The run `id` names, finished or not (a run in progress; `latest`
    /// is still the newest finished), checked as [`Records::resolve`]
    /// checks it.
    pub fn resolve_any(&self, id: &str) -> Result<RunRef, EvidenceError> {
        self.resolve_as(id, false)
    }

    fn resolve_as(&self, id: &str, only_finished: bool) -> Result<RunRef, EvidenceError> {
        let bad = |reason: &str| EvidenceError::BadRunId {
            id: id.chars().take(MAX_ID).collect(),
            reason: reason.into(),
        };
        let unknown = || EvidenceError::UnknownRun {
            id: id.to_string(),
            runs: self.runs_dir().display().to_string(),
        };
        if id == LATEST {
            return self.runs().into_iter().next().ok_or_else(unknown);
        }
        if id.is_empty() || id.len() > MAX_ID {
            return Err(bad("it is empty or too long"));
        }
        let path = Path::new(id);
        let plain = path.components().all(|c| match c {
            Component::Normal(part) => part.to_str().is_some_and(plain_segment),
            _ => false,
        });
        if !plain || id.ends_with('/') || id.contains("//") {
            return Err(bad(
                "it must be a path of plain names beneath the runs directory (letters, digits, `.`, `_`, `-`)",
            ));
        }
        let runs = std::fs::canonicalize(self.runs_dir()).map_err(|_| unknown())?;
        let dir = std::fs::canonicalize(runs.join(path)).map_err(|_| unknown())?;
        if !dir.starts_with(&runs) {
            return Err(bad("it leads outside the runs directory"));
        }
        let started = dir.join(crate::eval::records::run_state::FILE).is_file()
            || dir.join(crate::quality::resume::FILE).is_file();
        let known = if only_finished {
            holds_a_run(&dir) && finished(&dir)
        } else {
            (holds_a_run(&dir) && finished(&dir)) || started
        };
        if !dir.is_dir() || !known {
            return Err(unknown());
        }
        Ok(RunRef {
            id: id.to_string(),
            dir,
        })
    }
}

/// A name of letters, digits, `.`, `_` and `-`, not `.` or `..`.
pub fn plain_segment(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Whether `dir` holds a run's records a report can read.
fn holds_a_run(dir: &Path) -> bool {
    dir.join(crate::quality::experiment::FILE).is_file() || dir.join("eval-summary.json").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(runs: &Path, name: &str) {
        std::fs::create_dir_all(runs.join(name)).unwrap();
        std::fs::write(
            runs.join(name).join("run.json"),
            r#"{"status": "completed"}"#,
        )
        .unwrap();
        std::fs::write(
            runs.join(name).join("eval-summary.json"),
            r#"{"evaluations": []}"#,
        )
        .unwrap();
    }

    #[test]
    fn runs_are_listed_newest_first_and_ids_stay_beneath_the_runs_directory() {
        let dir = tempfile::tempdir().unwrap();
        let records = Records::new(dir.path(), dir.path());
        let runs = records.runs_dir();
        run(&runs, "20260101T000000000Z-0001");
        run(&runs, "20260102T000000000Z-0001");
        std::fs::create_dir_all(runs.join("20260103T000000000Z-0001")).unwrap();
        let ids: Vec<String> = records.runs().into_iter().map(|r| r.id).collect();
        assert_eq!(
            ids,
            ["20260102T000000000Z-0001", "20260101T000000000Z-0001"]
        );
        assert_eq!(
            records.resolve("latest").unwrap().id,
            "20260102T000000000Z-0001"
        );
        for id in ["../x", "/etc", "a/../b", "", "a b", "./a", "a//b", "a/"] {
            assert!(
                matches!(records.resolve(id), Err(EvidenceError::BadRunId { .. })),
                "{id}"
            );
        }
        assert!(matches!(
            records.resolve("20260103T000000000Z-0001"),
            Err(EvidenceError::UnknownRun { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_leading_out_of_the_runs_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        run(outside.path(), "elsewhere");
        let records = Records::new(dir.path(), dir.path());
        std::fs::create_dir_all(records.runs_dir()).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("elsewhere"),
            records.runs_dir().join("link"),
        )
        .unwrap();
        assert!(matches!(
            records.resolve("link"),
            Err(EvidenceError::BadRunId { .. })
        ));
        assert!(records.runs().is_empty());
    }
}
