//! `cautilus sdk show|update`: the `cautilus-sdk` a Rust plugin project
//! builds against, and replacing it with the one this binary carries.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::authoring::sdk_copy::{SDK_VERSION, VENDOR_DIR};
use crate::authoring::sdk_project::{self, Updated};

const EXAMPLES: &str = "\
Examples:
  cautilus sdk show                 # this cautilus's SDK, and the project's in the current directory
  cautilus sdk show ./acme-evals --json
  cautilus sdk update ./mentions-all";

#[derive(Debug, Subcommand)]
pub enum SdkCommand {
    /// Show the SDK this cautilus carries and the one a project uses
    #[command(after_help = EXAMPLES)]
    Show(ShowArgs),
    /// Replace a project's SDK copy with the one this cautilus carries (never an older one)
    #[command(after_help = EXAMPLES)]
    Update(UpdateArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A plugin crate or pack directory (default: the current directory, if it is one)
    dir: Option<PathBuf>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// A plugin crate or pack directory
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Replace a copy of the same version that has local edits
    #[arg(long)]
    force: bool,
}

pub fn run(command: SdkCommand) -> anyhow::Result<ExitCode> {
    match command {
        SdkCommand::Show(args) => show(args),
        SdkCommand::Update(args) => update(args),
    }
}

fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let project = if args.dir.is_some() || dir.join("Cargo.toml").is_file() {
        Some(sdk_project::inspect(&dir)?)
    } else {
        None
    };
    if args.json {
        let json = serde_json::json!({
            "carried": SDK_VERSION,
            "wit": crate::plugin::WIT_VERSION,
            "project": project,
        });
        crate::outln!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!(
        "this cautilus carries cautilus-sdk {SDK_VERSION} (plugin contract {})",
        crate::plugin::WIT_VERSION
    );
    let Some(project) = project else {
        return Ok(ExitCode::SUCCESS);
    };
    crate::term_println!("project {}:", project.root.display());
    for (manifest, requirement) in &project.requirements {
        crate::term_println!(
            "  {} requires cautilus-sdk {requirement}",
            manifest.display()
        );
    }
    let state = match (&project.copy_version, project.patched) {
        (Some(version), true) if version == SDK_VERSION && project.edited.is_empty() => {
            format!("{VENDOR_DIR}/ holds {version}, the same as this cautilus")
        }
        (Some(version), true) if version == SDK_VERSION => format!(
            "{VENDOR_DIR}/ holds {version} with local edits in {}",
            project.edited.join(", ")
        ),
        (Some(version), true) => match semver_order(version) {
            std::cmp::Ordering::Less => format!(
                "{VENDOR_DIR}/ holds {version}, older than this cautilus's: `cautilus sdk update` replaces it"
            ),
            _ => format!(
                "{VENDOR_DIR}/ holds {version}, newer than this cautilus's (update a cautilus, not the project)"
            ),
        },
        (Some(version), false) => format!(
            "{VENDOR_DIR}/ holds {version}, but no [patch.crates-io] entry uses it: cargo looks for cautilus-sdk on crates.io"
        ),
        (None, true) => "cautilus-sdk is patched in from a path (see Cargo.toml)".to_string(),
        (None, false) => {
            "cautilus-sdk comes from crates.io (no vendored copy; `cautilus sdk update` writes one)"
                .to_string()
        }
    };
    crate::term_println!("  {state}");
    Ok(ExitCode::SUCCESS)
}

fn semver_order(version: &str) -> std::cmp::Ordering {
    match (
        semver::Version::parse(version),
        semver::Version::parse(SDK_VERSION),
    ) {
        (Ok(found), Ok(carried)) => found.cmp(&carried),
        _ => std::cmp::Ordering::Greater,
    }
}

fn update(args: UpdateArgs) -> anyhow::Result<ExitCode> {
    match sdk_project::update(&args.dir, args.force)? {
        Updated::AlreadyCurrent => {
            crate::term_println!(
                "{}: cautilus-sdk {SDK_VERSION} already, nothing to do",
                args.dir.display()
            );
        }
        Updated::Replaced { from } => {
            crate::term_println!(
                "{}: cautilus-sdk {} -> {SDK_VERSION} ({VENDOR_DIR}/ rewritten, requirements pinned to ={SDK_VERSION}); the next cargo build refreshes Cargo.lock",
                args.dir.display(),
                from.as_deref().unwrap_or("(none)")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
