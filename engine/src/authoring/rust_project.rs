//! The Rust projects `plugin new` and `pack new|add` write: a scorer or
//! preset crate, standalone or as a member of a pack's Cargo workspace,
//! with the SDK copy, the patch that points `cautilus-sdk` at it, a pinned
//! toolchain and a pinned lock. Each builds with `cargo build --release
//! --target wasm32-wasip2` outside any checkout.

use std::path::{Path, PathBuf};

use super::AuthoringError;
use super::lockfile::{self, Flavor};
use super::sdk_copy::{self, SDK_VERSION, VENDOR_DIR};

/// Where the SDK a project builds against comes from.
#[derive(Debug, Clone)]
pub enum SdkSource {
    /// A copy written into the project (`vendor/cautilus-sdk`).
    Vendored,
    /// A crate elsewhere (`--sdk-path`, for work on the SDK itself).
    Path(PathBuf),
}

/// One crate of a project.
#[derive(Debug, Clone, Copy)]
pub struct CrateSpec<'a> {
    pub name: &'a str,
    pub flavor: Flavor,
}

impl CrateSpec<'_> {
    /// The `.wasm` file cargo writes for it.
    pub fn wasm_file(&self) -> String {
        format!("{}.wasm", self.name.replace('-', "_"))
    }

    fn type_name(&self) -> String {
        self.name
            .split('-')
            .map(|part| {
                let mut chars = part.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            })
            .collect()
    }
}

const SCORER_LIB: &str = include_str!("../../../templates/scorer-rust/src/lib.rs");
const SCORER_README: &str = include_str!("../../../templates/scorer-rust/README.md");
const SCORER_EXAMPLES: &str = include_str!("../../../templates/scorer-rust/examples.yaml");
const PRESET_LIB: &str = include_str!("../../../templates/preset-rust/src/lib.rs");

/// The release profile of a component: small and fast wasm.
const RELEASE_PROFILE: &str =
    "[profile.release]\nlto = true\ncodegen-units = 1\npanic = \"abort\"\nstrip = \"debuginfo\"\n";

/// Writes a standalone crate (its own workspace) in `dir`.
pub fn write_standalone(
    dir: &Path,
    spec: CrateSpec,
    sdk: &SdkSource,
) -> Result<(), AuthoringError> {
    let mut manifest = package_manifest(spec);
    manifest.push('\n');
    manifest.push_str(RELEASE_PROFILE);
    manifest.push_str(
        "\n# A standalone crate, even when created inside another workspace.\n[workspace]\n\n",
    );
    manifest.push_str(&patch_section(sdk));
    write_crate_files(dir, spec, manifest)?;
    write_project_files(dir, sdk, &lockfile::new_lock(&[(spec.name, spec.flavor)]))?;
    write(&dir.join(".gitignore"), "/target/\n")
}

/// Writes a pack's Cargo workspace in `root` with `members` (crates under
/// it), the SDK copy and the lock; the members are written by
/// [`write_member`].
pub fn write_workspace(
    root: &Path,
    members: &[(&str, CrateSpec)],
    sdk: &SdkSource,
) -> Result<(), AuthoringError> {
    let listed: Vec<String> = members.iter().map(|(dir, _)| format!("{dir:?}")).collect();
    let manifest = format!(
        "# The pack's Rust components, one Cargo workspace: one lock, one target directory.\n[workspace]\nresolver = \"3\"\nmembers = [{}]\n\n{RELEASE_PROFILE}\n{}",
        listed.join(", "),
        patch_section(sdk)
    );
    write(&root.join("Cargo.toml"), &manifest)?;
    let roots: Vec<(&str, Flavor)> = members.iter().map(|(_, s)| (s.name, s.flavor)).collect();
    write_project_files(root, sdk, &lockfile::new_lock(&roots))
}

/// Writes a member crate of a pack's workspace in `dir`.
pub fn write_member(dir: &Path, spec: CrateSpec) -> Result<(), AuthoringError> {
    write_crate_files(dir, spec, package_manifest(spec))
}

/// Adds the crate at `member` (relative to `root`) to the pack workspace
/// in `root`: its `members` list and its lock entry.
pub fn add_member(root: &Path, member: &str, spec: CrateSpec) -> Result<(), AuthoringError> {
    let path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| AuthoringError::io(&path, e))?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| AuthoringError::project(&path, format!("is not valid TOML: {e}")))?;
    let members: Vec<String> = table
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .map(|m| {
            m.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .ok_or_else(|| AuthoringError::project(&path, "has no [workspace] members list"))?;
    if !members.iter().any(|m| m == member) {
        let mut listed: Vec<String> = members.iter().map(|m| format!("{m:?}")).collect();
        listed.push(format!("{member:?}"));
        let line = format!("members = [{}]", listed.join(", "));
        let mut found = false;
        let rewritten: Vec<String> = text
            .lines()
            .map(|l| {
                if !found && l.trim_start().starts_with("members") && l.trim_end().ends_with(']') {
                    found = true;
                    line.clone()
                } else {
                    l.to_string()
                }
            })
            .collect();
        if !found {
            return Err(AuthoringError::project(
                &path,
                format!(
                    "add {member:?} to the [workspace] members list yourself (it spans several lines)"
                ),
            ));
        }
        write(&path, &(rewritten.join("\n") + "\n"))?;
    }
    let lock_path = root.join("Cargo.lock");
    if let Ok(lock) = std::fs::read_to_string(&lock_path)
        && let Some(updated) = lockfile::add_root(&lock, spec.name, spec.flavor)
    {
        write(&lock_path, &updated)?;
    }
    Ok(())
}

fn package_manifest(spec: CrateSpec) -> String {
    let (description, dependencies) = match spec.flavor {
        Flavor::Scorer => (
            "A cautilus scorer plugin",
            format!(
                "cautilus-sdk = \"={SDK_VERSION}\"\nserde = {{ version = \"1\", features = [\"derive\"] }}\n"
            ),
        ),
        Flavor::Preset => (
            "A cautilus preset plugin",
            format!("cautilus-sdk = {{ version = \"={SDK_VERSION}\", features = [\"app\"] }}\n"),
        ),
    };
    format!(
        "[package]\nname = \"{name}\"\ndescription = \"{description}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n# The SDK version this project was made with: `cautilus sdk show` and `cautilus sdk update`.\n[dependencies]\n{dependencies}",
        name = spec.name
    )
}

fn patch_section(sdk: &SdkSource) -> String {
    match sdk {
        SdkSource::Vendored => format!(
            "# cautilus-sdk is the copy in {VENDOR_DIR}/ (written by cautilus). Once the\n# crate is on crates.io, delete the next line to build from there.\n[patch.crates-io]\ncautilus-sdk = {{ path = \"{VENDOR_DIR}\" }}\n"
        ),
        SdkSource::Path(path) => format!(
            "# cautilus-sdk from a checkout (--sdk-path).\n[patch.crates-io]\ncautilus-sdk = {{ path = {:?} }}\n",
            path.display().to_string()
        ),
    }
}

fn write_crate_files(dir: &Path, spec: CrateSpec, manifest: String) -> Result<(), AuthoringError> {
    let fill = |text: &str| {
        text.replace("{{name}}", spec.name)
            .replace("{{Type}}", &spec.type_name())
            .replace("{{file}}", spec.name.replace('-', "_").as_str())
            .replace(
                "{{wasm}}",
                &format!("target/wasm32-wasip2/release/{}", spec.wasm_file()),
            )
    };
    write(&dir.join("Cargo.toml"), &manifest)?;
    match spec.flavor {
        Flavor::Scorer => {
            write(&dir.join("src/lib.rs"), &fill(SCORER_LIB))?;
            write(&dir.join("README.md"), &fill(SCORER_README))?;
            write(&dir.join("examples.yaml"), &fill(SCORER_EXAMPLES))
        }
        Flavor::Preset => write(&dir.join("src/lib.rs"), &fill(PRESET_LIB)),
    }
}

/// The files every project root has: the SDK copy (when vendored), the
/// pinned toolchain and the lock.
fn write_project_files(root: &Path, sdk: &SdkSource, lock: &str) -> Result<(), AuthoringError> {
    if matches!(sdk, SdkSource::Vendored) {
        sdk_copy::write_copy(&root.join(VENDOR_DIR))?;
    }
    let toolchain = format!(
        "# The toolchain this project was made with, so its components build to the\n# same bytes on every machine. rustup installs it with the wasm32-wasip2\n# target; `rustup target add wasm32-wasip2` adds the target to one installed without it.\n[toolchain]\nchannel = \"{}\"\ntargets = [\"wasm32-wasip2\"]\nprofile = \"minimal\"\n",
        sdk_copy::toolchain_channel()
    );
    write(&root.join("rust-toolchain.toml"), &toolchain)?;
    write(&root.join("Cargo.lock"), lock)
}

fn write(path: &Path, text: &str) -> Result<(), AuthoringError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| AuthoringError::io(parent, e))?;
    }
    std::fs::write(path, text).map_err(|e| AuthoringError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_camel_case() {
        let spec = CrateSpec {
            name: "mentions-all",
            flavor: Flavor::Scorer,
        };
        assert_eq!(spec.type_name(), "MentionsAll");
        assert_eq!(spec.wasm_file(), "mentions_all.wasm");
    }

    #[test]
    fn a_standalone_scorer_pins_its_sdk_and_patches_it_in() {
        let dir = tempfile::tempdir().unwrap();
        let spec = CrateSpec {
            name: "tone-check",
            flavor: Flavor::Scorer,
        };
        write_standalone(dir.path(), spec, &SdkSource::Vendored).unwrap();
        let manifest = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
        assert!(manifest.contains(&format!("cautilus-sdk = \"={SDK_VERSION}\"")));
        assert!(manifest.contains("cautilus-sdk = { path = \"vendor/cautilus-sdk\" }"));
        let lib = std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap();
        assert!(
            lib.contains("pub struct ToneCheck") && !lib.contains("{{"),
            "{lib}"
        );
        assert!(dir.path().join("vendor/cautilus-sdk/src/lib.rs").is_file());
        let toml: toml::Table = toml::from_str(&manifest).unwrap();
        assert!(toml.contains_key("patch"));
    }

    #[test]
    fn members_are_added_once() {
        let dir = tempfile::tempdir().unwrap();
        let first = CrateSpec {
            name: "acme-check",
            flavor: Flavor::Scorer,
        };
        write_workspace(
            dir.path(),
            &[("scorers/acme-check", first)],
            &SdkSource::Vendored,
        )
        .unwrap();
        let preset = CrateSpec {
            name: "exact",
            flavor: Flavor::Preset,
        };
        add_member(dir.path(), "presets/exact", preset).unwrap();
        add_member(dir.path(), "presets/exact", preset).unwrap();
        let manifest = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("members = [\"scorers/acme-check\", \"presets/exact\"]"),
            "{manifest}"
        );
        let lock = std::fs::read_to_string(dir.path().join("Cargo.lock")).unwrap();
        assert_eq!(lock.matches("name = \"exact\"").count(), 1);
    }
}
