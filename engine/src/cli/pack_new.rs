//! `cautilus pack new` and `cautilus pack add scorer|preset`: a pack
//! directory whose components build outside any checkout. Rust components
//! are members of one Cargo workspace at the pack's root (one lock, one
//! SDK copy, one target directory); Python and JavaScript scorers are
//! projects of their own under `scorers/`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand};

use super::pack_build::write;
use super::scaffold::{self, CARGO_BUILD};
use super::scaffold_lang::{self, Lang};
use crate::authoring::lockfile::Flavor;
use crate::authoring::project::componentize_py_command;
use crate::authoring::rust_project::{self, CrateSpec, SdkSource};
use crate::authoring::sdk_copy::VENDOR_DIR;
use crate::pack::Manifest;
use crate::pack::manifest::{ComponentEntry, ComponentKind, MANIFEST};

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Pack name: lowercase letters, digits and `-`
    name: String,
    /// Directory to create (default: ./<name>)
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// The language of its first scorer, `<name>-check`
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,
    /// Build Rust components against the cautilus-sdk crate at this path
    /// (work on the SDK itself) instead of the copy this cautilus carries
    #[arg(long, value_name = "DIR")]
    sdk_path: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum AddCommand {
    /// A scorer (its id is its name) under scorers/<name>
    Scorer(AddScorerArgs),
    /// An app/prompt preset of your own (Rust) under presets/<name>
    Preset(AddPresetArgs),
}

#[derive(Debug, Args)]
pub struct AddScorerArgs {
    /// Scorer name, e.g. `tone`
    name: String,
    /// The language to write it in
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,
    /// The pack's directory
    #[arg(long, default_value = ".", value_name = "DIR")]
    pack: PathBuf,
}

#[derive(Debug, Args)]
pub struct AddPresetArgs {
    /// Crate name, e.g. `exact-prompt`
    name: String,
    /// The pack's directory
    #[arg(long, default_value = ".", value_name = "DIR")]
    pack: PathBuf,
}

pub fn new_pack(args: NewArgs) -> anyhow::Result<ExitCode> {
    let dir = scaffold::new_project_dir(&args.name, args.path)?;
    let sdk = scaffold::sdk_source(args.sdk_path)?;
    let manifest = format!(
        "[pack]\nname = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"The {name} pack\"\nwit = \"{wit}\"\n\n[[template]]\nname = \"base\"\npath = \"templates/base.fixture.yaml\"\n",
        name = args.name,
        wit = crate::plugin::WIT_VERSION,
    );
    write(&dir.join(MANIFEST), &manifest)?;
    let scorer = format!("{}-check", args.name);
    add_scorer(&dir, &scorer, args.lang, &sdk)?;
    let template = format!(
        "# Suites extend it with `extends: pack:{name}/base`.\nschemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nassertions:\n  - type: {name}/{scorer}\n",
        name = args.name
    );
    write(&dir.join("templates/base.fixture.yaml"), &template)?;
    write(
        &dir.join(".gitignore"),
        "/dist/\n/target/\nnode_modules/\n__pycache__/\n",
    )?;
    crate::term_println!("created pack `{}` in {}", args.name, dir.display());
    crate::outln!("\nnext:");
    crate::term_println!("  cautilus pack build {}", dir.display());
    crate::term_println!("  cautilus pack test {}", dir.display());
    crate::term_println!(
        "  cautilus pack install {}/dist/{}-0.1.0.tgz",
        dir.display(),
        args.name
    );
    crate::term_println!(
        "  # in a fixture: assertions: [{{type: {}/{scorer}, value: world}}]",
        args.name
    );
    Ok(ExitCode::SUCCESS)
}

pub fn add(command: AddCommand) -> anyhow::Result<ExitCode> {
    let (pack, added) = match command {
        AddCommand::Scorer(args) => {
            scaffold::validate_name(&args.name)?;
            add_scorer(&args.pack, &args.name, args.lang, &SdkSource::Vendored)?;
            (args.pack, format!("scorer `{}`", args.name))
        }
        AddCommand::Preset(args) => {
            scaffold::validate_name(&args.name)?;
            add_preset(&args.pack, &args.name)?;
            (
                args.pack,
                format!("preset `{}` (serves app/prompt)", args.name),
            )
        }
    };
    crate::term_println!("added {added} to the pack in {}", pack.display());
    crate::outln!("\nnext:");
    crate::term_println!("  cautilus pack build {}", pack.display());
    Ok(ExitCode::SUCCESS)
}

fn add_scorer(pack: &Path, name: &str, lang: Lang, sdk: &SdkSource) -> anyhow::Result<()> {
    let relative = format!("scorers/{name}");
    refuse_existing(pack, &relative)?;
    let file = name.replace('-', "_");
    let component = match lang {
        Lang::Rust => {
            let spec = CrateSpec {
                name,
                flavor: Flavor::Scorer,
            };
            add_rust_member(pack, &relative, spec, sdk)?;
            rust_component(
                &relative,
                spec,
                ComponentKind::Scorer,
                vec![name.to_string()],
            )
        }
        Lang::Python => {
            scaffold_lang::write_project(&pack.join(&relative), name, lang)?;
            ComponentEntry {
                build: Some(format!(
                    "cd {relative} && {}",
                    componentize_py_command(&format!("../../components/{file}.wasm"))
                )),
                ..component(&file, ComponentKind::Scorer, name, &relative)
            }
        }
        Lang::Javascript => {
            scaffold_lang::write_project(&pack.join(&relative), name, lang)?;
            ComponentEntry {
                build: Some(format!("cd {relative} && npm install && npm run build")),
                source: Some(format!("{relative}/{name}.wasm")),
                ..component(&file, ComponentKind::Scorer, name, &relative)
            }
        }
    };
    push_component(pack, component)
}

fn add_preset(pack: &Path, name: &str) -> anyhow::Result<()> {
    let relative = format!("presets/{name}");
    refuse_existing(pack, &relative)?;
    let spec = CrateSpec {
        name,
        flavor: Flavor::Preset,
    };
    add_rust_member(pack, &relative, spec, &SdkSource::Vendored)?;
    let entry = rust_component(
        &relative,
        spec,
        ComponentKind::Preset,
        vec![name.to_string()],
    );
    push_component(pack, entry)
}

/// Writes the crate at `relative` as a member of the pack's workspace,
/// creating the workspace (SDK copy, lock, toolchain) with the first one.
fn add_rust_member(
    pack: &Path,
    relative: &str,
    spec: CrateSpec,
    sdk: &SdkSource,
) -> anyhow::Result<()> {
    rust_project::write_member(&pack.join(relative), spec)?;
    if pack.join("Cargo.toml").is_file() {
        rust_project::add_member(pack, relative, spec)?;
    } else {
        rust_project::write_workspace(pack, &[(relative, spec)], sdk)?;
    }
    Ok(())
}

/// The manifest entry of a Rust member: built by cargo in the workspace,
/// rebuilt when the workspace's files, the SDK copy or the crate change.
fn rust_component(
    relative: &str,
    spec: CrateSpec,
    kind: ComponentKind,
    ids: Vec<String>,
) -> ComponentEntry {
    let wasm = spec.wasm_file();
    ComponentEntry {
        path: format!("components/{wasm}"),
        kind,
        ids,
        sha256: None,
        capabilities: vec![],
        build: Some(format!("{CARGO_BUILD} -p {}", spec.name)),
        source: Some(format!("target/wasm32-wasip2/release/{wasm}")),
        inputs: [
            "Cargo.toml",
            "Cargo.lock",
            "rust-toolchain.toml",
            VENDOR_DIR,
            relative,
        ]
        .map(str::to_string)
        .to_vec(),
        inputs_sha256: None,
        examples: (kind == ComponentKind::Scorer).then(|| format!("{relative}/examples.yaml")),
    }
}

fn component(file: &str, kind: ComponentKind, id: &str, relative: &str) -> ComponentEntry {
    ComponentEntry {
        path: format!("components/{file}.wasm"),
        kind,
        ids: vec![id.to_string()],
        sha256: None,
        capabilities: vec![],
        build: None,
        source: None,
        inputs: vec![relative.to_string()],
        inputs_sha256: None,
        examples: Some(format!("{relative}/examples.yaml")),
    }
}

fn push_component(pack: &Path, component: ComponentEntry) -> anyhow::Result<()> {
    let mut manifest = Manifest::read(pack)?;
    if let Some(existing) = manifest.components.iter().find(|c| {
        c.path == component.path
            || c.ids
                .iter()
                .any(|id| component.ids.contains(id) && c.kind == component.kind)
    }) {
        bail!(
            "{} already lists a component at {} serving {}; pick another name",
            pack.join(MANIFEST).display(),
            existing.path,
            existing.ids.join(", ")
        );
    }
    manifest.components.push(component);
    let text = manifest.to_toml();
    // Checked as a read would check it, before it is written.
    Manifest::parse(&text, &pack.join(MANIFEST))?;
    write(&pack.join(MANIFEST), &text)
}

fn refuse_existing(pack: &Path, relative: &str) -> anyhow::Result<()> {
    if !pack.join(MANIFEST).is_file() {
        bail!(
            "{} has no {MANIFEST}; give the pack's directory with --pack (or create one with `cautilus pack new`)",
            pack.display()
        );
    }
    if pack.join(relative).exists() {
        bail!(
            "{} already exists; pick another name",
            pack.join(relative).display()
        );
    }
    Ok(())
}
