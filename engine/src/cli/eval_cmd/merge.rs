//! `cautilus eval merge`: join the shard runs of one experiment into one
//! record.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::summary::experiment;
use crate::eval;

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus eval test --fixture evals/support.fixture.yaml --shard 1/2 --output-dir shards/1
  cautilus eval test --fixture evals/support.fixture.yaml --shard 2/2 --output-dir shards/2
  cautilus eval merge shards/1 shards/2 --output-dir merged

The shards must be every part (1/N … N/N) of one suite's run, completed.
The merged experiment.json holds every cell in the order an unsharded run
writes them, and its aggregates, comparison and gates equal that run's.

Exit status: 0 the gates pass, 1 they fail, 2 the shards cannot be merged.";

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' run directories (or their experiment.json)
    #[arg(value_name = "RUN_DIR", required = true)]
    pub(super) runs: Vec<PathBuf>,
    /// Where to write the merged experiment.json [default:
    /// <records>/runs/<id>/]
    #[arg(long, value_name = "DIR")]
    pub(super) output_dir: Option<PathBuf>,
    /// Print the merged record instead of the summary
    #[arg(long)]
    pub(super) json: bool,
}

pub(super) fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let output_dir = match args.output_dir {
        Some(dir) => dir,
        None => eval::files::new_run_dir(&std::env::current_dir()?.join(".cautilus")),
    };
    let outcome = crate::quality::merge::merge(&args.runs, &output_dir)?;
    experiment(&outcome, args.json)
}
