//! `cautilus report html|junit|markdown <run-dir> -o FILE`: a report of a
//! finished (or interrupted) run from its records, without running anything.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::report::{self, Format};

const EXAMPLES: &str = "\
Examples:
  cautilus report html .cautilus/runs/<id> -o report.html
  cautilus report junit .cautilus/runs/<id> -o junit.xml
  cautilus report markdown .cautilus/runs/<id> >> \"$GITHUB_STEP_SUMMARY\"

The same reports come straight out of a run with
`cautilus eval test --html FILE --junit FILE --markdown FILE`.";

#[derive(Debug, Subcommand)]
#[command(after_help = EXAMPLES)]
pub enum ReportCommand {
    /// One self-contained HTML page (opens from disk; no network)
    Html(ReportArgs),
    /// JUnit XML: one testcase per case (per cell), one per gate
    Junit(ReportArgs),
    /// A Markdown summary for a CI job page or a pull-request comment
    Markdown(ReportArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run directory (`records:` of `cautilus eval test`), or its
    /// experiment.json / eval-summary.json
    #[arg(value_name = "RUN_DIR")]
    run: PathBuf,
    /// Where to write the report [default: standard output]
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(command: ReportCommand) -> anyhow::Result<ExitCode> {
    let (format, args) = match command {
        ReportCommand::Html(args) => (Format::Html, args),
        ReportCommand::Junit(args) => (Format::Junit, args),
        ReportCommand::Markdown(args) => (Format::Markdown, args),
    };
    let report = report::load(&args.run)?;
    match args.output {
        Some(path) => {
            report::write(&report, format, &path)?;
            eprintln!("report: {}", crate::term::shown(path.display()));
        }
        None => {
            use std::io::Write;
            let text = report::render(&report, format)?;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--html/--junit/--markdown` files of `eval test`.
#[derive(Debug, Clone, Default, Args)]
pub struct ReportFiles {
    /// Also write the run's HTML report to FILE (a project run: a
    /// directory with one page per suite)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the run's JUnit XML to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the run's Markdown summary to FILE
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

impl ReportFiles {
    pub fn any(&self) -> bool {
        self.html.is_some() || self.junit.is_some() || self.markdown.is_some()
    }

    /// Writes the asked-for reports of the run in `dir`; a report that
    /// cannot be made is said on stderr and fails the command (exit 2)
    /// without touching the records.
    pub fn write(&self, dir: &std::path::Path) -> anyhow::Result<()> {
        if !self.any() {
            return Ok(());
        }
        let report = report::load(dir)?;
        for (path, format) in [
            (&self.html, Format::Html),
            (&self.junit, Format::Junit),
            (&self.markdown, Format::Markdown),
        ] {
            if let Some(path) = path {
                report::write(&report, format, path)?;
            }
        }
        Ok(())
    }
}

impl ReportFiles {
    /// The reports of a project run (`dir`): one JUnit document with a
    /// `testsuite` per suite, one Markdown summary of the project and its
    /// suites, and one HTML page per suite in the `--html` directory.
    pub fn write_project(
        &self,
        dir: &std::path::Path,
        summary: &crate::project::run::ProjectSummary,
    ) -> anyhow::Result<()> {
        use crate::report::markdown::ProjectRow;
        if !self.any() {
            return Ok(());
        }
        let mut ids = Vec::new();
        let mut reports = Vec::new();
        let mut broken = Vec::new();
        let mut rows = Vec::new();
        for suite in &summary.suites {
            rows.push(ProjectRow {
                id: suite.id.clone(),
                outcome: suite.outcome(),
                duration_ms: suite.duration_ms,
            });
            match (&suite.run_dir, &suite.error) {
                (_, Some(error)) => broken.push((suite.id.clone(), error.clone())),
                (Some(run_dir), None) => match report::load(&dir.join(run_dir)) {
                    Ok(loaded) => {
                        ids.push(suite.id.clone());
                        reports.push(loaded);
                    }
                    // A steps fixture's records are per step.
                    Err(error) => eprintln!(
                        "warning: suite `{}` is left out of the reports: {}",
                        crate::term::inline(&suite.id),
                        crate::term::shown(&error)
                    ),
                },
                (None, None) => {}
            }
        }
        if let Some(path) = &self.junit {
            let text = report::junit::render_project(&reports, &broken);
            report::write_text(path, &text)?;
        }
        if let Some(path) = &self.markdown {
            let text = report::markdown::render_project(&summary.recommendation, &rows, &reports);
            report::write_text(path, &text)?;
        }
        if let Some(html) = &self.html {
            for (id, loaded) in ids.iter().zip(&reports) {
                let name = crate::project::run::safe_name(id);
                report::write(loaded, Format::Html, &html.join(format!("{name}.html")))?;
            }
        }
        Ok(())
    }
}
