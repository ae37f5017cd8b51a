//! `cautilus plugin new scorer`: writes a scorer crate that builds with one
//! `cargo build --release --target wasm32-wasip2`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use super::scaffold_lang::Lang;

/// The cautilus-sdk version a new crate depends on: the one this binary
/// was released with (the workspace shares one version).
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, Args)]
pub struct NewScorerArgs {
    /// Crate and scorer name, e.g. `mentions-all`
    name: String,
    /// Directory to create (default: ./<name>)
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Depend on the cautilus-sdk crate at this path (a checkout's `sdk/`)
    /// instead of its published version
    #[arg(long, value_name = "DIR")]
    sdk_path: Option<PathBuf>,
    /// The language to write it in
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,
}

pub fn new_scorer(args: NewScorerArgs) -> anyhow::Result<ExitCode> {
    validate_name(&args.name)?;
    let dir = args
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
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
        println!("\nnext (see its README.md for the tools):");
        crate::term_println!("  cd {}", dir.display());
        crate::term_println!("  {build}");
        crate::term_println!(
            "  cautilus score --scorer ./{}.wasm --output 'refund for order 42' --config '{{\"keywords\": [\"refund\", \"order\"]}}'",
            args.name
        );
        println!("  cautilus plugin test   # builds when needed, runs examples.yaml");
        return Ok(ExitCode::SUCCESS);
    }
    let sdk = sdk_dir(args.sdk_path.clone())?;
    write_scorer_crate(&dir, &args.name, sdk.as_deref())?;
    let wasm = format!(
        "target/wasm32-wasip2/release/{}.wasm",
        args.name.replace('-', "_")
    );
    crate::term_println!("created scorer plugin `{}` in {}", args.name, dir.display());
    println!("\nnext:");
    crate::term_println!("  cd {}", dir.display());
    crate::term_println!("  cargo build --release --target wasm32-wasip2");
    crate::term_println!(
        "  cautilus score --scorer {wasm} --output 'hello world' --config '{{\"value\": \"world\"}}'"
    );
    println!("  cautilus plugin test   # builds, runs the answers in examples.yaml");
    Ok(ExitCode::SUCCESS)
}

/// Writes a scorer crate named `name` in `dir`, depending on the SDK at
/// `sdk`, else on its published version.
pub(super) fn write_scorer_crate(dir: &Path, name: &str, sdk: Option<&Path>) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("creating {}", dir.display()))?;
    write(&dir.join("Cargo.toml"), &cargo_toml(name, sdk))?;
    write(&dir.join("src/lib.rs"), &lib_rs(name))?;
    write(&dir.join(".gitignore"), "/target/\n")?;
    write(&dir.join("README.md"), &readme(name))?;
    Ok(())
}

/// The SDK crate at `given` (a checkout's `sdk/`), checked; `None` when
/// none is given (the crate depends on the published version).
pub(super) fn sdk_dir(given: Option<PathBuf>) -> anyhow::Result<Option<PathBuf>> {
    let Some(sdk) = given else {
        return Ok(None);
    };
    let sdk = sdk.canonicalize().with_context(|| {
        format!(
            "cannot find the cautilus-sdk crate at {}; pass --sdk-path <checkout>/sdk",
            sdk.display()
        )
    })?;
    if !sdk.join("Cargo.toml").is_file() {
        bail!(
            "{} has no Cargo.toml; pass --sdk-path <checkout>/sdk",
            sdk.display()
        );
    }
    Ok(Some(sdk))
}

pub(super) fn validate_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        bail!(
            "plugin name `{name}` must start with a lowercase letter and use only a-z, 0-9 and `-`"
        );
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn cargo_toml(name: &str, sdk: Option<&Path>) -> String {
    let dependency = match sdk {
        Some(path) => format!("{{ path = {:?} }}", path.display().to_string()),
        None => format!("\"{SDK_VERSION}\""),
    };
    format!(
        r#"[package]
name = "{name}"
description = "A cautilus scorer plugin"
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib"]

[dependencies]
cautilus-sdk = {dependency}
serde = {{ version = "1", features = ["derive"] }}

[profile.release]
lto = true
codegen-units = 1
panic = "abort"
strip = "debuginfo"

# A standalone crate, even when created inside another workspace.
[workspace]
"#
    )
}

fn lib_rs(name: &str) -> String {
    let type_name: String = name
        .split('-')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect();
    format!(
        r#"//! The `{name}` scorer. Edit `score` to implement your check.

use cautilus_sdk::{{ConfigSchema, PluginError, Score, ScoreInput, Scorer, export_scorers}};
use serde::Deserialize;

/// The config a fixture gives this scorer, e.g. `{{"type": "{name}", "value": "world"}}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {{
    /// The text to look for; falls back to the case's `expected`.
    #[serde(default)]
    value: Option<cautilus_sdk::serde_json::Value>,
}}

pub struct {type_name} {{
    config: Config,
}}

impl Scorer for {type_name} {{
    const ID: &'static str = "{name}";
    const DESCRIPTION: &'static str = "passes when the output contains `value`";
    type Config = Config;

    fn config_schema() -> ConfigSchema {{
        ConfigSchema::object(&[("value", "the text to look for")], &[])
    }}

    fn new(config: Config) -> Result<Self, PluginError> {{
        Ok(Self {{ config }})
    }}

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {{
        let needle = match input.value_or_expected(self.config.value.as_ref())? {{
            cautilus_sdk::serde_json::Value::String(text) => text,
            other => other.to_string(),
        }};
        let output = input.output();
        Ok(Score::check(Self::ID, output.contains(&needle), || {{
            format!(
                "expected {{needle:?}} in {{}}",
                cautilus_sdk::excerpt(output, 120)
            )
        }}))
    }}
}}

export_scorers!({type_name});
"#
    )
}

fn readme(name: &str) -> String {
    let wasm = name.replace('-', "_");
    format!(
        "# {name}\n\nA cautilus scorer plugin.\n\n```sh\nrustup target add wasm32-wasip2   # once\ncargo build --release --target wasm32-wasip2\ncautilus score --scorer target/wasm32-wasip2/release/{wasm}.wasm --output 'hello world' --config '{{\"value\": \"world\"}}'\n```\n\nIn a fixture: `assertions: [{{type: ./path/to/{wasm}.wasm, value: world}}]`.\n"
    )
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
    }

    #[test]
    fn type_name_is_camel_case() {
        assert!(lib_rs("mentions-all").contains("pub struct MentionsAll"));
    }
}
