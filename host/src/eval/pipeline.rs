//! The evaluation pipeline.
//!
//! `eval test`: fixture → checks (suite, taxonomy) → preset `translate`
//! (batches, in parallel) → `eval-cases.json` → per batch, on each worker
//! thread with its own stores: provider per case → preset `collect` →
//! preset `evaluate` → the batch's evaluations streamed to
//! `eval-observed.json` and `eval-summary.json` in case order. The host
//! writes the packets' headers, counts and recommendation. Nothing runs
//! unless the fixture and flags are valid.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::EvalError;
use super::assertions::{self, AssertionPlan, CaseExtras, Source};
use super::cases::{RunContext, run_cases};
use super::judge::{JudgeConfig, JudgeModel};
use super::origins::{self, CaseOrigin};
use super::records::{self, PacketWriter};
use super::snapshots::{self, Snapshot};
use super::tally::Tally;
use super::workers::{batches, run_ordered};
use crate::fixture::{self, Suite};
use crate::plugin::bindings::preset::exports::cautilus::plugin::preset_api::{
    CasePlan, PresetInfo, Verdict,
};
use crate::plugin::preset::PresetSession;
use crate::plugin::provider::ProviderSession;
use crate::plugin::{Grants, Limits, Plugin, PluginError, Registry};

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
fn batch_size(cases: usize, jobs: usize) -> usize {
    (cases / (jobs.max(1) * 8)).clamp(1, 128)
}

/// Worker threads by default: one per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Options of `eval test`.
#[derive(Debug, Clone)]
pub struct TestOptions {
    pub fixture: PathBuf,
    /// Source of truth for the workspace (default: the current directory).
    pub workspace: PathBuf,
    /// Default: `<workspace>/.cautilus/runs/<sortable id>/`.
    pub output_dir: Option<PathBuf>,
    /// Provider id or `.wasm` path (default `fixture`).
    pub provider: String,
    /// Canned results keyed by caseId, for the fixture backend.
    pub fixture_results: Option<PathBuf>,
    /// Limits of provider calls.
    pub limits: Limits,
    /// Worker threads (default: one per core on the messaging surface; one
    /// on the workspace surface, whose cases share the workspace).
    pub jobs: Option<usize>,
    /// Write or refresh golden files from this run (`--update-snapshots`).
    pub update_snapshots: bool,
}

/// Options of `eval evaluate`.
#[derive(Debug, Clone)]
pub struct EvaluateOptions {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub jobs: usize,
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
    /// Holds a summary written only for printing (`eval evaluate` without `--output`).
    _scratch: Option<tempfile::TempDir>,
}

impl Outcome {
    pub fn recommendation(&self) -> &str {
        self.tally.recommendation()
    }
}

/// A fixture that passed every offline check.
pub struct Validated {
    pub suite: Suite,
    pub preset: Arc<Plugin>,
    /// One plan per case, in order.
    pub plans: Vec<CasePlan>,
    /// The assertions of every case, resolved and checked.
    pub assertions: AssertionPlan,
    /// Where each case came from (its file, directory, workspace template).
    pub origins: Vec<CaseOrigin>,
    /// Each case's golden file, if it compares with one.
    pub snapshots: Vec<Option<Snapshot>>,
}

/// How a suite is checked beyond its fixture.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// Missing golden files are written after the run instead of an error.
    pub update_snapshots: bool,
    /// Limits of judge model calls (`eval test` passes its provider limits;
    /// validation, which calls no model, leaves the default).
    pub judge_limits: Option<Limits>,
}

/// Offline checks of a loaded suite: suite fields, taxonomy, case origins
/// and golden files, assertions, the preset's `translate` of every case,
/// and unique case ids.
pub fn validate_suite(
    registry: &Registry,
    mut suite: Suite,
    jobs: usize,
    options: &SuiteOptions,
) -> Result<Validated, EvalError> {
    let fixture = suite.file.clone();
    let fixture = fixture.as_path();
    for warning in &suite.warnings {
        eprintln!("warning: {warning}");
    }
    let preset = registry.preset_for(suite.pair)?;
    let cases: &mut [Value] = suite
        .body
        .get_mut("cases")
        .and_then(Value::as_array_mut)
        .map_or(&mut [], Vec::as_mut_slice);
    let origins = origins::take(cases);
    let located = |problems: Vec<(String, String)>| EvalError::Cases {
        file: fixture.to_path_buf(),
        problems: problems
            .into_iter()
            .map(|(path, message)| (origins::locate(&path, &origins), message))
            .collect(),
    };
    let snapshots = if suite.pair.surface == "app" {
        snapshots::resolve(fixture, cases, &origins, options.update_snapshots).map_err(&located)?
    } else {
        vec![None; cases.len()]
    };
    let judge = judge(registry, &suite, options)?;
    let assertions = assertion_plan(registry, fixture, &suite, &origins, judge.as_ref()).map_err(
        |e| match e {
            EvalError::Cases { problems, .. } => located(problems),
            other => other,
        },
    )?;
    // Assertions are the host's: the preset sees each case without them.
    if let Some(Value::Array(cases)) = suite.body.get_mut("cases") {
        for case in cases.iter_mut().filter_map(Value::as_object_mut) {
            case.remove("assertions");
        }
    }
    let cases = suite.cases();
    let suite_only: Map<String, Value> = suite
        .body
        .iter()
        .filter(|(key, _)| !HOST_SUITE_KEYS.contains(&key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let suite_json = Value::Object(suite_only).to_string();
    let mut plans = Vec::with_capacity(cases.len());
    let mut problems = Vec::new();
    run_ordered(
        &batches(cases.len(), batch_size(cases.len(), jobs)),
        jobs,
        || PresetSession::new(preset.clone(), preset_limits()).map_err(EvalError::from),
        |session, range, _| {
            let texts: Vec<String> = cases[range.clone()].iter().map(Value::to_string).collect();
            match session.translate(&suite_json, &texts, range.start) {
                Ok(batch) => Ok(Ok(batch)),
                Err(PluginError::InvalidInput { errors, .. }) => Ok(Err(errors)),
                Err(other) => Err(other.into()),
            }
        },
        |_, batch| {
            match batch {
                Ok(batch) => plans.extend(batch),
                Err(errors) => problems.extend(errors),
            }
            Ok(())
        },
    )?;
    // Plans line up with cases only when every batch translated.
    let mut seen = std::collections::HashMap::with_capacity(plans.len());
    let aligned = problems.is_empty();
    for (i, plan) in plans.iter().enumerate().filter(|_| aligned) {
        if let Some(first) = seen.insert(plan.case_id.as_str(), i) {
            problems.push((
                format!("cases[{i}].caseId"),
                format!(
                    "duplicate caseId `{}` (also cases[{first}]); case ids must be unique",
                    plan.case_id
                ),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(located(problems));
    }
    Ok(Validated {
        suite,
        preset,
        plans,
        assertions,
        origins,
        snapshots,
    })
}

/// The suite's judge model, if it configures one.
fn judge(
    registry: &Registry,
    suite: &Suite,
    options: &SuiteOptions,
) -> Result<Option<Arc<JudgeModel>>, EvalError> {
    let Some(value) = suite.body.get("judge") else {
        return Ok(None);
    };
    let config = JudgeConfig::parse(value).map_err(|problem| EvalError::Cases {
        file: suite.file.clone(),
        problems: vec![problem],
    })?;
    // Without run limits (offline validation) nothing calls the judge.
    let limits = options.judge_limits.clone().unwrap_or_default();
    let base = suite.file.parent().unwrap_or(Path::new(""));
    Ok(Some(Arc::new(JudgeModel::new(
        registry, &config, base, limits,
    )?)))
}

/// The suite's and every case's `assertions`, resolved and checked.
fn assertion_plan(
    registry: &Registry,
    fixture: &Path,
    suite: &Suite,
    origins: &[CaseOrigin],
    judge: Option<&Arc<JudgeModel>>,
) -> Result<AssertionPlan, EvalError> {
    let per_case: Vec<Option<Source<'_>>> = suite
        .cases()
        .iter()
        .enumerate()
        .map(|(i, case)| {
            case.get("assertions").map(|list| Source {
                path: format!("cases[{i}].assertions"),
                list,
                base: origins[i].base(fixture).to_path_buf(),
            })
        })
        .collect();
    let shared = suite.body.get("assertions").map(|list| Source {
        path: "assertions".into(),
        list,
        base: fixture.parent().unwrap_or(Path::new("")).to_path_buf(),
    });
    AssertionPlan::build(registry, fixture, &per_case, shared, judge)
}

/// Suite fields the host consumes; the preset never sees them.
const HOST_SUITE_KEYS: &[&str] = &["cases", "assertions", "judge"];

/// The header every packet of a run starts with.
fn header(schema: &str, fields: &Map<String, Value>) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("schemaVersion".into(), json!(schema));
    for key in HEADER_KEYS {
        if let Some(value) = fields.get(*key).filter(|v| !v.is_null()) {
            header.insert((*key).to_string(), value.clone());
        }
    }
    header
}

/// Suite identity carried from packet to packet.
const HEADER_KEYS: &[&str] = &[
    "surface",
    "preset",
    "suiteId",
    "suiteDisplayName",
    "skillId",
    "skillDisplayName",
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
    match fixture::load_fixture(&options.fixture)? {
        fixture::Fixture::Suite(suite) => {
            Ok(TestRun::Suite(run_suite(registry, options, suite, false)?))
        }
        fixture::Fixture::Steps(steps, warnings) => {
            for warning in &warnings {
                eprintln!("warning: {warning}");
            }
            Ok(TestRun::Steps(super::steps::run(
                registry, options, &steps,
            )?))
        }
    }
}

/// Runs one suite and writes the three records. With `keep_outputs`, the
/// outcome also holds each case's output node (what later steps read).
pub fn run_suite(
    registry: &Registry,
    options: &TestOptions,
    suite: Suite,
    keep_outputs: bool,
) -> Result<Outcome, EvalError> {
    let Validated {
        suite,
        preset,
        mut plans,
        assertions,
        origins,
        snapshots,
    } = validate_suite(
        registry,
        suite,
        options.jobs.unwrap_or_else(default_jobs),
        &SuiteOptions {
            update_snapshots: options.update_snapshots,
            judge_limits: Some(options.limits.clone()),
        },
    )?;
    let fixture_dir = suite
        .file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let jobs = options.jobs.unwrap_or(match suite.pair.mode {
        crate::taxonomy::Mode::Workspace => 1,
        crate::taxonomy::Mode::Messaging => default_jobs(),
    });
    let info = preset_info(&preset);
    let canned = read_fixture_results(options.fixture_results.as_deref())?;
    let provider = registry.resolve_provider(&options.provider)?;
    let grants = Arc::new(Grants {
        workspace: Some(options.workspace.clone()),
        ..Grants::default()
    });
    // Checks the provider's world before anything is written.
    let harness = ProviderSession::new(provider.clone(), options.limits.clone(), grants.clone())?
        .harness()
        .to_string();

    let fixture_ref = fixture_ref(&suite.file, &options.workspace);
    let mut fields: Map<String, Value> = HEADER_KEYS
        .iter()
        .filter_map(|key| Some((key.to_string(), suite.body.get(*key)?.clone())))
        .collect();
    fields.insert("suiteDisplayName".into(), json!(suite.suite_display_name));
    fields.insert("fixtureRef".into(), json!(fixture_ref));
    let output_dir = options
        .output_dir
        .clone()
        .unwrap_or_else(|| records::new_run_dir(&options.workspace));

    let mut cases_out = PacketWriter::create(
        &output_dir.join("eval-cases.json"),
        &header(&info.cases_schema, &fields),
        "cases",
    )?;
    let bodies: Vec<String> = plans
        .iter_mut()
        .map(|p| std::mem::take(&mut p.body))
        .collect();
    for body in &bodies {
        cases_out.push(body)?;
    }
    cases_out.finish(&Map::new())?;

    let summary_path = output_dir.join("eval-summary.json");
    let mut observed_out = PacketWriter::create(
        &output_dir.join("eval-observed.json"),
        &header(&info.observed_schema, &fields),
        "evaluations",
    )?;
    let mut summary_out = PacketWriter::create(
        &summary_path,
        &header(&info.summary_schema, &fields),
        "evaluations",
    )?;
    let mut tally = Tally::new(&info.counts);
    let mut outputs = Vec::new();
    let context = RunContext {
        provider: provider.id(),
        harness: &harness,
        mode: suite.pair.mode.as_str(),
        fixture_ref: &fixture_ref,
        canned: canned.as_ref(),
    };
    run_ordered(
        &batches(plans.len(), batch_size(plans.len(), jobs)),
        jobs,
        || -> Result<_, EvalError> {
            Ok((
                PresetSession::new(preset.clone(), preset_limits())?,
                ProviderSession::new(provider.clone(), options.limits.clone(), grants.clone())?,
                assertions.sessions(),
            ))
        },
        |(session, provider, scorers), range, stop| {
            let (runs, workspaces) = run_cases(
                &plans[range.clone()],
                &origins[range.clone()],
                &context,
                provider,
                stop,
            )?;
            let mut updated: Option<Vec<String>> = None;
            if options.update_snapshots {
                for (k, i) in range.clone().enumerate() {
                    if let Some(snapshot) = &snapshots[i] {
                        let batch = updated.get_or_insert_with(|| bodies[range.clone()].to_vec());
                        if let Some(message) = snapshots::update(snapshot, &runs[k], &mut batch[k])?
                        {
                            eprintln!("{message}");
                        }
                    }
                }
            }
            let batch_bodies = updated.as_deref().unwrap_or(&bodies[range.clone()]);
            let (evaluations, mut verdicts): (Vec<String>, Vec<Verdict>) = session
                .collect(batch_bodies, &runs, range.start)?
                .into_iter()
                .map(|c| (c.evaluation, c.verdict))
                .unzip();
            if !assertions.is_empty() {
                let extras = CaseExtras {
                    metadata: suite.cases()[range.clone()]
                        .iter()
                        .map(|case| case.get("metadata"))
                        .collect(),
                    workspaces: workspaces
                        .iter()
                        .map(|w| w.as_ref().map(tempfile::TempDir::path))
                        .collect(),
                    default_dir: fixture_dir,
                };
                let outcomes = assertions::run_batch(
                    &assertions,
                    scorers,
                    range.start,
                    &plans[range.clone()],
                    &runs,
                    &extras,
                );
                for (verdict, outcomes) in verdicts.iter_mut().zip(&outcomes) {
                    super::verdicts::apply(verdict, outcomes);
                }
            }
            let nodes: Vec<Value> = if keep_outputs {
                plans[range.clone()]
                    .iter()
                    .zip(&runs)
                    .map(|(plan, run)| super::steps::case_output(&plan.case_id, run))
                    .collect()
            } else {
                Vec::new()
            };
            Ok((evaluations, verdicts, nodes))
        },
        |_, (evaluations, verdicts, nodes)| {
            for evaluation in &evaluations {
                observed_out.push(evaluation)?;
            }
            outputs.extend(nodes);
            write_verdicts(&mut summary_out, &mut tally, &verdicts)
        },
    )?;
    observed_out.finish(&Map::new())?;
    summary_out.finish(&tally.trailer(records::now_rfc3339()))?;
    Ok(Outcome {
        tally,
        summary_path,
        output_dir: Some(output_dir),
        outputs,
        _scratch: None,
    })
}

/// Scores an observed packet written by any runner.
pub fn evaluate(registry: &Registry, options: &EvaluateOptions) -> Result<Outcome, EvalError> {
    let input_error = |message: String| EvalError::Input {
        path: options.input.clone(),
        message,
    };
    let text = std::fs::read_to_string(&options.input)
        .map_err(|e| input_error(format!("cannot read: {e}")))?;
    let observed: Value = serde_json::from_str(&text).map_err(|e| {
        input_error(format!(
            "not valid JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    drop(text);
    let schema = observed
        .get("schemaVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (preset, known) = registry.preset_for_observed(schema)?;
    let Some(preset) = preset else {
        return Err(input_error(format!(
            "unknown observed packet schemaVersion `{schema}`; known: {}",
            known.join(", ")
        )));
    };
    let evaluations: Vec<String> = match observed.get("evaluations").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => list.iter().map(Value::to_string).collect(),
        _ => {
            return Err(input_error(
                "evaluations: is missing or empty: an observed packet needs at least one evaluation"
                    .into(),
            ));
        }
    };
    let info = preset_info(&preset);
    let mut fields = observed.as_object().cloned().unwrap_or_default();
    drop(observed);
    // The preset that scores the packet decides its pair, whatever the input says.
    fields.insert("surface".into(), json!(info.surface));
    fields.insert("preset".into(), json!(info.preset));

    let scratch = match &options.output {
        Some(_) => None,
        None => Some(tempfile::tempdir().map_err(|source| EvalError::Write {
            path: std::env::temp_dir(),
            source,
        })?),
    };
    let summary_path = match (&options.output, &scratch) {
        (Some(path), _) => path.clone(),
        (None, Some(dir)) => dir.path().join("eval-summary.json"),
        (None, None) => unreachable!("a scratch dir exists without --output"),
    };
    let mut summary_out = PacketWriter::create(
        &summary_path,
        &header(&info.summary_schema, &fields),
        "evaluations",
    )?;
    let mut tally = Tally::new(&info.counts);
    run_ordered(
        &batches(
            evaluations.len(),
            batch_size(evaluations.len(), options.jobs),
        ),
        options.jobs,
        || PresetSession::new(preset.clone(), preset_limits()).map_err(EvalError::from),
        |session, range, _| Ok(session.evaluate(&evaluations[range.clone()], range.start)?),
        |_, verdicts| write_verdicts(&mut summary_out, &mut tally, &verdicts),
    )
    .map_err(|e| match e {
        EvalError::Plugin(PluginError::InvalidInput { errors, .. }) => EvalError::Cases {
            file: options.input.clone(),
            problems: errors,
        },
        other => other,
    })?;
    summary_out.finish(&tally.trailer(records::now_rfc3339()))?;
    Ok(Outcome {
        tally,
        summary_path,
        output_dir: None,
        outputs: Vec::new(),
        _scratch: scratch,
    })
}

fn write_verdicts(
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

fn preset_info(preset: &Plugin) -> PresetInfo {
    match &preset.description {
        crate::plugin::Description::Preset(info) => info.clone(),
        _ => unreachable!("the registry resolves presets by world"),
    }
}

fn read_fixture_results(path: Option<&Path>) -> Result<Option<Value>, EvalError> {
    let Some(path) = path else { return Ok(None) };
    let error = |message: String| EvalError::Input {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| error(format!("cannot read the fixture results: {e}")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| error(format!("not valid JSON at line {}: {e}", e.line())))?;
    if !value.is_object() {
        return Err(error(
            "fixture results must be a JSON object keyed by caseId".into(),
        ));
    }
    Ok(Some(value))
}

/// The fixture's reference recorded on every result: its path relative to
/// the workspace when inside it, with `/` separators, so it is byte-equal
/// across harnesses and machines.
fn fixture_ref(fixture: &Path, workspace: &Path) -> String {
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let fixture_abs = absolute(fixture);
    let relative = fixture_abs
        .strip_prefix(absolute(workspace))
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| fixture.to_path_buf());
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
