//! `cautilus eval promote`: make a finished run the suite's committed
//! baseline.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::term::shown;

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus eval promote latest
  cautilus eval promote .cautilus/runs/<id> --variant candidate

Promotes one variant (default: the run's baseline variant, else its only
one) of a completed, unfiltered run. Commit the file it writes: every later
run of the suite (that declares no baseline variant of its own) compares
each variant with it, cell by cell, and its `minDeltaVsBaseline` and
`minDeltaCiLow` gates read that comparison. When the suite's cases or
scoring change, the comparison turns informational until you promote again.

Exit status: 0 promoted, 2 the run cannot be promoted (interrupted,
filtered, no such variant).";

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// A run directory, or `latest` (the newest finished run under
    /// <records>/runs)
    #[arg(value_name = "RUN_DIR|latest")]
    pub(super) run: PathBuf,
    /// The variant to promote
    #[arg(long, value_name = "NAME")]
    pub(super) variant: Option<String>,
    /// The project config (default: the nearest cautilus.toml upward); its
    /// `dir` holds the runs and baselines
    #[arg(long, value_name = "FILE")]
    pub(super) config: Option<PathBuf>,
}

pub(super) fn promote(args: PromoteArgs) -> anyhow::Result<ExitCode> {
    let records = crate::cli::inputs::records_root(args.config.as_deref())?;
    let run = crate::project::latest::resolve(&args.run, &records)?;
    let promoted = crate::quality::baseline::promote(&run, args.variant.as_deref(), &records)?;
    crate::outln!(
        "promoted variant `{}` of {} ({} cells) as the baseline of `{}`: {} (commit it)",
        shown(&promoted.variant),
        shown(run.display()),
        promoted.cells,
        shown(&promoted.suite_id),
        shown(promoted.path.display())
    );
    Ok(ExitCode::SUCCESS)
}
