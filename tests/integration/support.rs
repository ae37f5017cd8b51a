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

/// Each evaluation's `status` in a summary packet, in order.
pub fn statuses(summary: &serde_json::Value) -> Vec<&str> {
    summary["evaluations"]
        .as_array()
        .expect("a summary's evaluations")
        .iter()
        .map(|e| e["status"].as_str().expect("an evaluation's status"))
        .collect()
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

/// Hands the built-in pack to the library, as the binary's `main` does;
/// before anything in this test binary loads a plugin.
pub fn install_builtins() {
    cautilus::plugin::builtin::install(cautilus_builtins::COMPONENTS);
}

fn new_registry(fuel_metering: bool) -> Registry {
    install_builtins();
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(shared_cache_dir()),
        fuel_metering,
        compile_notice: None,
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

/// `fixture` through `eval validate`, then `eval test` with the fixture
/// backend into `out`: each command's name with its (exit code, stdout,
/// stderr).
pub fn validate_and_test(
    fixture: &std::path::Path,
    out: &std::path::Path,
) -> [(&'static str, (i32, String, String)); 2] {
    ["validate", "test"].map(|command| {
        let mut run = cautilus();
        run.args(["eval", command, "--fixture"]).arg(fixture);
        if command == "test" {
            run.args(["--provider", "fixture", "--output-dir"]).arg(out);
        }
        (command, output(run.output().expect("run cautilus")))
    })
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

/// Runs `command` (its stdout discarded, its stderr into `log`) and returns
/// its exit code and the peak resident memory, in KiB, of that process
/// alone.
///
/// A child's `ru_maxrss` also counts the memory of the process that spawned
/// it (the kernel records the high-water mark of the address space a
/// process leaves at `exec`), and this test binary may hold hundreds of MiB
/// while other tests run. So the command is started by a small process:
/// this binary re-run for [`rss_probe`] alone, which spawns it, reaps it
/// with `wait4` and prints what it measured.
#[cfg(target_os = "linux")]
pub fn peak_rss_kib(command: &Command, log: &std::path::Path) -> (i32, i64) {
    let mut probe = Command::new(std::env::current_exe().unwrap());
    probe.args([
        "support::rss_probe",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    let mut argv = vec![command.get_program().to_string_lossy().into_owned()];
    argv.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    probe.env(PROBE_ARGV, serde_json::to_string(&argv).unwrap());
    probe.env(PROBE_LOG, log);
    if let Some(dir) = command.get_current_dir() {
        probe.env(PROBE_DIR, dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => probe.env(key, value),
            None => probe.env_remove(key),
        };
    }
    let out = probe.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.split_once("RSS-PROBE ").map(|(_, rest)| rest))
        .unwrap_or_else(|| {
            panic!(
                "the probe measured nothing: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let mut fields = line.split_whitespace().map(|f| f.parse().unwrap());
    let code = fields.next().unwrap();
    (i32::try_from(code).unwrap(), fields.next().unwrap())
}

const PROBE_ARGV: &str = "CAUTILUS_RSS_PROBE_ARGV";
const PROBE_LOG: &str = "CAUTILUS_RSS_PROBE_LOG";
const PROBE_DIR: &str = "CAUTILUS_RSS_PROBE_DIR";

/// The small process of [`peak_rss_kib`] (ignored: run only by it).
#[cfg(target_os = "linux")]
#[test]
#[ignore = "run by support::peak_rss_kib"]
fn rss_probe() {
    let argv: Vec<String> =
        serde_json::from_str(&std::env::var(PROBE_ARGV).expect("started by peak_rss_kib")).unwrap();
    let log = std::env::var_os(PROBE_LOG).unwrap();
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .env_remove(PROBE_ARGV)
        .env_remove(PROBE_LOG)
        .env_remove(PROBE_DIR)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(log).unwrap());
    if let Some(dir) = std::env::var_os(PROBE_DIR) {
        command.current_dir(dir);
    }
    let child = command.spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid);
    std::mem::forget(child); // already reaped
    println!(
        "RSS-PROBE {} {}",
        libc::WEXITSTATUS(status),
        usage.ru_maxrss
    );
}
