//! `cautilus eval list`: the project's suites, from its `cautilus.toml`
//! (or the default globs), without running anything.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::project;

pub const LIST_EXAMPLES: &str = "\
Examples:
  cautilus eval list                        # the suites under evals/ (or cautilus.toml's include)
  cautilus eval list --json                 # the manifest, cautilus.manifest.v1
  cautilus eval list --config ci/cautilus.toml

Nothing runs and no provider is contacted: each fixture is read and checked
as `eval test` checks it before running (the preset contract, every case,
the assertions). The valid suites are listed; each invalid fixture is named
with its errors (on stderr; under `invalid` with --json).

Exit status: 0 every fixture is valid, 2 one is invalid (the valid ones are
still listed), two suites share an id, or no fixture matches (with --json,
an empty manifest whose `notice` says where fixtures are looked for).";

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The project config (default: the nearest cautilus.toml upward from
    /// the current directory; without one, fixtures under
    /// evals/**/*.fixture.{json,yaml,yml})
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the manifest as JSON (`cautilus.manifest.v1`)
    #[arg(long)]
    json: bool,
}

pub fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let (loaded, file) = project::open(&cwd, args.config.as_deref())?;
    // A bad `[providers]` table is refused before the suites are looked
    // for, as any other config error is; without one, a project that has
    // no suites needs no plugin engine to say so.
    let provider_env = if loaded.config.providers.is_empty() {
        Default::default()
    } else {
        crate::cli::provider_env(crate::cli::registry()?, &loaded)?
    };
    let mut manifest = match project::manifest::manifest(&loaded, file.as_deref()) {
        // A project with no fixture yet is still a manifest (serve and mcp
        // show it), with the error said as for any other listing.
        Err(empty @ project::manifest::ProjectError::Empty { .. }) if args.json => {
            let manifest = project::manifest::empty(&loaded, file.as_deref(), &empty);
            crate::outln!(
                "{}",
                crate::term::json(&serde_json::to_string_pretty(&manifest)?)
            );
            return Err(empty.into());
        }
        listed => listed?,
    };
    let registry = crate::cli::registry()?;
    let _preloading = registry.preload_builtins();
    let default_judge = loaded
        .config
        .judge
        .as_ref()
        .map(project::config::ConfigJudge::to_fixture_value);
    let options = crate::quality::check::CheckOptions {
        default_judge: default_judge.as_ref(),
        provider_env,
        ..Default::default()
    };
    project::check::check_suites(registry, &loaded, &mut manifest, &options, |_| true);
    let status = if manifest.invalid.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    };
    if args.json {
        crate::outln!(
            "{}",
            crate::term::json(&serde_json::to_string_pretty(&manifest)?)
        );
        return Ok(status);
    }
    // Every field is the fixtures' text: shown escaped.
    let shown = |text: &str| crate::term::inline(text).into_owned();
    let id_width = manifest
        .suites
        .iter()
        .map(|s| shown(&s.id).chars().count())
        .max()
        .unwrap_or(2)
        .max(2);
    crate::outln!(
        "{:<id_width$}  {:<16}  {:>6}  {:<12}  {:<20}  PATH",
        "ID",
        "SURFACE/PRESET",
        "CASES",
        "PROVIDER",
        "MODEL"
    );
    for suite in &manifest.suites {
        crate::outln!(
            "{:<id_width$}  {:<16}  {:>6}  {:<12}  {:<20}  {}",
            shown(&suite.id),
            shown(&format!("{}/{}", suite.surface, suite.preset)),
            suite.cases,
            shown(suite.provider.as_deref().unwrap_or("-")),
            shown(suite.model.as_deref().unwrap_or("-")),
            shown(&suite.path)
        );
    }
    crate::outln!(
        "{} suites, {} cases",
        manifest.suites.len(),
        manifest.suites.iter().map(|s| s.cases).sum::<u64>()
    );
    if !manifest.invalid.is_empty() {
        let mut err = std::io::stderr().lock();
        use std::io::Write;
        writeln!(
            err,
            "error: {} fixture(s) of the project are invalid (not listed above; `eval test` runs no suite while one is):",
            manifest.invalid.len()
        )?;
        project::check::print_invalid(&mut err, &manifest.invalid)?;
    }
    Ok(status)
}
