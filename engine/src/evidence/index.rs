//! What makes the read models fast at scale (a thousand runs of a thousand
//! cells), the records staying the source of truth:
//!
//! - [`RunIndex`]: per finished run, its [`RunSummary`] (suite, times,
//!   status, counts, statistics: what the run list and the suite progress
//!   need), or why its records cannot be read; made from the run's outline
//!   ([`crate::report::outline`]: a typed parse of only what a summary
//!   needs, about a fifth of a whole read's cost), several runs at once on
//!   a few threads when a read model asks for many not yet indexed
//!   ([`RunIndex::summaries`]). Each entry carries the
//!   [`Stamp`] of the run's records it was made from (size and modification
//!   time of `run.json` and of its final record, `eval-summary.json` or
//!   `experiment.json`), checked on every use: an entry whose run changed
//!   is made again from the records, never trusted. Runs that are gone are
//!   dropped when the index is next saved. Persisted (by `cautilus serve`
//!   and `cautilus mcp`, [`super::Records::of_project`]) as JSON lines in
//!   `<records>/index/runs.jsonl`, written atomically (a temporary file
//!   renamed), or in the cache directory when the records cannot be
//!   written; a file that is damaged, of another schema or of another
//!   records root is ignored (and replaced), never trusted.
//! - [`LoadedRuns`]: the last few runs read whole ([`crate::report::load`]),
//!   each kept with its stamp, so a run looked at again (its cases, one
//!   case, its source lines, a comparison) is not read again; a run whose
//!   stamp changed is read again.
//!
//! Floats are stored by their bits so a summary read back from the file is
//! the one computed from the records, to the last bit.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use super::RunRef;
use super::summary::{Mean, RunSummary, Stats};
use crate::report::{Report, ReportError};

/// The index file's schema id (its first line).
pub const SCHEMA: &str = "cautilus.run_index.v1";
/// The index file, under `<records>/index/`.
pub const FILE: &str = "runs.jsonl";
/// Runs kept read whole.
pub const LOADED: usize = 6;
/// The most threads [`RunIndex::summaries`] reads runs on.
pub const THREADS: usize = 4;

/// Size and modification time (seconds, nanoseconds) of a run's
/// `run.json`, `eval-summary.json` and `experiment.json`, `None` for one
/// it does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp([Option<(u64, i64, u32)>; 3]);

impl Stamp {
    /// The stamp of the run in `dir` now.
    pub fn of(dir: &Path) -> Self {
        let one = |name: &str| {
            let meta = std::fs::metadata(dir.join(name)).ok()?;
            let time = meta.modified().ok()?;
            let (secs, nanos) = match time.duration_since(UNIX_EPOCH) {
                Ok(d) => (
                    i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                    d.subsec_nanos(),
                ),
                Err(e) => (
                    -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
                    e.duration().subsec_nanos(),
                ),
            };
            Some((meta.len(), secs, nanos))
        };
        Self([
            one(crate::eval::records::run_state::FILE),
            one("eval-summary.json"),
            one(crate::quality::experiment::FILE),
        ])
    }
}

/// A run summary as the index file holds it (floats by their bits).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Stored {
    suite_id: String,
    title: String,
    kind: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    status: String,
    interrupted: bool,
    recommendation: Option<String>,
    passed: Option<bool>,
    counts: BTreeMap<String, u64>,
    variants: Vec<String>,
    targets: Vec<String>,
    cells: u64,
    pass_rate: Option<u64>,
    mean_score: Option<(u64, u64, Option<u64>)>,
    cost_usd: Option<u64>,
    mean_latency_ms: Option<u64>,
    p95_latency_ms: Option<u64>,
}

fn bits(v: Option<f64>) -> Option<u64> {
    v.map(f64::to_bits)
}

fn float(v: Option<u64>) -> Option<f64> {
    v.map(f64::from_bits)
}

impl Stored {
    fn of(s: &RunSummary) -> Self {
        Self {
            suite_id: s.suite_id.clone(),
            title: s.title.clone(),
            kind: s.kind.clone(),
            started_at: s.started_at.clone(),
            finished_at: s.finished_at.clone(),
            status: s.status.clone(),
            interrupted: s.interrupted,
            recommendation: s.recommendation.clone(),
            passed: s.passed,
            counts: s.counts.clone(),
            variants: s.variants.clone(),
            targets: s.targets.clone(),
            cells: s.stats.cells,
            pass_rate: bits(s.stats.pass_rate),
            mean_score: s
                .stats
                .mean_score
                .map(|m| (m.n, m.mean.to_bits(), bits(m.sem))),
            cost_usd: bits(s.stats.cost_usd),
            mean_latency_ms: bits(s.stats.mean_latency_ms),
            p95_latency_ms: bits(s.stats.p95_latency_ms),
        }
    }

    fn summary(self, id: &str) -> RunSummary {
        RunSummary {
            id: id.to_string(),
            suite_id: self.suite_id,
            title: self.title,
            kind: self.kind,
            started_at: self.started_at,
            finished_at: self.finished_at,
            status: self.status,
            interrupted: self.interrupted,
            recommendation: self.recommendation,
            passed: self.passed,
            counts: self.counts,
            variants: self.variants,
            targets: self.targets,
            stats: Stats {
                cells: self.cells,
                pass_rate: float(self.pass_rate),
                mean_score: self.mean_score.map(|(n, mean, sem)| Mean {
                    n,
                    mean: f64::from_bits(mean),
                    sem: float(sem),
                }),
                cost_usd: float(self.cost_usd),
                mean_latency_ms: float(self.mean_latency_ms),
                p95_latency_ms: float(self.p95_latency_ms),
            },
        }
    }
}

/// The first line of the index file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Head {
    schema_version: String,
    records: String,
}

/// One run's line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Line {
    id: String,
    stamp: Stamp,
    summary: Option<Stored>,
    unreadable: Option<String>,
}

/// What the index knows of a run.
type Known = Result<RunSummary, String>;

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, (Stamp, Known)>,
    /// Entries changed since the file was written (or read).
    dirty: bool,
}

/// The run index (see the module docs).
#[derive(Debug)]
pub struct RunIndex {
    /// The records root, as its file names it.
    root: PathBuf,
    /// Where it is kept: `<records>/index/runs.jsonl`, then the cache
    /// directory's; none: in memory only.
    files: Vec<PathBuf>,
    state: Mutex<State>,
}

impl RunIndex {
    /// An index of the runs under `root` kept in memory only.
    pub fn in_memory(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            files: Vec::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// An index of the runs under `root` kept in `<root>/index/runs.jsonl`
    /// (or, when that cannot be written, in the cache directory), read
    /// from there now when it is there and sound.
    pub fn persisted(root: &Path) -> Self {
        let mut files = vec![root.join("index").join(FILE)];
        if let Some(cache) = crate::plugin::cache::CompiledCache::default_dir() {
            let key = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            use sha2::Digest;
            let hash = sha2::Sha256::digest(key.to_string_lossy().as_bytes());
            files.push(
                cache
                    .join("run-index")
                    .join(format!("{}.jsonl", hex::encode(&hash[..12]))),
            );
        }
        let index = Self {
            root: root.to_path_buf(),
            files,
            state: Mutex::new(State::default()),
        };
        let entries = index.files.iter().find_map(|f| index.read(f));
        if let Some(entries) = entries {
            index.lock().entries = entries;
        }
        index
    }

    /// The index file in use: the first that exists.
    pub fn file(&self) -> Option<&Path> {
        self.files
            .iter()
            .find(|f| f.is_file())
            .map(PathBuf::as_path)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn records_key(&self) -> String {
        std::fs::canonicalize(&self.root)
            .unwrap_or_else(|_| self.root.clone())
            .display()
            .to_string()
    }

    /// The entries of `file`, or `None` when it is missing, damaged, of
    /// another schema or of other records.
    fn read(&self, file: &Path) -> Option<HashMap<String, (Stamp, Known)>> {
        let mut lines = BufReader::new(std::fs::File::open(file).ok()?).lines();
        let head: Head = serde_json::from_str(&lines.next()?.ok()?).ok()?;
        if head.schema_version != SCHEMA || head.records != self.records_key() {
            return None;
        }
        let mut entries = HashMap::new();
        for line in lines {
            let line: Line = serde_json::from_str(&line.ok()?).ok()?;
            let known = match (line.summary, line.unreadable) {
                (Some(s), None) => Ok(s.summary(&line.id)),
                (None, Some(why)) => Err(why),
                _ => return None,
            };
            entries.insert(line.id, (line.stamp, known));
        }
        Some(entries)
    }

    /// What run `run` reads as: its summary, or why its records cannot be
    /// read (`id: reason`, as the run list says it). From the index when
    /// the run's stamp is the one indexed, else from the records (and
    /// indexed).
    pub fn summary(&self, run: &RunRef) -> Known {
        let stamp = Stamp::of(&run.dir);
        match self.indexed(run, &stamp) {
            Some(known) => known,
            None => self.make(run, stamp),
        }
    }

    /// What each of `runs` reads as ([`RunIndex::summary`]), in order; the
    /// runs not indexed read from their records at once, on up to
    /// [`THREADS`] threads.
    pub fn summaries(&self, runs: &[RunRef]) -> Vec<Known> {
        self.summaries_of(runs, None)
            .into_iter()
            .map(|k| k.expect("every run read"))
            .collect()
    }

    /// As [`RunIndex::summaries`]; with `suite`, a run not indexed whose
    /// records name another suite ([`crate::report::suite_of`]) is not
    /// read whole: `None` (it is of another suite, or unreadable).
    pub fn summaries_of(&self, runs: &[RunRef], suite: Option<&str>) -> Vec<Option<Known>> {
        let mut known: Vec<Option<Known>> = Vec::with_capacity(runs.len());
        let mut missing = Vec::new();
        for (i, run) in runs.iter().enumerate() {
            let stamp = Stamp::of(&run.dir);
            let indexed = self.indexed(run, &stamp);
            if indexed.is_none() {
                missing.push((i, stamp));
            }
            known.push(indexed);
        }
        let threads = crate::cores::available()
            .clamp(1, THREADS)
            .min(missing.len());
        let make = |run: &RunRef, stamp: Stamp| {
            let other = suite.is_some_and(|suite| {
                crate::report::suite_of(&run.dir).is_some_and(|named| named != suite)
            });
            (!other).then(|| self.make(run, stamp))
        };
        if threads <= 1 {
            for (i, stamp) in missing {
                known[i] = make(&runs[i], stamp);
            }
        } else {
            let mut shares: Vec<Vec<(usize, Stamp)>> = vec![Vec::new(); threads];
            for (n, one) in missing.into_iter().enumerate() {
                shares[n % threads].push(one);
            }
            let made: Vec<(usize, Option<Known>)> = std::thread::scope(|scope| {
                let workers: Vec<_> = shares
                    .into_iter()
                    .map(|share| {
                        let make = &make;
                        scope.spawn(move || {
                            share
                                .into_iter()
                                .map(|(i, stamp)| (i, make(&runs[i], stamp)))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            for (i, one) in made {
                known[i] = one;
            }
        }
        known
    }

    /// What the index says of `run` when its records still have `stamp`.
    fn indexed(&self, run: &RunRef, stamp: &Stamp) -> Option<Known> {
        match self.lock().entries.get(&run.id) {
            Some((indexed, known)) if indexed == stamp => Some(known.clone()),
            _ => None,
        }
    }

    /// What `run`, whose records have `stamp`, reads as (its outline,
    /// [`crate::report::outline`]), indexed.
    fn make(&self, run: &RunRef, stamp: Stamp) -> Known {
        let known = match crate::report::outline(&run.dir) {
            Ok(outline) => Ok(RunSummary::of_outline(run, &outline)),
            Err(error) => Err(format!("{}: {error}", run.id)),
        };
        self.note(run, stamp, known.clone());
        known
    }

    /// Indexes what `run`, whose records had `stamp` when read, reads as.
    fn note(&self, run: &RunRef, stamp: Stamp, known: Known) {
        let mut state = self.lock();
        state.entries.insert(run.id.clone(), (stamp, known));
        state.dirty = true;
    }

    /// Drops the entries of runs not in `runs` (every finished run now),
    /// and writes the index when it changed.
    pub fn settle(&self, runs: &[RunRef]) {
        let mut state = self.lock();
        let live: std::collections::HashSet<&str> = runs.iter().map(|r| r.id.as_str()).collect();
        let before = state.entries.len();
        state.entries.retain(|id, _| live.contains(id.as_str()));
        if state.entries.len() != before {
            state.dirty = true;
        }
        if !state.dirty || self.files.is_empty() {
            return;
        }
        let mut ids: Vec<&String> = state.entries.keys().collect();
        ids.sort();
        let mut text = serde_json::to_string(&Head {
            schema_version: SCHEMA.into(),
            records: self.records_key(),
        })
        .unwrap_or_default();
        text.push('\n');
        for id in ids {
            let (stamp, known) = &state.entries[id];
            let line = Line {
                id: id.clone(),
                stamp: stamp.clone(),
                summary: known.as_ref().ok().map(Stored::of),
                unreadable: known.as_ref().err().cloned(),
            };
            if let Ok(json) = serde_json::to_string(&line) {
                text.push_str(&json);
                text.push('\n');
            }
        }
        // The first place it can be written; the next ones then go stale
        // (and are passed over when read: the first sound one wins).
        for file in &self.files {
            if write_atomically(file, text.as_bytes()).is_ok() {
                state.dirty = false;
                break;
            }
        }
    }
}

/// Writes `file` through a temporary file beside it, renamed over it.
fn write_atomically(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

/// The last few runs read whole (see the module docs).
#[derive(Debug, Default)]
pub struct LoadedRuns {
    runs: Mutex<VecDeque<(PathBuf, Stamp, Arc<Report>)>>,
}

impl LoadedRuns {
    /// The report of the run in `dir`: the one kept when its stamp is
    /// unchanged, else read from the records (and kept, the least recently
    /// used one let go past [`LOADED`]).
    pub fn report(&self, dir: &Path) -> Result<Arc<Report>, ReportError> {
        let stamp = Stamp::of(dir);
        {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = runs.iter().position(|(d, s, _)| d == dir && *s == stamp) {
                let entry = runs.remove(at).expect("present");
                let report = entry.2.clone();
                runs.push_front(entry);
                return Ok(report);
            }
        }
        let report = Arc::new(crate::report::load(dir)?);
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.retain(|(d, _, _)| d != dir);
        runs.push_front((dir.to_path_buf(), stamp, report.clone()));
        runs.truncate(LOADED);
        Ok(report)
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
