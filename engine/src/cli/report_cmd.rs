//! `cautilus report html|junit|markdown <run-dir> -o FILE`: a report of a
//! finished (or interrupted) run from its records, without running anything.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::report::{self, Format};

const EXAMPLES: &str = "\
Examples:
  cautilus report html .cautilus/runs/<id> -o report.html
  cautilus report junit latest -o junit.xml
  cautilus report markdown latest >> \"$GITHUB_STEP_SUMMARY\"
  cautilus report html <project run> -o pages/     # one page per suite

RUN_DIR is any directory `cautilus eval test` printed after `records:`: a
run of one fixture, an experiment (variants, trials), or a project run
(every suite: one JUnit document with a testsuite per suite, one Markdown
summary of the project and its suites, one HTML page per suite in the
directory -o names); or a suite's run inside a project run; or `latest`,
the newest finished run under the project's runs directory (<dir>/runs of
cautilus.toml, else .cautilus/runs; a run still going is passed over).

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
    /// The run directory (`records:` of `cautilus eval test`: one fixture's
    /// run, an experiment's or a project's), its experiment.json /
    /// eval-summary.json, or `latest`
    #[arg(value_name = "RUN_DIR|latest")]
    run: PathBuf,
    /// Where to write the report [default: standard output]; for the HTML
    /// of a project run, the directory of its pages
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The project config whose runs `latest` looks at (default: the
    /// nearest cautilus.toml upward)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn run(command: ReportCommand) -> anyhow::Result<ExitCode> {
    let (format, args) = match command {
        ReportCommand::Html(args) => (Format::Html, args),
        ReportCommand::Junit(args) => (Format::Junit, args),
        ReportCommand::Markdown(args) => (Format::Markdown, args),
    };
    let run = super::inputs::run_dir(&args.run, args.config.as_deref())?;
    if let Some((dir, summary)) = crate::project::run::read_summary(&run)? {
        return project(&dir, &summary, format, args.output.as_deref());
    }
    let report = report::load(&run)?;
    match args.output {
        Some(path) => {
            report::write(&report, format, &path)?;
            eprintln!("report: {}", crate::term::shown(path.display()));
        }
        None => print(&report::render(&report, format)?)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The report of a project run in `dir`.
fn project(
    dir: &std::path::Path,
    summary: &crate::project::run::ProjectSummary,
    format: Format,
    output: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let parts = ProjectParts::read(dir, summary);
    match (format, output) {
        (Format::Html, None) => anyhow::bail!(
            "{}: a project run's HTML report is one page per suite; give the directory to write them to with -o DIR",
            dir.display()
        ),
        (Format::Html, Some(pages)) => {
            parts.write_pages(pages)?;
            eprintln!(
                "report: {} (one page per suite)",
                crate::term::shown(pages.display())
            );
        }
        (_, output) => {
            let text = parts.render(format, summary);
            match output {
                Some(path) => {
                    report::write_text(path, &text)?;
                    eprintln!("report: {}", crate::term::shown(path.display()));
                }
                None => print(&text)?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What a project run's reports are made of: each suite's report (a
/// suite whose records cannot be read is said on stderr and left out), and
/// the suites that could not run.
struct ProjectParts {
    ids: Vec<String>,
    reports: Vec<report::Report>,
    broken: Vec<(String, String)>,
    rows: Vec<crate::report::markdown::ProjectRow>,
}

impl ProjectParts {
    fn read(dir: &std::path::Path, summary: &crate::project::run::ProjectSummary) -> Self {
        let mut parts = Self {
            ids: Vec::new(),
            reports: Vec::new(),
            broken: Vec::new(),
            rows: Vec::new(),
        };
        for suite in &summary.suites {
            parts.rows.push(crate::report::markdown::ProjectRow {
                id: suite.id.clone(),
                outcome: suite.outcome(),
                duration_ms: suite.duration_ms,
            });
            match (&suite.run_dir, &suite.error) {
                (_, Some(error)) => parts.broken.push((suite.id.clone(), error.clone())),
                (Some(run_dir), None) => match crate::report::safe_join(dir, run_dir)
                    .ok_or_else(|| {
                        format!("its run directory `{run_dir}` is not inside the project run")
                    })
                    .and_then(|d| report::load(&d).map_err(|e| e.to_string()))
                {
                    Ok(loaded) => {
                        parts.ids.push(suite.id.clone());
                        parts.reports.push(loaded);
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
        parts
    }

    /// The JUnit document or the Markdown summary of the project.
    fn render(&self, format: Format, summary: &crate::project::run::ProjectSummary) -> String {
        match format {
            Format::Junit => report::junit::render_project(&self.reports, &self.broken),
            _ => {
                report::markdown::render_project(&summary.recommendation, &self.rows, &self.reports)
            }
        }
    }

    /// One HTML page per suite in `pages`.
    fn write_pages(&self, pages: &std::path::Path) -> anyhow::Result<()> {
        for (id, loaded) in self.ids.iter().zip(&self.reports) {
            let name = crate::project::run::safe_name(id);
            report::write(loaded, Format::Html, &pages.join(format!("{name}.html")))?;
        }
        Ok(())
    }
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
        if !self.any() {
            return Ok(());
        }
        let parts = ProjectParts::read(dir, summary);
        for (path, format) in [
            (&self.junit, Format::Junit),
            (&self.markdown, Format::Markdown),
        ] {
            if let Some(path) = path {
                report::write_text(path, &parts.render(format, summary))?;
            }
        }
        if let Some(html) = &self.html {
            parts.write_pages(html)?;
        }
        Ok(())
    }
}
