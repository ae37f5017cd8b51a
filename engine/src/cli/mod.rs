//! The `cautilus` command line (clap). Each subcommand lives in its own
//! module; this one parses, dispatches and maps results to exit codes:
//! `0` pass, `1` fail (or a call that errored), `2` usage, plugin or config
//! error (nothing was scored).

mod eval_cmd;
mod inputs;
mod mcp_cmd;
mod pack_build;
mod pack_cmd;
mod pack_new;
mod pack_test;
mod plugin_cmd;
mod plugin_test;
mod report_cmd;
mod scaffold;
mod scaffold_lang;
mod schema_cmd;
mod score_cmd;
mod sdk_cmd;
mod serve_cmd;

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use crate::plugin::{Limits, PluginError, Registry, Runtime, RuntimeConfig};

const ROOT_EXAMPLES: &str = "\
Examples:
  cautilus eval test --fixture fixtures/eval/app/prompt/tagline.fixture.json
  cautilus plugin list
  cautilus plugin inspect regex
  cautilus score --scorer contains --output 'Hello, world' --config '{\"value\": \"world\"}'
  cautilus plugin new scorer my-scorer --path ./my-scorer";

#[derive(Debug, Parser)]
#[command(
    name = "cautilus",
    version,
    about = "Evaluate LLM applications and coding agents with sandboxed WebAssembly plugins",
    after_help = ROOT_EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run and score evaluation fixtures
    #[command(subcommand)]
    Eval(eval_cmd::EvalCommand),
    /// List, inspect and scaffold plugins
    #[command(subcommand)]
    Plugin(plugin_cmd::PluginCommand),
    /// Build, install, verify and lock preset packs
    #[command(subcommand, after_help = pack_cmd::EXAMPLES)]
    Pack(pack_cmd::PackCommand),
    /// Score one output with a scorer plugin (exit 0 pass, 1 fail, 2 error)
    Score(score_cmd::ScoreArgs),
    /// Print the JSON Schema of the fixture or of a packet
    Schema(schema_cmd::SchemaArgs),
    /// Write an HTML, JUnit or Markdown report of a run's records
    #[command(subcommand)]
    Report(report_cmd::ReportCommand),
    /// Show or update the cautilus-sdk of a Rust plugin project or pack
    #[command(subcommand)]
    Sdk(sdk_cmd::SdkCommand),
    /// Serve the project's suites and run evidence to a coding agent (MCP on stdio)
    #[command(after_help = mcp_cmd::EXAMPLES)]
    Mcp(mcp_cmd::McpArgs),
    /// Serve the project's run history in a local web app and JSON API (127.0.0.1, read-only)
    #[command(after_help = serve_cmd::EXAMPLES)]
    Serve(serve_cmd::ServeArgs),
}

/// Sandbox limits a user can set on any command that runs plugins.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Wall-clock limit of one plugin call, in milliseconds [default: 2000
    /// for scorers; 600000 for providers in `eval test`, whose calls are
    /// model or agent runs]
    #[arg(long, value_name = "MS")]
    timeout_ms: Option<u64>,
    /// Memory limit of one plugin instance, in MiB
    #[arg(long, default_value_t = 64, value_name = "MIB")]
    memory_mib: usize,
    /// Fuel budget (about one unit per wasm instruction) of one call; unmetered if absent
    #[arg(long, value_name = "UNITS")]
    fuel: Option<u64>,
    /// Most output of one plugin call, in MiB: what it returns or logs, a
    /// response it reads over HTTP, a program's stdout or stderr (raise
    /// `--memory-mib` with it: the plugin holds what it reads)
    #[arg(long, default_value_t = 1, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1024))]
    output_mib: u64,
}

impl LimitArgs {
    /// Default wall-clock limit of a scorer call.
    const SCORER_TIMEOUT_MS: u64 = 2_000;
    /// Default wall-clock limit of a provider call (a model or agent run).
    const PROVIDER_TIMEOUT_MS: u64 = 600_000;

    fn limits(&self, default_timeout_ms: u64) -> Limits {
        Limits {
            timeout: std::time::Duration::from_millis(
                self.timeout_ms.unwrap_or(default_timeout_ms),
            ),
            memory_bytes: self.memory_mib.saturating_mul(1024 * 1024),
            fuel: self.fuel,
            output_bytes: usize::try_from(self.output_mib)
                .unwrap_or(usize::MAX)
                .saturating_mul(1024 * 1024),
        }
    }
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", shown_error(&error));
            ExitCode::from(exit_code_for(&error))
        }
    }
}

/// An error as `{:#}` prints it (each cause after a `: `), safe on a
/// terminal: an error quotes fixture text, ids, paths and server answers,
/// so every link is escaped as one line ([`crate::term::inline`]), except
/// the one kind whose line breaks are ours (a list of problems, each
/// escaped where it is made).
fn shown_error(error: &anyhow::Error) -> String {
    error
        .chain()
        .map(|link| {
            let text = link.to_string();
            let ours = link
                .downcast_ref::<crate::eval::EvalError>()
                .is_some_and(crate::eval::EvalError::lines_are_ours);
            if ours {
                crate::term::lines(&text).into_owned()
            } else {
                crate::term::inline(&text).into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(": ")
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Eval(command) => eval_cmd::run(command),
        Command::Plugin(command) => plugin_cmd::run(command),
        Command::Pack(command) => pack_cmd::run(command),
        Command::Score(args) => score_cmd::run(args),
        Command::Schema(args) => schema_cmd::run(args, registry()?),
        Command::Report(command) => report_cmd::run(command),
        Command::Sdk(command) => sdk_cmd::run(command),
        Command::Mcp(args) => mcp_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
    }
}

/// 2 for definition errors (bad flags, fixture, plugin, config or input:
/// nothing ran), 1 for a failure while running.
fn exit_code_for(error: &anyhow::Error) -> u8 {
    if let Some(error) = error.downcast_ref::<PluginError>() {
        return if error.is_definition_error() { 2 } else { 1 };
    }
    if let Some(error) = error.downcast_ref::<crate::eval::EvalError>() {
        return if error.is_definition_error() { 2 } else { 1 };
    }
    2
}

/// The registry of this process (runtime with the default cache dir), for
/// plugin calls with no fuel budget. It lives until the process exits and
/// is never dropped: dropping it would only make exit wait while the engine
/// unmaps its instance pool.
///
/// `<pack>/<id>` references resolve in the user's installed packs, checked
/// against the nearest `cautilus.lock` above the current directory.
fn registry() -> anyhow::Result<&'static Registry> {
    registry_for(&Limits::default())
}

/// The variables the project's `[providers.<id>]` tables stand in for,
/// checked against what the built-in providers declare (read, loading the
/// built-in pack, only when the config has such a table).
fn provider_env(
    registry: &Registry,
    project: &crate::project::Loaded,
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    if project.config.providers.is_empty() {
        return Ok(Default::default());
    }
    let declared = crate::eval::provider::declared::Declared::builtin(registry)?;
    Ok(crate::project::providers::provider_env(project, &declared)?)
}

/// The registry of this process for plugin calls under `limits`: its
/// engine counts fuel only when they set a fuel budget. Made once for each
/// (a command asking again gets the same registry, its built-ins loaded
/// once).
fn registry_for(limits: &Limits) -> anyhow::Result<&'static Registry> {
    static MADE: std::sync::Mutex<[Option<&'static Registry>; 2]> =
        std::sync::Mutex::new([None, None]);
    let metered = limits.fuel.is_some();
    let mut made = MADE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(registry) = made[usize::from(metered)] {
        return Ok(registry);
    }
    let registry = new_registry(metered)?;
    made[usize::from(metered)] = Some(registry);
    Ok(registry)
}

/// A new registry whose engine counts fuel when `metered`.
fn new_registry(metered: bool) -> anyhow::Result<&'static Registry> {
    let config = RuntimeConfig::from_env().fuel_metering(metered);
    let runtime = Runtime::new(config)?;
    let mut registry = Registry::new(Arc::new(runtime));
    let cwd = std::env::current_dir()?;
    match crate::pack::PackSet::from_env(&cwd) {
        Ok(packs) => registry = registry.with_packs(packs),
        Err(crate::pack::PackError::NoHome) => {}
        Err(error) => return Err(error.into()),
    }
    Ok(Box::leak(Box::new(registry)))
}
