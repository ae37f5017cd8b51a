//! `cautilus pack new|build|install|list|inspect|verify|remove`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use super::pack_build::{Components, build_components, write};
use super::registry;
use crate::pack::archive::{PackFiles, digest};
use crate::pack::manifest::{Capability, MANIFEST};
use crate::pack::{InstallRecord, InstalledPack, LockFile, Manifest, PackHome};
use crate::plugin::packs::{CheckedComponent, check_pack};

const PACK_EXAMPLES: &str = "\
Examples:
  cautilus pack new acme-evals
  cautilus pack add scorer tone --lang python --pack acme-evals
  cautilus pack add preset exact-prompt --pack acme-evals
  cautilus pack build acme-evals
  cautilus pack test acme-evals
  cautilus pack publish acme-evals/dist/acme-evals-0.1.0.tgz oci://127.0.0.1:5000/acme-evals:0.1.0
  cautilus pack install oci://127.0.0.1:5000/acme-evals:0.1.0 --grant model
  cautilus pack install acme-evals/dist/acme-evals-0.1.0.tgz
  cautilus pack list
  cautilus pack verify acme-evals";

#[derive(Debug, Subcommand)]
pub enum PackCommand {
    /// Create a pack: a manifest, a scorer (Rust by default) and a fixture template
    New(super::pack_new::NewArgs),
    /// Add a scorer (Rust, Python, JavaScript) or a preset (Rust) to a pack
    #[command(subcommand)]
    Add(super::pack_new::AddCommand),
    /// Build a pack's components and write its reproducible archive
    Build(BuildArgs),
    /// Build a pack's components and run each scorer's example answers (no archive)
    Test(super::pack_test::PackTestArgs),
    /// Publish a built pack archive to an OCI registry
    Publish(PublishArgs),
    /// Install a pack from a registry (oci://…), an archive or a directory, verified, and pin it in cautilus.lock
    Install(InstallArgs),
    /// List installed packs
    List(ListArgs),
    /// Show an installed pack: components, ids, capabilities, grants
    Inspect(InspectArgs),
    /// Check installed packs again: every file's hash, the lock, each component's describe
    Verify(VerifyArgs),
    /// Remove an installed pack (`name` or `name@version`)
    Remove(RemoveArgs),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The pack's directory (holding cautilus-pack.toml)
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Archive to write (default: <dir>/dist/<name>-<version>.tgz)
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Build every component, even those whose `inputs` are unchanged since they were built
    #[arg(long)]
    rebuild: bool,
}

#[derive(Debug, Args)]
pub struct PublishArgs {
    /// The archive `pack build` wrote
    archive: PathBuf,
    /// Where to publish it: oci://host[:port]/repository:tag
    reference: String,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// oci://host[:port]/repository:tag, a pack archive (.tgz) or a directory
    source: String,
    /// Capabilities granted to the pack (`model`, `http:<host>`, `process:<program>`); a
    /// component gets what it requests and is granted, nothing else
    #[arg(long = "grant", value_name = "CAPABILITY")]
    grants: Vec<String>,
    /// Replace an installed version built from other bytes
    #[arg(long)]
    force: bool,
    /// Lock file to pin it in (default: the project's cautilus.lock, beside cautilus.toml)
    #[arg(long, value_name = "FILE", conflicts_with = "no_lock")]
    lock: Option<PathBuf>,
    /// Do not write a lock file
    #[arg(long)]
    no_lock: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// `name` or `name@version`
    pack: String,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// `name` or `name@version` (default: every installed pack)
    pack: Option<String>,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// `name` or `name@version`
    pack: String,
}

pub fn run(command: PackCommand) -> anyhow::Result<ExitCode> {
    match command {
        PackCommand::New(args) => super::pack_new::new_pack(args),
        PackCommand::Add(command) => super::pack_new::add(command),
        PackCommand::Build(args) => build(args),
        PackCommand::Test(args) => super::pack_test::run(args),
        PackCommand::Publish(args) => publish(args),
        PackCommand::Install(args) => install(args),
        PackCommand::List(args) => list(args),
        PackCommand::Inspect(args) => inspect(args),
        PackCommand::Verify(args) => verify(args),
        PackCommand::Remove(args) => remove(args),
    }
}

pub const EXAMPLES: &str = PACK_EXAMPLES;

fn split_label(label: &str) -> (&str, Option<&str>) {
    match label.split_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (label, None),
    }
}

fn build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.dir;
    let mut manifest = Manifest::read(dir)?;
    let mode = if args.rebuild {
        Components::Rebuilt
    } else {
        Components::Built
    };
    build_components(dir, &mut manifest, mode)?;
    let registry = registry()?;
    let checked = check_pack(registry, dir, &manifest)?;
    write(&dir.join(MANIFEST), manifest.to_toml())?;
    let files = PackFiles::from_dir(dir)?;
    let archive = files.to_archive();
    let output = args.output.unwrap_or_else(|| {
        dir.join("dist").join(format!(
            "{}-{}.tgz",
            manifest.pack.name, manifest.pack.version
        ))
    });
    crate::eval::files::write_bytes(&output, &archive)?;
    print_components(&checked);
    crate::term_println!(
        "built {}@{}: {} ({} bytes, {})",
        manifest.pack.name,
        manifest.pack.version,
        output.display(),
        archive.len(),
        digest(&archive)
    );
    Ok(ExitCode::SUCCESS)
}

fn print_components(checked: &[CheckedComponent]) {
    for component in checked {
        let requested: Vec<String> = component.requested.iter().map(|c| c.to_string()).collect();
        crate::term_println!(
            "  {} {} [{}] sha256 {}{}",
            component.kind.as_str(),
            component.path,
            component.ids.join(", "),
            &component.sha256[..16],
            if requested.is_empty() {
                String::new()
            } else {
                format!(", requests {}", requested.join(", "))
            }
        );
    }
}

fn publish(args: PublishArgs) -> anyhow::Result<ExitCode> {
    if !crate::pack::oci::is_oci(&args.reference) {
        bail!(
            "`{}` is not a registry reference; write oci://host[:port]/repository:tag",
            args.reference
        );
    }
    let origin = args.archive.display().to_string();
    let bytes = crate::pack::archive::read_archive_file(&args.archive)?;
    let files = PackFiles::from_archive(&bytes, &origin)?;
    files.check_hashes(&origin)?;
    let url = crate::pack::oci::push(&args.reference, &bytes, &files.manifest)?;
    crate::term_println!(
        "published {}@{} to {} ({})",
        files.manifest.pack.name,
        files.manifest.pack.version,
        args.reference,
        digest(&bytes)
    );
    crate::term_println!("  manifest: {url}");
    Ok(ExitCode::SUCCESS)
}

/// Reads a pack from a registry, a file (archive) or a directory: its
/// files and the digest of its archive.
fn read_source(source: &str) -> anyhow::Result<(PackFiles, String)> {
    if crate::pack::oci::is_oci(source) {
        let (bytes, digest) = crate::pack::oci::pull(source)?;
        let files = PackFiles::from_archive(&bytes, source)?;
        return Ok((files, digest));
    }
    let path = Path::new(source);
    if path.is_dir() {
        let files = PackFiles::from_dir(path)?;
        let archive = files.to_archive();
        return Ok((files, digest(&archive)));
    }
    let bytes = crate::pack::archive::read_archive_file(path)?;
    let files = PackFiles::from_archive(&bytes, source)?;
    Ok((files, digest(&bytes)))
}

fn install(args: InstallArgs) -> anyhow::Result<ExitCode> {
    let grants: Vec<Capability> = args
        .grants
        .iter()
        .map(|g| Capability::parse(g).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<_>>()?;
    let (files, archive_digest) = read_source(&args.source)?;
    files.check_hashes(&args.source)?;
    // Check what each component describes before anything is installed.
    let staging = tempfile::tempdir().context("creating a temporary directory")?;
    for (path, bytes) in &files.files {
        write(&staging.path().join(path), bytes)?;
    }
    let registry = registry()?;
    let checked = check_pack(registry, staging.path(), &files.manifest)?;
    let home = PackHome::from_env()?;
    let source = if Path::new(&args.source).exists() {
        std::fs::canonicalize(&args.source)
            .unwrap_or_else(|_| PathBuf::from(&args.source))
            .display()
            .to_string()
    } else {
        args.source.clone()
    };
    let record = InstallRecord {
        source,
        digest: archive_digest,
        installed_at: crate::eval::files::now_rfc3339(),
        granted: grants.iter().map(ToString::to_string).collect(),
    };
    let installed = home.install(&files, record, args.force)?;
    crate::term_println!(
        "installed {} in {}",
        installed.label(),
        installed.dir.display()
    );
    print_components(&checked);
    report_grants(&checked, &grants);
    if !args.no_lock {
        let lock_path = args.lock.clone().or_else(project_lock);
        match lock_path {
            Some(path) => {
                let mut lock = if path.exists() {
                    LockFile::read(&path)?
                } else {
                    LockFile::new()
                };
                lock.pin(&installed)?;
                lock.write(&path)?;
                crate::term_println!("pinned {} in {}", installed.label(), path.display());
            }
            None => crate::term_println!(
                "no project here (no cautilus.toml or cautilus.lock above this directory): nothing pinned; pass --lock FILE to pin it"
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What each component requests and whether the install granted it.
fn report_grants(checked: &[CheckedComponent], grants: &[Capability]) {
    let mut withheld = Vec::new();
    for component in checked {
        for capability in &component.requested {
            if !grants.contains(capability) {
                withheld.push(format!("{} ({})", capability, component.path));
            }
        }
    }
    if !withheld.is_empty() {
        crate::term_println!(
            "not granted (calls needing them will be denied; reinstall with --grant to allow): {}",
            withheld.join(", ")
        );
    }
}

/// The project's lock: the nearest cautilus.lock, else one beside the
/// nearest cautilus.toml.
fn project_lock() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    LockFile::find(&cwd).or_else(|| {
        crate::project::config::find(&cwd)
            .and_then(|toml| toml.parent().map(|d| d.join(crate::pack::lock::LOCK_FILE)))
    })
}

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let home = PackHome::from_env()?;
    let packs = home.list()?;
    if args.json {
        let rows: Vec<serde_json::Value> = packs.iter().map(pack_json).collect();
        crate::outln!(
            "{}",
            crate::term::json(&serde_json::to_string_pretty(&rows)?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    if packs.is_empty() {
        crate::term_println!("no packs installed in {}", home.packs_dir().display());
    }
    for pack in &packs {
        crate::term_println!(
            "{:<32} {} ({})",
            pack.label(),
            pack.record.source,
            pack.record.digest
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn pack_json(pack: &InstalledPack) -> serde_json::Value {
    serde_json::json!({
        "name": pack.name(),
        "version": pack.version(),
        "description": pack.manifest.pack.description,
        "wit": pack.manifest.pack.wit,
        "dir": pack.dir,
        "source": pack.record.source,
        "digest": pack.record.digest,
        "installedAt": pack.record.installed_at,
        "granted": pack.record.granted,
        "components": pack.manifest.components.iter().map(|c| serde_json::json!({
            "path": c.path,
            "kind": c.kind.as_str(),
            "ids": c.ids,
            "sha256": c.sha256,
            "capabilities": c.capabilities,
        })).collect::<Vec<_>>(),
        "templates": pack.manifest.templates.iter().map(|t| serde_json::json!({
            "name": t.name,
            "path": t.path,
        })).collect::<Vec<_>>(),
    })
}

fn inspect(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let (name, version) = split_label(&args.pack);
    let pack = PackHome::from_env()?.get(name, version)?;
    if args.json {
        crate::outln!(
            "{}",
            crate::term::json(&serde_json::to_string_pretty(&pack_json(&pack))?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    crate::term_println!("{}  {}", pack.label(), pack.manifest.pack.description);
    crate::term_println!("  contract: cautilus:plugin@{}", pack.manifest.pack.wit);
    crate::term_println!("  from: {} ({})", pack.record.source, pack.record.digest);
    crate::term_println!("  in: {}", pack.dir.display());
    crate::term_println!(
        "  granted: {}",
        if pack.record.granted.is_empty() {
            "nothing".to_string()
        } else {
            pack.record.granted.join(", ")
        }
    );
    for c in &pack.manifest.components {
        crate::term_println!(
            "  {} {} [{}]{}",
            c.kind.as_str(),
            c.path,
            c.ids.join(", "),
            if c.capabilities.is_empty() {
                String::new()
            } else {
                format!(" may request {}", c.capabilities.join(", "))
            }
        );
    }
    for t in &pack.manifest.templates {
        crate::term_println!(
            "  template {} ({}): extends: pack:{}/{}",
            t.name,
            t.path,
            pack.name(),
            t.name
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let home = PackHome::from_env()?;
    let packs = match &args.pack {
        Some(label) => {
            let (name, version) = split_label(label);
            vec![home.get(name, version)?]
        }
        None => home.list()?,
    };
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let lock = match LockFile::find(&cwd) {
        Some(file) => Some((LockFile::read(&file)?, file)),
        None => None,
    };
    let registry = registry()?;
    for pack in &packs {
        pack.check_files()?;
        if let Some((lock, file)) = &lock {
            lock.check(file, pack)?;
        }
        check_pack(registry, &pack.dir, &pack.manifest)?;
        crate::term_println!(
            "ok {}: {} components match the manifest{}",
            pack.label(),
            pack.manifest.components.len(),
            match &lock {
                Some((lock, file)) if lock.get(pack.name()).is_some() =>
                    format!(" and {}", file.display()),
                _ => String::new(),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(args: RemoveArgs) -> anyhow::Result<ExitCode> {
    let (name, version) = split_label(&args.pack);
    let removed = PackHome::from_env()?.remove(name, version)?;
    for pack in removed {
        crate::term_println!("removed {}", pack.label());
    }
    if let Some(lock) = std::env::current_dir()
        .ok()
        .and_then(|d| LockFile::find(&d))
        && LockFile::read(&lock).is_ok_and(|l| l.get(name).is_some())
    {
        crate::term_println!(
            "{} still pins `{name}`: runs that use it will fail until it is installed again",
            lock.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
