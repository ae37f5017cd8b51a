//! `cautilus eval compare`: which cases changed verdict between two runs,
//! and the cross-runtime rules between their harnesses.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus eval compare .cautilus/runs/<before> latest
  cautilus eval compare .cautilus/runs/<api-run> .cautilus/runs/<cli-run> --json

OLD and NEW are runs of any kind (one fixture's run, an experiment with
variants and trials, a project run), `latest` (the newest finished run of
the project), or observed packets.

Verdicts: each case (per suite, and per variant in an experiment) is
`passed` when every trial passed, else its worst trial's status. Listed:
each case whose verdict changed (REGRESSED: passed in OLD, not in NEW;
FIXED: the reverse; CHANGED: another change, or a different number of
trials passed), NEW cases and REMOVED ones.

Harness parity: each observed packet at the same place in both runs is
checked against the cross-runtime rules: surface, preset, fixtureRef and
caseId are byte-equal; provider, model, harness, mode, durationMs,
observed.messages and observed.finalText are present on both sides; what
may differ (the answer, the model, usage, cost, duration) is listed with
each side's harness, to tell a harness-driven change from a real one.

Exit status: 0 no case regressed and the rules hold, 1 a case regressed or
a rule is broken, 2 a run cannot be read.";

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The earlier run: a run directory of any kind, `latest`, or an
    /// eval-observed.json
    #[arg(value_name = "OLD")]
    pub(super) a: PathBuf,
    /// The later run, the same way
    #[arg(value_name = "NEW")]
    pub(super) b: PathBuf,
    /// Print the comparison as JSON (`cautilus.run_comparison.v1`)
    #[arg(long)]
    pub(super) json: bool,
    /// The project config whose runs `latest` looks at (default: the
    /// nearest cautilus.toml upward)
    #[arg(long, value_name = "FILE")]
    pub(super) config: Option<PathBuf>,
}

pub(super) fn compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let a = crate::cli::inputs::run_dir(&args.a, args.config.as_deref())?;
    let b = crate::cli::inputs::run_dir(&args.b, args.config.as_deref())?;
    let report = crate::report::diff::compare_runs(&a, &b)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let text = serde_json::to_string_pretty(&report)?;
        writeln!(out, "{}", crate::term::json(&text))?;
    } else {
        crate::report::diff::print(&mut out, &report)?;
    }
    Ok(if report["holds"] == true {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
