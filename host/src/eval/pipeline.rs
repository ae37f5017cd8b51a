//! The evaluation pipeline: options, the entry point of `eval test`, and
//! what its passes share (packet headers, limits, batch sizes).
//!
//! `eval test`: fixture → checks (suite, taxonomy) → every case checked in
//! batches ([`super::validate`]: preset `translate`, assertions, unique ids,
//! `eval-cases.json`) → the cases again, per batch on worker threads with
//! their own stores ([`super::suite_run`]: provider per case → preset
//! `collect` → assertions) → `eval-observed.json`, `eval-summary.json` and
//! the journal in case order. The host writes the packets' headers, counts
//! and recommendation. Nothing runs unless the fixture and flags are valid.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fixture::SuiteContract;
use serde_json::{Map, Value, json};

use super::EvalError;
use super::records::PacketWriter;
use super::run_records::CaseLines;
use super::tally::Tally;
use crate::fixture;
use crate::plugin::bindings::preset_api::{PresetInfo, Verdict};
use crate::plugin::{Limits, Plugin, Registry};

pub use super::suite_run::run_suite;
pub use super::validate::{Validated, validate_suite};

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
pub(super) fn batch_size(cases: usize, jobs: usize) -> usize {
    (cases / (jobs.max(1) * 8)).clamp(1, 128)
}

/// Provider calls in flight at once by default on the messaging surface
/// (API rate limits make more a choice the user should make).
pub const DEFAULT_CONCURRENCY: usize = 8;

/// Worker threads by default: one per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
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
    pub redact: super::redact::Redaction,
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
    pub default_replay: Option<super::cassette::ReplayMode>,
    /// Provider id or `.wasm` path (default `fixture`).
    pub provider: Option<String>,
    /// Canned results keyed by caseId, for the fixture backend.
    pub fixture_results: Option<PathBuf>,
    /// What the user grants the provider (`--grant-*`).
    pub grants: super::provider_setup::GrantFlags,
    /// How provider calls use the cassette (`--replay`; else the
    /// fixture's `replay`; else `live`).
    pub replay: Option<super::cassette::ReplayMode>,
    /// The cassette's name (`--cassette`; default: the suite id).
    pub cassette: Option<String>,
    /// The largest cassette file read, in MiB (`--max-cassette-mib`;
    /// default [`super::cassette_file::DEFAULT_MAX_MIB`]).
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
            .unwrap_or(super::cassette_file::DEFAULT_MAX_MIB)
            .saturating_mul(1 << 20)
    }
}

/// A finished run.
#[derive(Debug)]
pub struct Outcome {
    pub tally: Tally,
    /// The summary packet on disk.
    pub summary_path: PathBuf,
    /// Where the records were written (`eval test`).
    pub output_dir: Option<PathBuf>,
    /// Each case's output node, in case order, when asked for (steps).
    pub outputs: Vec<Value>,
    /// The signal that interrupted the run (its records hold the finished cases).
    pub interrupted: Option<&'static str>,
    /// Cases written, of `total`.
    pub finished: usize,
    pub total: usize,
    /// Holds a summary written only for printing (`eval evaluate` without `--output`).
    pub(super) _scratch: Option<tempfile::TempDir>,
    /// The claim on the run directory, held until the outcome is dropped
    /// (after the reports made of the records are written).
    pub(crate) _claim: Option<super::run_dir::RunDir>,
}

impl Outcome {
    pub fn recommendation(&self) -> &str {
        self.tally.recommendation()
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
    pub cassette: Option<std::sync::Arc<super::cassette::Cassette>>,
    /// The project config's stand-ins for provider environment variables
    /// (`[providers.*] base_url`), for the judge's provider too.
    pub provider_env: std::collections::BTreeMap<String, String>,
    /// The run's outermost directory: a golden file may not lie under it
    /// (the run would write its records among its inputs).
    pub run_root: Option<PathBuf>,
}

/// The header every packet of a run starts with: the host's identity
/// fields, then those the preset's contract marks as identity.
pub(super) fn header(
    schema: &str,
    fields: &Map<String, Value>,
    contract: &SuiteContract,
) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("schemaVersion".into(), json!(schema));
    for key in header_keys(contract) {
        if let Some(value) = fields.get(key).filter(|v| !v.is_null()) {
            header.insert(key.to_string(), value.clone());
        }
    }
    header
}

/// Suite identity carried from packet to packet: the host's, then the
/// preset's declared identity fields.
pub(super) fn header_keys(contract: &SuiteContract) -> impl Iterator<Item = &str> {
    HEADER_KEYS.iter().copied().chain(contract.header_fields())
}

/// The host's suite identity fields.
const HEADER_KEYS: &[&str] = &[
    "surface",
    "preset",
    "suiteId",
    "suiteDisplayName",
    "fixtureRef",
];

/// What `eval test` ran: one suite, or a sequence of steps.
#[derive(Debug)]
pub enum TestRun {
    Suite(Outcome),
    Steps(super::steps::StepsOutcome),
}

/// Runs a fixture end to end and writes its records.
pub fn test(registry: &Registry, options: &TestOptions) -> Result<TestRun, EvalError> {
    match fixture::load_fixture_within(&options.fixture, options.path_root.as_deref())? {
        fixture::Fixture::Suite(suite) => {
            Ok(TestRun::Suite(run_suite(registry, options, suite, false)?))
        }
        fixture::Fixture::Steps(..) if options.resume => Err(EvalError::Input {
            path: options.fixture.clone(),
            message: "`--resume` continues a suite run; a steps fixture runs again from the start (each step reads the outputs of the steps before it)".into(),
        }),
        fixture::Fixture::Steps(steps, warnings) => {
            for warning in &warnings {
                eprintln!("warning: {}", crate::term::shown(warning));
            }
            Ok(TestRun::Steps(super::steps::run(
                registry, options, &steps,
            )?))
        }
    }
}

pub(super) fn write_verdicts(
    out: &mut PacketWriter,
    tally: &mut Tally,
    verdicts: &[Verdict],
) -> Result<(), EvalError> {
    for verdict in verdicts {
        out.push(&verdict.body)?;
        tally.add(verdict);
    }
    Ok(())
}

pub(super) fn preset_info(preset: &Plugin) -> PresetInfo {
    preset_description(preset).info.clone()
}

/// What a preset plugin said about itself (its info and suite contract).
pub(super) fn preset_description(preset: &Plugin) -> &crate::plugin::preset::PresetDescription {
    match &preset.description {
        crate::plugin::Description::Preset(preset) => preset,
        _ => unreachable!("the registry resolves presets by world"),
    }
}

pub(super) fn read_fixture_results(path: Option<&Path>) -> Result<Option<Value>, EvalError> {
    let Some(path) = path else { return Ok(None) };
    let error = |message: String| EvalError::Input {
        path: path.to_path_buf(),
        message,
    };
    // Bounded, and never a pipe or a device (which would be waited on).
    let file = crate::regular_file::open(path)
        .and_then(|file| file.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|e| error(format!("cannot read the fixture results: {e}")))?;
    let text = crate::fixture::limits::read_text_from(path, file).map_err(|e| error(e.message))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| error(format!("not valid JSON at line {}: {e}", e.line())))?;
    if !value.is_object() {
        return Err(error(
            "fixture results must be a JSON object keyed by caseId".into(),
        ));
    }
    Ok(Some(value))
}

/// The canned results of trial `trial` (1-based): an answer
/// `{"trials": [a, b, …]}` becomes its entry (trial − 1) mod its length;
/// any other answer serves every trial.
pub(super) fn canned_for_trial(results: &mut Value, trial: u32) {
    let Some(results) = results.as_object_mut() else {
        return;
    };
    for answer in results.values_mut() {
        let Some(list) = answer
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("trials"))
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
        else {
            continue;
        };
        let at = (trial.max(1) as usize - 1) % list.len();
        *answer = list[at].clone();
    }
}

/// The fixture's reference recorded on every result: its path relative to
/// the workspace when inside it, with `/` separators, so it is byte-equal
/// across harnesses and machines.
pub fn fixture_ref(fixture: &Path, workspace: &Path) -> String {
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let fixture_abs = absolute(fixture);
    let relative = fixture_abs
        .strip_prefix(absolute(workspace))
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| fixture.to_path_buf());
    // `/`-separated; an absolute path (a fixture outside the workspace)
    // keeps one leading `/`.
    let parts: Vec<_> = relative
        .components()
        .filter(|c| !matches!(c, std::path::Component::RootDir))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    let joined = parts.join("/");
    if relative.has_root() {
        format!("/{joined}")
    } else {
        joined
    }
}
