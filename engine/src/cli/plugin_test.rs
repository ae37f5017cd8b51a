//! `cautilus plugin test`: builds a scorer project if needed and scores the
//! example answers of its examples file ([`crate::authoring::examples`]),
//! each through the machinery `cautilus score` uses, reporting what differs
//! from what each example expects. Exit 0 all passed, 1 one failed, 2 the
//! examples file, the project, its build or the component is at fault.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use clap::Args;
use serde::Serialize;

use super::LimitArgs;
use super::score_cmd::{Answer, score_answer};
use crate::authoring::examples::{self, ExamplesFile};
use crate::authoring::outcome::{self, Actual, Difference};
use crate::authoring::{Expect, Project};
use crate::plugin::{Description, Limits, Plugin, Registry};

pub const EXAMPLES: &str = "\
Examples:
  cautilus plugin test                       # the project in this directory, its examples.yaml
  cautilus plugin test ./mentions-all --json
  cautilus plugin test ./tone.wasm --examples tone-examples.yaml
  cautilus plugin test contains --examples examples.yaml   # a built-in or pack scorer

examples.yaml:
  scorer: mentions-all            # optional when the component serves one scorer
  config: {value: world}          # the config of every example without its own
  examples:
    - name: mentions the word
      output: hello world
      expect: {pass: true, score: 1}
    - name: misses it
      output: hello there         # also: expected (text), expectedJson, input
      expect: {pass: false, detail: world}
    - name: bad config is refused
      config: {value: world, colour: red}
      output: x
      expect: {error: colour}     # the error contains this text

Exit status: 0 every example gave what it expects, 1 one did not, 2 the
examples file, the project, its build or the component is at fault.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct TestArgs {
    /// A scorer project's directory (Rust, Python or JavaScript; built when
    /// needed), a .wasm component (`path.wasm#id` picks a scorer), or a
    /// built-in or `pack/id` scorer
    #[arg(default_value = ".", value_name = "DIR|WASM|ID")]
    target: String,
    /// The examples file [default: examples.yaml (or .yml, .json) in DIR,
    /// or in the current directory for a .wasm or an id]
    #[arg(long, value_name = "FILE")]
    examples: Option<PathBuf>,
    /// Test the component as it is, without building the project
    #[arg(long)]
    no_build: bool,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// What one example gave.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ExampleResult {
    name: String,
    scorer: String,
    passed: bool,
    expect: Expect,
    actual: Actual,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    differences: Vec<Difference>,
}

/// The results of one examples file against one component.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FileReport {
    examples: PathBuf,
    component: String,
    passed: usize,
    failed: usize,
    results: Vec<ExampleResult>,
}

pub fn run(args: TestArgs) -> anyhow::Result<ExitCode> {
    match test(&args) {
        Ok(report) => {
            if args.json {
                crate::outln!(
                    "{}",
                    crate::term::json(&serde_json::to_string_pretty(&report)?)
                );
            } else {
                print_report(&report);
                print_summary(report.passed, report.failed);
            }
            Ok(exit_code(report.failed))
        }
        Err(error) => setup_failed(&error),
    }
}

/// Exit 2 after an error that stopped the test before any example ran.
pub(super) fn setup_failed(error: &anyhow::Error) -> anyhow::Result<ExitCode> {
    eprintln!("error: {}", super::shown_error(error));
    Ok(ExitCode::from(2))
}

pub(super) fn exit_code(failed: usize) -> ExitCode {
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn test(args: &TestArgs) -> anyhow::Result<FileReport> {
    let dir = Path::new(&args.target);
    let project_dir = dir.is_dir().then_some(dir);
    let file = match (&args.examples, project_dir) {
        (Some(file), _) => file.clone(),
        (None, Some(dir)) => {
            examples::find_in(dir).unwrap_or_else(|| dir.join(examples::FILE_NAMES[0]))
        }
        (None, None) => examples::find_in(Path::new("."))
            .unwrap_or_else(|| PathBuf::from(examples::FILE_NAMES[0])),
    };
    let examples = examples::read(&file)?;
    let reference = match project_dir {
        Some(dir) => {
            let project = crate::authoring::project::detect(dir, examples.scorer.as_deref())?;
            build_project(&project, args.no_build)?;
            project.component.display().to_string()
        }
        None => args.target.clone(),
    };
    let limits = args.limits.limits(LimitArgs::SCORER_TIMEOUT_MS);
    let registry = super::registry_for(&limits)?;
    let (plugin, fixed) = resolve(registry, &reference)?;
    run_file(plugin, fixed.as_deref(), &examples, &limits)
}

/// Builds `project` (announcing each command on stderr) unless told not
/// to; either way its component must then exist.
fn build_project(project: &Project, no_build: bool) -> anyhow::Result<()> {
    if !no_build {
        project.build(|step| {
            crate::term_eprintln!(
                "building {} ({}): {}",
                project.dir.display(),
                project.language.as_str(),
                step.line()
            );
        })?;
    }
    if !project.component.is_file() {
        bail!(
            "{}: no component at {}{}",
            project.dir.display(),
            project.component.display(),
            if no_build {
                "; build it, or run without --no-build"
            } else {
                "; the build did not write it"
            }
        );
    }
    Ok(())
}

/// The component `reference` names, and the scorer it names when it does
/// (`path.wasm#id`, a built-in id, `pack/id`).
fn resolve(registry: &Registry, reference: &str) -> anyhow::Result<(Arc<Plugin>, Option<String>)> {
    if let Some((path, id)) = crate::plugin::split_path_reference(reference) {
        return Ok((registry.load_path(&path)?, id));
    }
    let (plugin, id) = registry.resolve_scorer(reference)?;
    Ok((plugin, Some(id)))
}

/// Scores every example of `file` with `plugin`: `fixed` is the scorer the
/// reference named, if it named one.
pub(super) fn run_file(
    plugin: Arc<Plugin>,
    fixed: Option<&str>,
    file: &ExamplesFile,
    limits: &Limits,
) -> anyhow::Result<FileReport> {
    let Description::Scorer(pack) = &plugin.description else {
        bail!(
            "{} is a {} component; `plugin test` runs scorers",
            plugin.label,
            plugin.kind
        );
    };
    let served: Vec<&str> = pack.scorers.iter().map(|s| s.id.as_str()).collect();
    // Every example's scorer, checked before any runs.
    let mut ids = Vec::with_capacity(file.examples.len());
    for example in &file.examples {
        let (id, at) = match (&example.scorer, &file.scorer) {
            (Some(id), _) => (id.as_str(), format!("{}.scorer", example.at)),
            (None, Some(id)) => (id.as_str(), "scorer".to_string()),
            (None, None) => match (fixed, served.as_slice()) {
                (Some(id), _) => (id, String::new()),
                (None, [id]) => (*id, String::new()),
                (None, _) => bail!(
                    "{}: {}: {} serves several scorers ({}); name one with `scorer:`",
                    file.file.display(),
                    example.at,
                    plugin.label,
                    served.join(", ")
                ),
            },
        };
        if let Some(fixed) = fixed
            && fixed != id
        {
            bail!(
                "{}: {at}: `{id}` is not `{fixed}`, the scorer being tested; remove `scorer:` or test `{id}`",
                file.file.display()
            );
        }
        if !served.contains(&id) {
            bail!(
                "{}: {at}: {} serves no scorer `{id}` (it serves {})",
                file.file.display(),
                plugin.label,
                served.join(", ")
            );
        }
        ids.push(id.to_string());
    }
    let mut results = Vec::with_capacity(ids.len());
    for (example, scorer) in file.examples.iter().zip(ids) {
        let answer = Answer {
            case_id: &example.name,
            output: example.output.clone(),
            expected: example.expected.clone(),
            input: example.input.clone(),
        };
        let actual = match score_answer(
            plugin.clone(),
            &scorer,
            &example.config,
            limits.clone(),
            Arc::new(crate::plugin::Grants::default()),
            answer,
        ) {
            Ok(score) => Actual::Scored {
                pass: score.passed,
                score: score.value,
                label: score.label,
                detail: score.detail,
            },
            Err(error) => Actual::Error {
                error: error.to_string(),
            },
        };
        let differences = outcome::differences(&example.expect, &actual);
        results.push(ExampleResult {
            name: example.name.clone(),
            scorer,
            passed: differences.is_empty(),
            expect: example.expect.clone(),
            actual,
            differences,
        });
    }
    let passed = results.iter().filter(|r| r.passed).count();
    Ok(FileReport {
        examples: file.file.clone(),
        component: plugin.label.clone(),
        passed,
        failed: results.len() - passed,
        results,
    })
}

/// One line per example, and what differed under each that failed.
pub(super) fn print_report(report: &FileReport) {
    crate::term_println!(
        "testing {} with {} ({} examples)",
        report.component,
        report.examples.display(),
        report.results.len()
    );
    for result in &report.results {
        let verdict = if result.passed { "ok  " } else { "FAIL" };
        crate::term_println!("{verdict} {}", result.name);
        for difference in &result.differences {
            crate::term_println!("  - expected {}", difference.expected);
            crate::term_println!("  + actual   {}", difference.actual);
        }
    }
}

pub(super) fn print_summary(passed: usize, failed: usize) {
    crate::outln!("{passed} passed, {failed} failed");
}

impl FileReport {
    pub(super) fn counts(&self) -> (usize, usize) {
        (self.passed, self.failed)
    }
}
