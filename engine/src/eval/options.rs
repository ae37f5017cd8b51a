//! The options of a run: `eval test`'s ([`TestOptions`]), which cells it
//! takes ([`CellFilters`]), how a suite is checked beyond its fixture
//! ([`SuiteOptions`]), and the defaults of workers, provider calls in
//! flight, batch sizes and preset limits.

use std::path::PathBuf;
use std::time::Duration;

use crate::eval::records::run_records::CaseLines;
use crate::plugin::Limits;

/// Limits of one preset call (one batch of cases).
pub fn preset_limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(30),
        memory_bytes: 256 * 1024 * 1024,
        fuel: None,
        output_bytes: 64 * 1024 * 1024,
    }
}

/// Cases per batch: enough to amortize a call, few enough that every
/// worker gets several batches (and records appear steadily).
pub(crate) fn batch_size(cases: usize, jobs: usize) -> usize {
    (cases / (jobs.max(1) * 8)).clamp(1, 128)
}

/// Cases per batch when a batch's work is the host's and its plugins' own
/// (no provider call, judge, code grader or scorer waits on the network or
/// a program, and `--jobs` was not given): at least
/// [`MIN_LOCAL_BATCH`], so a small suite stays on one worker, whose plugin
/// instances cost more to make than several such cases take to run.
pub(crate) fn local_batch_size(cases: usize, jobs: usize) -> usize {
    batch_size(cases, jobs).max(MIN_LOCAL_BATCH)
}

/// See [`local_batch_size`].
pub(crate) const MIN_LOCAL_BATCH: usize = 8;

/// Worker threads for `cases` cases in batches of `size`: `jobs`, but no
/// more than there are batches (a worker without one is a thread, and its
/// instances, for nothing).
pub(crate) fn workers(cases: usize, size: usize, jobs: usize) -> usize {
    jobs.min(cases.div_ceil(size.max(1)).max(1))
}

/// Provider calls in flight at once by default on the messaging surface
/// (API rate limits make more a choice the user should make).
pub const DEFAULT_CONCURRENCY: usize = 8;

/// Worker threads by default: one per core.
pub fn default_jobs() -> usize {
    crate::cores::available()
}

/// Options of `eval test`.
#[derive(Debug, Clone)]
pub struct TestOptions {
    pub fixture: PathBuf,
    /// The directory every path the fixture names must stay inside
    /// (`--path-root`; default: see [`crate::fixture::PathRoot::for_fixture`]).
    pub path_root: Option<PathBuf>,
    /// Value-relative paths redacted in everything the run keeps (the
    /// project's `redact` and `--redact`; see `redact`).
    pub redact: crate::eval::redact::Redaction,
    /// The judge (`{provider, model}`) of a suite whose fixture names none:
    /// the project's `[judge]`.
    pub default_judge: Option<serde_json::Value>,
    /// `--judge`: the judge of every suite, over the fixture's.
    pub judge: Option<serde_json::Value>,
    /// Settings from the project config that stand in for environment
    /// variables a provider reads (`OPENAI_BASE_URL` …) where unset.
    pub provider_env: std::collections::BTreeMap<String, String>,
    /// Source of truth for the workspace (default: the current directory).
    pub workspace: PathBuf,
    /// Default: `<records root>/runs/<sortable id>/`.
    pub output_dir: Option<PathBuf>,
    /// Where run directories and cassettes go (the project config's
    /// `dir`); default `<workspace>/.cautilus`.
    pub records: Option<PathBuf>,
    /// The project config's provider and replay mode: used where neither a
    /// flag nor the fixture says (flag > fixture > config).
    pub default_provider: Option<String>,
    pub default_replay: Option<crate::eval::provider::cassette::ReplayMode>,
    /// Provider id or `.wasm` path (default `fixture`).
    pub provider: Option<String>,
    /// Canned results keyed by caseId, for the fixture backend.
    pub fixture_results: Option<PathBuf>,
    /// What the user grants the provider (`--grant-*`).
    pub grants: crate::eval::provider::setup::GrantFlags,
    /// How provider calls use the cassette (`--replay`; else the
    /// fixture's `replay`; else `live`).
    pub replay: Option<crate::eval::provider::cassette::ReplayMode>,
    /// The cassette's name (`--cassette`; default: the suite id).
    pub cassette: Option<String>,
    /// The largest cassette file read, in MiB (`--max-cassette-mib`;
    /// default [`crate::eval::provider::cassette_file::DEFAULT_MAX_MIB`]).
    pub max_cassette_mib: Option<u64>,
    /// Limits of provider calls.
    pub limits: Limits,
    /// Worker threads (default: one per core on the messaging surface; one
    /// on the workspace surface, whose cases share the workspace).
    pub jobs: Option<usize>,
    /// Provider calls in flight at once, for a provider that waits on the
    /// network or a program, on the messaging surface (default
    /// [`DEFAULT_CONCURRENCY`]; the workspace surface runs its cases one at
    /// a time, inline).
    pub concurrency: Option<usize>,
    /// Write or refresh golden files from this run (`--update-snapshots`).
    pub update_snapshots: bool,
    /// Keep each coding-agent sample's workspace copy for inspection
    /// (`--keep-workspaces`).
    pub keep_workspaces: bool,
    /// Continue the run in `output_dir` (`--resume`): its journal's
    /// finished cases are kept, the others run.
    pub resume: bool,
    /// Print each case's line as it is written, keep it, or neither.
    pub case_lines: CaseLines,
    /// Which cells run (`--variant`, `--case`, `--trials`).
    pub cells: CellFilters,
    /// Re-score the outputs an earlier run recorded instead of calling a
    /// provider (`--reuse-outputs <run-dir>`).
    pub reuse_outputs: Option<PathBuf>,
    /// The canned answers stand for recorded outputs: a case without one
    /// fails rather than getting the fixture backend's made-up answer.
    pub require_canned: bool,
    /// The trial (1-based) this run is of its cells: a canned answer
    /// `{"trials": [a, b, …]}` answers trial n with its entry (n − 1) mod
    /// its length.
    pub trial: u32,
}

/// Which of a suite's cells a run takes (case × variant × trial).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CellFilters {
    /// Variant names (`*` patterns); empty: every variant.
    pub variants: Vec<String>,
    /// Case ids (`*` patterns); empty: every case.
    pub cases: Vec<String>,
    /// Only cases carrying one of these tags; empty: every case.
    pub tags: Vec<String>,
    /// Trials of every case, over the fixture's.
    pub trials: Option<u32>,
    /// Trials of every case when the fixture names none (the project's
    /// `defaults.trials`).
    pub default_trials: Option<u32>,
    /// `(k, n)`: only the cases whose 0-based position p has p mod n =
    /// k − 1 (`--shard k/n`), every variant and trial of each.
    pub shard: Option<(u32, u32)>,
}

impl TestOptions {
    /// The records root: run directories and cassettes.
    pub fn records_root(&self) -> PathBuf {
        self.records
            .clone()
            .unwrap_or_else(|| self.workspace.join(".cautilus"))
    }

    /// The largest cassette file read, in bytes.
    pub fn max_cassette_bytes(&self) -> u64 {
        self.max_cassette_mib
            .unwrap_or(crate::eval::provider::cassette_file::DEFAULT_MAX_MIB)
            .saturating_mul(1 << 20)
    }
}

/// How a suite is checked beyond its fixture.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// Missing golden files are written after the run instead of an error.
    pub update_snapshots: bool,
    /// Limits of judge model calls (`eval test` passes its provider limits;
    /// validation, which calls no model, leaves the default).
    pub judge_limits: Option<Limits>,
    /// Where judge calls are recorded or replayed from (`--replay`).
    pub cassette: Option<std::sync::Arc<crate::eval::provider::cassette::Cassette>>,
    /// The project config's stand-ins for provider environment variables
    /// (`[providers.*] base_url`), for the judge's provider too.
    pub provider_env: std::collections::BTreeMap<String, String>,
    /// The run's outermost directory: a golden file may not lie under it
    /// (the run would write its records among its inputs).
    pub run_root: Option<PathBuf>,
}
