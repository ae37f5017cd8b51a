//! `cautilus plugin new scorer|preset`: writes a plugin project that builds
//! outside any checkout with the one command it prints (a Rust crate
//! carrying the SDK, see [`crate::authoring`]; or a Python/JavaScript
//! project, see [`super::scaffold_lang`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::scaffold_lang::Lang;
use crate::authoring::lockfile::Flavor;
use crate::authoring::rust_project::{self, CrateSpec, SdkSource};

#[derive(Debug, Args)]
pub struct NewScorerArgs {
    /// Crate and scorer name, e.g. `mentions-all`
    name: String,
    /// Directory to create (default: ./<name>)
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Build against the cautilus-sdk crate at this path (work on the SDK
    /// itself) instead of the copy this cautilus carries
    #[arg(long, value_name = "DIR")]
    sdk_path: Option<PathBuf>,
    /// The language to write it in
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,
}

#[derive(Debug, Args)]
pub struct NewPresetArgs {
    /// Crate name, e.g. `exact-prompt`
    name: String,
    /// Directory to create (default: ./<name>)
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Build against the cautilus-sdk crate at this path instead of the copy this cautilus carries
    #[arg(long, value_name = "DIR")]
    sdk_path: Option<PathBuf>,
}

/// The command that builds a Rust plugin crate.
pub const CARGO_BUILD: &str = "cargo build --release --target wasm32-wasip2";

pub fn new_scorer(args: NewScorerArgs) -> anyhow::Result<ExitCode> {
    let dir = new_project_dir(&args.name, args.path.clone())?;
    if args.lang != Lang::Rust {
        let build = super::scaffold_lang::write_project(&dir, &args.name, args.lang)?;
        let lang = match args.lang {
            Lang::Python => "Python",
            _ => "JavaScript",
        };
        crate::term_println!(
            "created {lang} scorer plugin `{}` in {}",
            args.name,
            dir.display()
        );
        crate::outln!("\nnext (see its README.md for the tools):");
        crate::term_println!("  cd {}", dir.display());
        crate::term_println!("  {build}");
        crate::outln!("  cautilus plugin test .");
        crate::term_println!(
            "  cautilus score --scorer ./{}.wasm --output 'refund for order 42' --config '{{\"keywords\": [\"refund\", \"order\"]}}'",
            args.name
        );
        crate::outln!("  cautilus plugin test   # builds when needed, runs examples.yaml");
        return Ok(ExitCode::SUCCESS);
    }
    let spec = CrateSpec {
        name: &args.name,
        flavor: Flavor::Scorer,
    };
    rust_project::write_standalone(&dir, spec, &sdk_source(args.sdk_path)?)?;
    crate::term_println!("created scorer plugin `{}` in {}", args.name, dir.display());
    crate::outln!("\nnext:");
    crate::term_println!("  cd {}", dir.display());
    crate::outln!("  {CARGO_BUILD}");
    crate::outln!("  cautilus plugin test .");
    crate::term_println!(
        "  cautilus score --scorer target/wasm32-wasip2/release/{} --output 'hello world' --config '{{\"value\": \"world\"}}'",
        spec.wasm_file()
    );
    crate::outln!("  cautilus plugin test   # builds, runs the answers in examples.yaml");
    Ok(ExitCode::SUCCESS)
}

pub fn new_preset(args: NewPresetArgs) -> anyhow::Result<ExitCode> {
    let dir = new_project_dir(&args.name, args.path.clone())?;
    let spec = CrateSpec {
        name: &args.name,
        flavor: Flavor::Preset,
    };
    rust_project::write_standalone(&dir, spec, &sdk_source(args.sdk_path)?)?;
    crate::term_println!(
        "created preset plugin `{}` (serves app/prompt) in {}",
        args.name,
        dir.display()
    );
    crate::outln!("\nnext:");
    crate::term_println!("  cd {}", dir.display());
    crate::outln!("  {CARGO_BUILD}");
    crate::term_println!(
        "  cautilus plugin inspect target/wasm32-wasip2/release/{}",
        spec.wasm_file()
    );
    crate::outln!(
        "  # ship it in a pack (`cautilus pack add preset`) and run suites on it with `presetPack: <pack>`"
    );
    Ok(ExitCode::SUCCESS)
}

/// Where the SDK comes from: the copy this binary carries, or `--sdk-path`
/// (checked to hold a crate).
pub(super) fn sdk_source(given: Option<PathBuf>) -> anyhow::Result<SdkSource> {
    let Some(sdk) = given else {
        return Ok(SdkSource::Vendored);
    };
    let sdk = sdk.canonicalize().with_context(|| {
        format!(
            "cannot find the cautilus-sdk crate at {}; --sdk-path takes a checkout's sdk/ directory",
            sdk.display()
        )
    })?;
    if !sdk.join("Cargo.toml").is_file() {
        bail!(
            "{} has no Cargo.toml; --sdk-path takes a checkout's sdk/ directory",
            sdk.display()
        );
    }
    Ok(SdkSource::Path(sdk))
}

/// The directory a new project named `name` goes in (`path`, else
/// `./<name>`), once the name is checked and the directory is free.
pub(super) fn new_project_dir(name: &str, path: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    validate_name(name)?;
    let dir = path.unwrap_or_else(|| PathBuf::from(name));
    refuse_non_empty(&dir)?;
    Ok(dir)
}

/// Refuses to write into a directory that exists and is not empty.
fn refuse_non_empty(dir: &Path) -> anyhow::Result<()> {
    if dir.exists()
        && dir
            .read_dir()
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!(
            "{} already exists and is not empty; pick another --path",
            dir.display()
        );
    }
    Ok(())
}

pub(super) fn validate_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        bail!(
            "plugin name `{name}` must start with a lowercase letter and use only a-z, 0-9 and `-` (at most 64)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated() {
        assert!(validate_name("mentions-all").is_ok());
        assert!(validate_name("Bad").is_err());
        assert!(validate_name("9lives").is_err());
        assert!(validate_name("a_b").is_err());
        assert!(validate_name(&"a".repeat(65)).is_err());
    }
}
