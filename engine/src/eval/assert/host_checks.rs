//! Assertion types the host runs itself, outside any plugin:
//!
//! - `code-grader`: a program the fixture names (`command: [argv]`; an
//!   element written `./x` or `../x` is a file next to the fixture or the
//!   case's case.yaml), run
//!   with the case on stdin as JSON, in the case's workspace (or the
//!   fixture's directory), with a timeout (default 60 s) and capped output.
//!   It answers `{score, passed?, assertions: [{text, passed}], details}` on
//!   stdout, or, as a plain program, passes by exiting 0. A program that
//!   crashes or exits non-zero without a JSON answer fails the assertion
//!   with an excerpt of its stderr, never a silent 0. A grader that cannot
//!   start, times out or is killed judged nothing: the assertion is
//!   `errored` (and so is the case), not failed.
//! - `execution-metrics`: bounds on what the provider captured (tool calls,
//!   model calls, tokens, cost, duration). A bounded metric the provider did
//!   not capture is `uncaptured` and fails the assertion: an unmeasured
//!   bound is not a pass.
//!
//! The program runs by the user's own fixture, like a test script: it is
//! trusted as much as the fixture is, and gets the host's `PATH` and an
//! otherwise empty environment. It runs through [`crate::process_tree`]:
//! every process it starts ends with it, and its timeout bounds the run
//! whatever it leaves holding its pipes.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::plugin::bindings::process;
use crate::plugin::bindings::types::Observation;

/// Default time limit of a code grader.
const GRADER_TIMEOUT_MS: u64 = 60_000;
/// Most bytes read from a grader's stdout and from its stderr.
const GRADER_OUTPUT_BYTES: usize = 1024 * 1024;
/// Characters of stderr quoted in a failure.
const STDERR_EXCERPT: usize = 400;
/// Score at or above which a grader's answer passes when it says no `passed`.
const PASS_SCORE: f64 = 0.5;

/// What a host check concluded for one case.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub passed: bool,
    /// The check could not be carried out (the grader could not run, timed
    /// out or was killed): nothing was judged.
    pub errored: bool,
    /// Every problem is a signal the provider did not capture (reported as
    /// `uncaptured`; still a failure).
    pub uncaptured: bool,
    pub score: Option<f64>,
    pub detail: Option<String>,
}

/// A `code-grader` assertion's config.
#[derive(Debug, Clone)]
pub struct CodeGrader {
    program: String,
    args: Vec<String>,
    timeout: Duration,
}

/// What a code grader reads on stdin.
pub struct GraderCase<'a> {
    pub input: Option<&'a str>,
    pub expected: Option<&'a str>,
    pub criteria: Option<&'a str>,
    pub metadata: Option<&'a Value>,
    pub observation: &'a Observation,
    pub duration_ms: Option<u64>,
    pub workspace: Option<&'a Path>,
}

impl CodeGrader {
    /// Parses `{command: [program, args...], timeout_ms?}`. A program given
    /// as a relative path (`./grade.sh`) resolves against `base` and must lie
    /// inside `root`, as must an argument written as such a path that exists.
    pub fn parse(
        config: &Map<String, Value>,
        base: &Path,
        root: &crate::fixture::PathRoot,
    ) -> Result<Self, String> {
        for key in config.keys() {
            if !["command", "timeout_ms"].contains(&key.as_str()) {
                return Err(format!(
                    "unknown code-grader field `{key}`; it takes `command` and `timeout_ms`"
                ));
            }
        }
        let argv: Vec<String> = match config.get("command") {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or("`command` must list strings: [program, arg, ...]")?,
            _ => {
                return Err(
                    "`command` is missing: give the program and its arguments as a list, e.g. `command: [python3, grade.py]`"
                        .into(),
                );
            }
        };
        let timeout = match config.get("timeout_ms") {
            None => GRADER_TIMEOUT_MS,
            Some(v) => v
                .as_u64()
                .filter(|ms| *ms > 0)
                .ok_or("`timeout_ms` must be a positive whole number of milliseconds")?,
        };
        // `./x` and `../x` name files next to the fixture (or case.yaml):
        // the program must exist there; an argument does when such a file
        // exists (otherwise it is left for the program, e.g. a workspace path).
        let relative = |arg: &str| arg.starts_with("./") || arg.starts_with("../");
        let mut program = argv[0].clone();
        if relative(&program) {
            let path = base.join(&program);
            let real = root.contain(&path, &program)?;
            if !real.is_file() {
                return Err(format!(
                    "program `{program}` not found (looked for {})",
                    path.display()
                ));
            }
            program = real.display().to_string();
        }
        let args = argv[1..]
            .iter()
            .map(|arg| match base.join(arg) {
                path if relative(arg) && path.exists() => root
                    .contain(&path, arg)
                    .map(|real| real.display().to_string()),
                _ => Ok(arg.clone()),
            })
            .collect::<Result<_, String>>()?;
        Ok(Self {
            program,
            args,
            timeout: Duration::from_millis(timeout),
        })
    }

    /// Runs the grader on one case in `cwd`.
    pub fn run(&self, case: &GraderCase<'_>, cwd: &Path) -> Checked {
        let stdin = stdin_json(case).to_string().into_bytes();
        let command = process::Command {
            program: self.program.clone(),
            args: self.args.clone(),
            stdin: Some(stdin),
            cwd: None,
            env: Vec::new(),
            timeout_ms: None,
        };
        let output = match crate::plugin::imports::run_bounded(
            &command,
            &[],
            cwd,
            self.timeout,
            GRADER_OUTPUT_BYTES,
        ) {
            Ok(output) => output,
            Err(error) => return errored(format!("the code grader could not run: {error:?}")),
        };
        let stderr = stderr_note(&String::from_utf8_lossy(&output.stderr));
        if output.timed_out {
            return errored(format!(
                "the code grader timed out after {} ms{stderr}",
                self.timeout.as_millis()
            ));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        if let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(stdout.trim()) {
            return from_answer(&answer);
        }
        match output.status {
            Some(0) => Checked {
                passed: true,
                errored: false,
                uncaptured: false,
                score: Some(1.0),
                detail: None,
            },
            Some(code) => failed(format!("the code grader exited with status {code}{stderr}")),
            None => errored(format!("the code grader was killed by a signal{stderr}")),
        }
    }
}

fn failed(detail: String) -> Checked {
    Checked {
        passed: false,
        errored: false,
        uncaptured: false,
        score: Some(0.0),
        detail: Some(detail),
    }
}

/// The grader did not judge the case: no score, and the case is `errored`.
fn errored(detail: String) -> Checked {
    Checked {
        passed: false,
        errored: true,
        uncaptured: false,
        score: None,
        detail: Some(detail),
    }
}

/// `; stderr: <excerpt>` for a failure detail, or nothing without stderr.
fn stderr_note(stderr: &str) -> String {
    match stderr.trim() {
        "" => String::new(),
        text => format!("; stderr: {}", crate::plugin::excerpt(text, STDERR_EXCERPT)),
    }
}

/// A grader's JSON answer: `passed` if given, else `score >= 0.5`, else
/// every listed assertion passed.
fn from_answer(answer: &Map<String, Value>) -> Checked {
    let score = answer
        .get("score")
        .and_then(Value::as_f64)
        .map(|s| s.clamp(0.0, 1.0));
    let checks: Vec<(String, bool)> = answer
        .get("assertions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|a| {
                    (
                        a.get("text")
                            .and_then(Value::as_str)
                            .unwrap_or("?")
                            .to_string(),
                        a.get("passed").and_then(Value::as_bool).unwrap_or(false),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let passed = match (answer.get("passed").and_then(Value::as_bool), score) {
        (Some(passed), _) => passed,
        (None, Some(score)) => score >= PASS_SCORE,
        (None, None) => !checks.is_empty() && checks.iter().all(|(_, ok)| *ok),
    };
    let mut detail: Vec<String> = checks
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(text, _)| format!("failed: {text}"))
        .collect();
    match answer.get("details") {
        Some(Value::String(s)) if !s.is_empty() => detail.push(s.clone()),
        Some(Value::Null) | None => {}
        Some(other) => detail.push(other.to_string()),
    }
    Checked {
        passed,
        errored: false,
        uncaptured: false,
        score: score.or(Some(if passed { 1.0 } else { 0.0 })),
        detail: (!detail.is_empty()).then(|| detail.join("; ")),
    }
}

fn stdin_json(case: &GraderCase<'_>) -> Value {
    let parse = |text: Option<&str>| {
        text.map_or(Value::Null, |t| serde_json::from_str(t).unwrap_or(json!(t)))
    };
    let o = case.observation;
    json!({
        "input": parse(case.input),
        "output": o.final_text,
        "expected": parse(case.expected),
        "criteria": case.criteria,
        "metadata": case.metadata,
        "workspace_path": case.workspace.map(|p| p.display().to_string()),
        "usage": o.usage.as_ref().map(|u| json!({
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cached_input_tokens": u.cached_input_tokens,
            "reasoning_tokens": u.reasoning_tokens,
            "llm_calls": u.llm_calls,
        })),
        "cost": o.cost_usd,
        "duration": case.duration_ms,
        "tool_calls": o.tool_calls.as_ref().map(|calls| calls.iter().map(|c| json!({
            "name": c.name,
            "arguments": c.arguments.as_deref().map(|a| serde_json::from_str::<Value>(a).unwrap_or(json!(a))),
            "output": c.output,
            "succeeded": c.succeeded,
            "duration_ms": c.duration_ms,
        })).collect::<Vec<_>>()),
    })
}

/// An `execution-metrics` assertion's bounds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    max_tool_calls: Option<f64>,
    max_llm_calls: Option<f64>,
    max_tokens: Option<f64>,
    max_cost_usd: Option<f64>,
    max_duration_ms: Option<f64>,
}

const METRIC_KEYS: &[&str] = &[
    "max_tool_calls",
    "max_llm_calls",
    "max_tokens",
    "max_cost_usd",
    "max_duration_ms",
];

impl Metrics {
    pub fn parse(config: &Map<String, Value>) -> Result<Self, String> {
        let mut bounds = [None; 5];
        for (key, value) in config {
            let Some(slot) = METRIC_KEYS.iter().position(|k| k == key) else {
                return Err(format!(
                    "unknown execution-metrics bound `{key}`; bounds are {}",
                    METRIC_KEYS.join(", ")
                ));
            };
            bounds[slot] = Some(
                value
                    .as_f64()
                    .filter(|v| *v >= 0.0 && v.is_finite())
                    .ok_or_else(|| format!("`{key}` must be a non-negative number, got {value}"))?,
            );
        }
        if bounds.iter().all(Option::is_none) {
            return Err(format!(
                "execution-metrics needs at least one bound: {}",
                METRIC_KEYS.join(", ")
            ));
        }
        let [
            max_tool_calls,
            max_llm_calls,
            max_tokens,
            max_cost_usd,
            max_duration_ms,
        ] = bounds;
        Ok(Self {
            max_tool_calls,
            max_llm_calls,
            max_tokens,
            max_cost_usd,
            max_duration_ms,
        })
    }

    /// Checks every bound against what the provider captured; `duration_ms`
    /// is the provider's own figure, else the host's measurement.
    pub fn check(&self, o: &Observation, measured_ms: Option<u64>) -> Checked {
        let usage = o.usage.as_ref();
        let tokens = usage.and_then(|u| match (u.input_tokens, u.output_tokens) {
            (None, None) => None,
            (i, out) => Some(i.unwrap_or(0) + out.unwrap_or(0)),
        });
        let rows: [(&str, Option<f64>, Option<f64>); 5] = [
            (
                "tool_calls",
                self.max_tool_calls,
                o.tool_calls.as_ref().map(|c| c.len() as f64),
            ),
            (
                "llm_calls",
                self.max_llm_calls,
                usage.and_then(|u| u.llm_calls).map(f64::from),
            ),
            ("tokens", self.max_tokens, tokens.map(|t| t as f64)),
            ("cost_usd", self.max_cost_usd, o.cost_usd),
            (
                "duration_ms",
                self.max_duration_ms,
                o.duration_ms.or(measured_ms).map(|d| d as f64),
            ),
        ];
        let mut problems = Vec::new();
        let mut unmeasured = 0;
        let mut checked = 0;
        let mut within = 0;
        for (name, bound, value) in rows {
            let Some(bound) = bound else { continue };
            checked += 1;
            match value {
                None => {
                    unmeasured += 1;
                    problems.push(format!(
                        "{name} uncaptured: the provider did not report it, so max {bound} cannot be checked"
                    ));
                }
                Some(value) if value > bound => {
                    problems.push(format!("{name} {value} exceeds max {bound}"));
                }
                Some(_) => within += 1,
            }
        }
        Checked {
            passed: problems.is_empty(),
            errored: false,
            uncaptured: unmeasured > 0 && unmeasured == problems.len(),
            score: Some(f64::from(within) / f64::from(checked.max(1))),
            detail: (!problems.is_empty()).then(|| problems.join("; ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn an_uncaptured_metric_fails_and_says_so() {
        let metrics = Metrics::parse(&config(
            json!({"max_tool_calls": 3, "max_duration_ms": 1000}),
        ))
        .unwrap();
        let mut o = Observation::empty();
        let result = metrics.check(&o, Some(10));
        assert!(!result.passed);
        assert!(result.uncaptured);
        assert!(result.detail.unwrap().contains("tool_calls uncaptured"));
        o.tool_calls = Some(Vec::new());
        assert!(metrics.check(&o, Some(10)).passed);
        let slow = metrics.check(&o, Some(5000));
        assert_eq!(
            slow.detail.as_deref(),
            Some("duration_ms 5000 exceeds max 1000")
        );
        assert_eq!(slow.score, Some(0.5));
    }

    #[test]
    fn metric_configs_are_checked() {
        assert!(
            Metrics::parse(&config(json!({})))
                .unwrap_err()
                .contains("at least one")
        );
        assert!(
            Metrics::parse(&config(json!({"max_tokenz": 1})))
                .unwrap_err()
                .contains("unknown")
        );
        assert!(
            Metrics::parse(&config(json!({"max_tokens": -1})))
                .unwrap_err()
                .contains("non-negative")
        );
    }

    #[test]
    fn grader_answers_decide_by_passed_then_score_then_assertions() {
        let answer = |v: Value| from_answer(v.as_object().unwrap());
        assert!(answer(json!({"score": 0.7})).passed);
        assert!(!answer(json!({"score": 0.7, "passed": false})).passed);
        let listed = answer(
            json!({"assertions": [{"text": "a", "passed": true}, {"text": "b", "passed": false}], "details": "d"}),
        );
        assert!(!listed.passed);
        assert_eq!(listed.detail.as_deref(), Some("failed: b; d"));
    }

    #[test]
    fn grader_configs_are_checked() {
        let base = Path::new(".");
        let root = crate::fixture::PathRoot::open(base, "the test root").unwrap();
        assert!(
            CodeGrader::parse(&config(json!({})), base, &root)
                .unwrap_err()
                .contains("missing")
        );
        assert!(
            CodeGrader::parse(&config(json!({"command": ["./nope.sh"]})), base, &root)
                .unwrap_err()
                .contains("not found")
        );
        assert!(
            CodeGrader::parse(&config(json!({"command": ["true"], "x": 1})), base, &root)
                .unwrap_err()
                .contains("unknown")
        );
    }
}
