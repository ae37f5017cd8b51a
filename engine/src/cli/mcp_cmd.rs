//! `cautilus mcp`: the Model Context Protocol server on stdio
//! ([`crate::evidence::mcp`]) over the project found from the current
//! directory (or `--config`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus mcp                                   # the project of the current directory
  cautilus mcp --config ci/cautilus.toml
  claude mcp add cautilus -- cautilus mcp        # for Claude Code

Tools: list_suites, validate, run, list_runs, run_summary, cell_evidence,
compare_runs, suite_progress (docs/mcp.md). `run` runs a suite as the
project's cautilus.toml says (provider, replay mode, grants); no tool
argument adds a provider, a grant, a path or a flag. The other tools read
the project's records (its `dir`) and nothing else.

Stdout carries the protocol; messages go to stderr.";

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The project config (default: the nearest cautilus.toml upward)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let (mut loaded, file) = crate::project::open(&cwd, args.config.as_deref())?;
    // The tools run commands from the project root: its paths absolute.
    loaded.root = std::fs::canonicalize(&loaded.root).unwrap_or(loaded.root);
    let file = file.map(|f| std::fs::canonicalize(&f).unwrap_or(f));
    crate::evidence::mcp::serve(&loaded, file.as_deref())?;
    Ok(ExitCode::SUCCESS)
}
