//! The evaluation pipeline.
//!
//! `eval test`: fixture → checks (suite, taxonomy) → preset `translate` →
//! `eval-cases.json` → provider per case (one store for the run) → preset
//! `collect` → `eval-observed.json` → preset `evaluate` → `eval-summary.json`.
//! Nothing runs unless the fixture and flags are valid.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cases::{Identity, failed_result, invocation, observed_result, sampled_result};
use super::{EvalError, records};
use crate::fixture::{self, Suite};
use crate::plugin::oneshot::{PresetCall, call_preset};
use crate::plugin::provider::ProviderSession;
use crate::plugin::{Grants, Limits, Plugin, PluginError, Registry};

/// Limits of preset calls: they process whole packets (thousands of cases)
/// in one call, so they get more room than a per-case scorer call.
pub fn preset_limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(60),
        memory_bytes: 1024 * 1024 * 1024,
        fuel: None,
        output_bytes: 512 * 1024 * 1024,
    }
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
}

/// Options of `eval evaluate`.
#[derive(Debug, Clone)]
pub struct EvaluateOptions {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
}

/// A finished run.
#[derive(Debug)]
pub struct Outcome {
    pub summary: Value,
    /// Where the records were written, if anywhere.
    pub output_dir: Option<PathBuf>,
}

impl Outcome {
    pub fn recommendation(&self) -> &str {
        self.summary
            .get("recommendation")
            .and_then(Value::as_str)
            .unwrap_or("reject")
    }
}

/// A fixture that passed every offline check.
pub struct Validated {
    pub suite: Suite,
    pub preset: Arc<Plugin>,
    /// The preset's cases packet.
    pub cases: Value,
}

/// Offline checks: suite fields, taxonomy, and the preset's `translate`.
pub fn validate(registry: &Registry, fixture: &Path) -> Result<Validated, EvalError> {
    let suite = fixture::load(fixture)?;
    let preset = registry.preset_for(suite.pair)?;
    let body = Value::Object(suite.body.clone());
    let cases = call_preset(&preset, PresetCall::Translate(&body), &preset_limits())
        .map_err(|e| input_problems(e, fixture))?;
    Ok(Validated {
        suite,
        preset,
        cases,
    })
}

/// Runs a fixture end to end and writes the three records.
pub fn test(registry: &Registry, options: &TestOptions) -> Result<Outcome, EvalError> {
    let Validated {
        suite,
        preset,
        mut cases,
    } = validate(registry, &options.fixture)?;
    let canned = read_fixture_results(options.fixture_results.as_deref())?;
    let provider = registry.resolve_provider(&options.provider)?;
    let grants = Grants {
        workspace: Some(options.workspace.clone()),
        ..Grants::default()
    };
    let mut session =
        ProviderSession::new(provider.clone(), options.limits.clone(), Arc::new(grants))?;

    cases["fixtureRef"] = Value::String(fixture_ref(&options.fixture, &options.workspace));
    let output_dir = options
        .output_dir
        .clone()
        .unwrap_or_else(|| records::new_run_dir(&options.workspace));
    records::write_json(&output_dir.join("eval-cases.json"), &cases)?;

    let harness = session.harness().to_string();
    let identity = Identity {
        provider: provider.id(),
        harness: &harness,
        pair: suite.pair,
    };
    let empty = Vec::new();
    let case_list = cases
        .get("cases")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut results = Vec::with_capacity(case_list.len());
    for case in case_list {
        let id = case
            .get("caseId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let canned = canned.as_ref().and_then(|c| c.get(id));
        // A case with `repeatCount` is sampled that many times; canned samples
        // (a list) are handed out in order.
        let repeats = case
            .get("repeatCount")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            .max(1);
        let mut samples = Vec::new();
        for sample in 0..repeats {
            let canned = match canned {
                Some(Value::Array(list)) => list.get(usize::try_from(sample).unwrap_or(usize::MAX)),
                other => other,
            };
            let request = invocation(suite.pair, case, canned);
            let started = Instant::now();
            samples.push(match session.invoke(&request) {
                Ok(observation) => observed_result(case, observation, &identity, started.elapsed()),
                Err(error) => failed_result(case, error.to_string(), &identity, started.elapsed()),
            });
        }
        results.push(if samples.len() == 1 {
            samples.remove(0)
        } else {
            sampled_result(samples)
        });
    }
    let results = Value::Array(results);
    let observed = call_preset(
        &preset,
        PresetCall::Collect {
            cases: &cases,
            results: &results,
        },
        &preset_limits(),
    )?;
    records::write_json(&output_dir.join("eval-observed.json"), &observed)?;

    let mut summary = call_preset(&preset, PresetCall::Evaluate(&observed), &preset_limits())?;
    summary["evaluatedAt"] = Value::String(records::now_rfc3339());
    records::write_json(&output_dir.join("eval-summary.json"), &summary)?;
    Ok(Outcome {
        summary,
        output_dir: Some(output_dir),
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
    let mut summary = call_preset(&preset, PresetCall::Evaluate(&observed), &preset_limits())
        .map_err(|e| input_problems(e, &options.input))?;
    summary["evaluatedAt"] = Value::String(records::now_rfc3339());
    if let Some(output) = &options.output {
        records::write_json(output, &summary)?;
    }
    Ok(Outcome {
        summary,
        output_dir: None,
    })
}

/// A preset's `invalid-input` about a file the user gave becomes problems at
/// JSON paths of that file (a definition error); anything else stays a plugin error.
fn input_problems(error: PluginError, file: &Path) -> EvalError {
    match error {
        PluginError::InvalidInput { errors, .. } => EvalError::Cases {
            file: file.to_path_buf(),
            problems: errors,
        },
        other => other.into(),
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
