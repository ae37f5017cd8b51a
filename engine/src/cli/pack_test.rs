//! `cautilus pack test`: builds a pack's components as `pack build` does
//! (without writing the manifest or an archive), checks each against the
//! manifest, and runs the examples file of every scorer component that
//! names one (`examples = "…"` in `cautilus-pack.toml`), reporting per
//! component. Exit 0 all passed, 1 an example failed, 2 the pack, a build,
//! a component or an examples file is at fault.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use serde::Serialize;

use super::LimitArgs;
use super::plugin_test::{FileReport, exit_code, print_report, print_summary, run_file};
use crate::pack::Manifest;
use crate::pack::manifest::MANIFEST;

pub const EXAMPLES: &str = "\
Examples:
  cautilus pack test                 # the pack in this directory
  cautilus pack test acme-evals --json
  cautilus pack test acme-evals --no-build

A scorer component names its examples in cautilus-pack.toml:
  [[component]]
  path = \"components/acme_check.wasm\"
  kind = \"scorer\"
  ids = [\"acme-check\"]
  examples = \"scorers/acme-check/examples.yaml\"

Exit status: 0 every example gave what it expects, 1 one did not, 2 the
pack, a build, a component or an examples file is at fault.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct PackTestArgs {
    /// The pack's directory (holding cautilus-pack.toml)
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Test the components as they are, without running their `build`
    #[arg(long)]
    no_build: bool,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PackReport {
    pack: String,
    passed: usize,
    failed: usize,
    components: Vec<ComponentReport>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ComponentReport {
    path: String,
    #[serde(flatten)]
    report: FileReport,
}

pub fn run(args: PackTestArgs) -> anyhow::Result<ExitCode> {
    match test(&args) {
        Ok(report) => {
            if args.json {
                crate::outln!(
                    "{}",
                    crate::term::json(&serde_json::to_string_pretty(&report)?)
                );
            } else {
                for component in &report.components {
                    crate::term_println!("component {}", component.path);
                    print_report(&component.report);
                }
                print_summary(report.passed, report.failed);
            }
            Ok(exit_code(report.failed))
        }
        Err(error) => super::plugin_test::setup_failed(&error),
    }
}

fn test(args: &PackTestArgs) -> anyhow::Result<PackReport> {
    let dir = &args.dir;
    let mut manifest = Manifest::read(dir)?;
    // Every examples file is read before anything is built.
    let mut files = Vec::new();
    for component in &manifest.components {
        if let Some(path) = &component.examples {
            files.push((
                component.path.clone(),
                crate::authoring::examples::read(&dir.join(path))?,
            ));
        }
    }
    if files.is_empty() {
        bail!(
            "{}: no component has `examples`; give a scorer component `examples = \"path/to/examples.yaml\"`",
            dir.join(MANIFEST).display()
        );
    }
    let mode = if args.no_build {
        super::pack_build::Components::AsTheyAre
    } else {
        super::pack_build::Components::Built
    };
    super::pack_build::build_components(dir, &mut manifest, mode)?;
    let limits = args.limits.limits(LimitArgs::SCORER_TIMEOUT_MS);
    let registry = super::registry_for(&limits)?;
    crate::plugin::packs::check_pack(registry, dir, &manifest)?;
    let mut components = Vec::with_capacity(files.len());
    for (path, file) in &files {
        let plugin = registry.load_path(&dir.join(path))?;
        let report = run_file(plugin, None, file, &limits)?;
        components.push(ComponentReport {
            path: path.clone(),
            report,
        });
    }
    let (passed, failed) = components.iter().fold((0, 0), |(p, f), c| {
        let (passed, failed) = c.report.counts();
        (p + passed, f + failed)
    });
    Ok(PackReport {
        pack: format!("{}@{}", manifest.pack.name, manifest.pack.version),
        passed,
        failed,
        components,
    })
}
