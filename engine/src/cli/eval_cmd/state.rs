//! `cautilus eval state`: whether a run directory holds no run, an
//! unfinished one (`--resume` continues it) or a completed one; for
//! scripts that restart a run where it stopped (scripts/cautilus-shard.sh).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::quality::resume::dir_state;

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus eval state shard-2
  case $(cautilus eval state shard-2) in
    none) cautilus eval test --fixture suite.yaml --shard 2/4 --output-dir shard-2 ;;
    unfinished) cautilus eval test --resume shard-2 ;;
    completed) ;;
  esac

Prints one word: `none` (no run was started there: no experiment-run.json,
no run.json, no experiment.json; the directory may not exist),
`unfinished` (a run started there and did not complete: interrupted,
killed, or still running) or `completed` (also an `eval merge` output).
Exit status: 0.";

#[derive(Debug, Args)]
pub struct StateArgs {
    /// The run directory (an `eval test --output-dir`)
    #[arg(value_name = "RUN_DIR")]
    pub(super) run: PathBuf,
}

pub(super) fn state(args: StateArgs) -> anyhow::Result<ExitCode> {
    println!("{}", dir_state(&args.run).as_str());
    Ok(ExitCode::SUCCESS)
}
