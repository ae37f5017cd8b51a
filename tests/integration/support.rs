//! Shared helpers: one runtime per test binary, the CLI with a shared
//! compiled cache, and small constructors.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};

use cautilus::plugin::{
    Grants, Limits, PluginError, Registry, Runtime, RuntimeConfig, Score, ScoreInput, ScorerSession,
};
use serde_json::Value;

/// The repository root (fixtures live under it).
pub fn repo() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A JSON file, parsed.
pub fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The compiled-component cache shared by the tests (under the target dir).
pub fn shared_cache_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cautilus-test-cache");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One registry for the whole test binary, so components compile once
/// (no fuel metering, as in a run whose limits set no fuel budget).
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| new_registry(false))
}

/// The same with fuel metering, for fuel budgets.
pub fn metered_registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| new_registry(true))
}

fn new_registry(fuel_metering: bool) -> Registry {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(shared_cache_dir()),
        fuel_metering,
    })
    .expect("runtime");
    Registry::new(Arc::new(runtime))
}

/// A session for `reference` (built-in id or path) with default limits.
pub fn session(reference: &str, config: Value) -> Result<ScorerSession, PluginError> {
    session_with(reference, config, Limits::default(), Grants::default())
}

pub fn session_with(
    reference: &str,
    config: Value,
    limits: Limits,
    grants: Grants,
) -> Result<ScorerSession, PluginError> {
    let (plugin, scorer) = registry().resolve_scorer(reference)?;
    ScorerSession::new(plugin, &scorer, &config, limits, Arc::new(grants))
}

/// An input with `output` as the final text and optional `expected`.
pub fn input(output: &str, expected: Option<Value>) -> ScoreInput {
    let mut input = ScoreInput::from_output("case-1", Some(output.to_string()));
    input.subject.expected = expected.map(|v| v.to_string());
    input
}

/// Scores `output` with a built-in scorer and config.
pub fn score(scorer: &str, config: Value, output: &str, expected: Option<Value>) -> Score {
    session(scorer, config)
        .unwrap_or_else(|e| panic!("{scorer}: {e}"))
        .score(&input(output, expected))
        .unwrap_or_else(|e| panic!("{scorer}: {e}"))
}

/// The `cautilus` binary with the shared cache: the one this build made,
/// or another given in `CAUTILUS_TEST_BINARY` (an installed binary, or an
/// older one to see a regression test fail before its fix).
pub fn cautilus() -> Command {
    let binary = std::env::var_os("CAUTILUS_TEST_BINARY")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cautilus").into());
    let mut command = Command::new(binary);
    command.env("CAUTILUS_CACHE_DIR", shared_cache_dir());
    command.env_remove("CAUTILUS_PLUGIN_LOG");
    command
}

/// Runs the CLI and returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    output(cautilus().args(args).output().expect("run cautilus"))
}

pub fn output(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn component(name: &str) -> String {
    cautilus_tests::component(name).display().to_string()
}

/// A finished `cautilus eval test` run with its records directory.
pub struct EvalRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub dir: tempfile::TempDir,
}

impl EvalRun {
    /// A record of the run (relative to its directory), or null if absent.
    pub fn packet(&self, name: &str) -> Value {
        let path = self.dir.path().join(name);
        if path.exists() {
            read_json(&path)
        } else {
            Value::Null
        }
    }
}

/// Runs `cautilus eval test --fixture <fixture> <args>` with a fresh
/// output directory and the repository as the workspace, through the
/// fixture backend unless `args` names a `--provider`.
pub fn eval_run(fixture: &std::path::Path, args: &[&str]) -> EvalRun {
    eval_run_with(fixture, args, |_| {})
}

/// [`eval_run`], with `configure` adjusting the command (e.g. its environment).
pub fn eval_run_with(
    fixture: &std::path::Path,
    args: &[&str],
    configure: impl FnOnce(&mut Command),
) -> EvalRun {
    let dir = tempfile::tempdir().unwrap();
    let mut command = cautilus();
    command
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(repo())
        .arg("--output-dir")
        .arg(dir.path())
        .args(args);
    // Canned answers unless the test picks a provider (without one, a
    // fixture's `provider: anthropic` would look for a key or `claude`).
    if !args.contains(&"--provider") {
        command.args(["--provider", "fixture"]);
    }
    configure(&mut command);
    let (code, stdout, stderr) = output(command.output().unwrap());
    EvalRun {
        code,
        stdout,
        stderr,
        dir,
    }
}

/// Every file under `dir`, as text (to prove a secret is in none of them).
pub fn all_text(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&all_text(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}

/// An app/prompt suite answered by the fixture backend whose one case has a
/// plain-string criterion graded by an `openai` judge (`judge-model`).
pub fn judged_fixture(dir: &std::path::Path) -> PathBuf {
    let fixture = dir.join("judged.fixture.json");
    std::fs::write(
        &fixture,
        serde_json::json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "judged",
            "provider": "fixture", "model": "canned",
            "judge": {"provider": "openai", "model": "judge-model"},
            "cases": [{"caseId": "c1", "input": "Which command runs a fixture?",
                       "expected": {"finalText": "cautilus eval test"},
                       "assertions": ["names the eval command"]}]
        })
        .to_string(),
    )
    .unwrap();
    fixture
}

/// A `CODEX_HOME` whose model provider is the loopback server (Responses
/// API), its key read from OPENAI_API_KEY.
pub fn codex_home(server: &cautilus_tests::model_server::ModelServer) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model_provider = \"loopback\"\n\n[model_providers.loopback]\nname = \"loopback\"\n\
             base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n",
            server.url
        ),
    )
    .unwrap();
    home
}

/// A tool named by an environment variable (CI installs them), or `None`,
/// saying the test is skipped and why.
pub fn tool(variable: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(variable).map(PathBuf::from) {
        Some(path) if path.exists() => Some(path),
        _ => {
            eprintln!("SKIPPED: {variable} is not set to {what} (.ci/run installs it)");
            None
        }
    }
}
