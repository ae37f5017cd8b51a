//! How a finished run is shown and what it exits with: the summary packet
//! or record (`--json`) or the readable summary, and the exit status from
//! the recommendation or the gates.

use std::io::Write;
use std::process::ExitCode;

use crate::eval::{self, SuiteOutcome};
use crate::term::shown;

/// Prints an experiment's record (`--json`) or its summary; exits 0 when
/// its gates pass, 1 when they fail, 130/143 when interrupted.
pub(super) fn experiment(
    outcome: &crate::quality::ExperimentOutcome,
    json: bool,
) -> anyhow::Result<ExitCode> {
    eval::records::progress::finish();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = (|| {
        if json {
            let mut record = std::io::BufReader::new(std::fs::File::open(&outcome.record)?);
            crate::term::copy_json(&mut record, &mut out)?;
        } else {
            crate::quality::report::print(&mut out, outcome)?;
        }
        out.flush()
    })();
    reader_gone_is_fine(written)?;
    Ok(match outcome.interrupted {
        Some(signal) => {
            eprintln!(
                "interrupted by {signal}: the cells that finished are in {}",
                shown(outcome.record.display())
            );
            ExitCode::from(eval::interrupt::exit_status())
        }
        None if outcome.passed => ExitCode::SUCCESS,
        None => ExitCode::from(1),
    })
}

pub(super) fn finish(outcome: &SuiteOutcome, json: bool) -> anyhow::Result<ExitCode> {
    print(
        &outcome.summary_path,
        outcome.recommendation(),
        json,
        |out| {
            eval::records::terminal_summary::print_summary(out, &outcome.tally)?;
            match &outcome.output_dir {
                Some(dir) => writeln!(out, "records: {}", shown(dir.display())),
                None => Ok(()),
            }
        },
    )
}

/// Prints the summary packet (`--json`) or the readable summary, and turns
/// the recommendation into the exit status.
pub(super) fn print(
    summary: &std::path::Path,
    recommendation: &str,
    json: bool,
    readable: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<ExitCode> {
    eval::records::progress::finish();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = (|| {
        if json {
            let mut packet = std::io::BufReader::new(std::fs::File::open(summary)?);
            crate::term::copy_json(&mut packet, &mut out)?;
        } else {
            readable(&mut out)?;
        }
        out.flush()
    })();
    reader_gone_is_fine(written)?;
    Ok(ExitCode::from(exit_status(recommendation)))
}

/// A summary nobody reads any more (`cautilus eval test … | head`: the
/// pipe's reader is gone) is no error: the records are written, and the
/// run exits as its verdict says. Any other error stays one.
fn reader_gone_is_fine(written: std::io::Result<()>) -> std::io::Result<()> {
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// A suite's exit status from its recommendation: 0 for `accept-now`, 1 for
/// anything else (`defer`, `reject`).
fn exit_status(recommendation: &str) -> u8 {
    if recommendation == "accept-now" { 0 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_accept_now_exits_zero() {
        assert_eq!(exit_status("accept-now"), 0);
        for other in ["defer", "reject", "", "accept", "ACCEPT-NOW"] {
            assert_eq!(exit_status(other), 1, "{other}");
        }
    }
}
