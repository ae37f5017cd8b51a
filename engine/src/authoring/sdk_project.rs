//! The SDK of an existing project: which `cautilus-sdk` it builds against
//! (`cautilus sdk show`), and replacing its copy with the one this binary
//! carries (`cautilus sdk update`), never with an older one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::AuthoringError;
use super::sdk_copy::{self, SDK_VERSION, VENDOR_DIR};

/// What a project's SDK is, compared with this binary's.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSdk {
    pub root: PathBuf,
    /// The SDK this cautilus carries.
    pub carried: &'static str,
    /// Each manifest that depends on cautilus-sdk, with its requirement.
    pub requirements: Vec<(PathBuf, String)>,
    /// Whether `[patch.crates-io]` points cautilus-sdk at a path.
    pub patched: bool,
    /// The version of the copy in `vendor/cautilus-sdk`, if there is one.
    pub copy_version: Option<String>,
    /// Files of the copy that differ from the carried SDK of the same version.
    pub edited: Vec<String>,
}

impl ProjectSdk {
    fn copy_dir(&self) -> PathBuf {
        self.root.join(VENDOR_DIR)
    }
}

/// What `update` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Updated {
    AlreadyCurrent,
    Replaced { from: Option<String> },
}

/// Reads the SDK state of the project (a crate or a pack workspace) at `root`.
pub fn inspect(root: &Path) -> Result<ProjectSdk, AuthoringError> {
    let manifest_path = root.join("Cargo.toml");
    let root_table = read_toml(&manifest_path)?;
    let mut manifests = vec![manifest_path.clone()];
    if let Some(members) = root_table
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
    {
        manifests.extend(
            members
                .iter()
                .filter_map(|m| m.as_str())
                .map(|m| root.join(m).join("Cargo.toml")),
        );
    }
    let mut requirements = Vec::new();
    for path in manifests {
        let table = if path == manifest_path {
            root_table.clone()
        } else {
            read_toml(&path)?
        };
        let dependency = table
            .get("dependencies")
            .and_then(|d| d.get("cautilus-sdk"));
        let requirement = match dependency {
            Some(toml::Value::String(version)) => Some(version.clone()),
            Some(toml::Value::Table(t)) => t
                .get("version")
                .and_then(|v| v.as_str())
                .map(str::to_string)
                .or_else(|| t.get("path").map(|_| "(path)".to_string())),
            _ => None,
        };
        if let Some(requirement) = requirement {
            requirements.push((path, requirement));
        }
    }
    if requirements.is_empty() {
        return Err(AuthoringError::project(
            &manifest_path,
            "no crate here depends on cautilus-sdk; give the directory of a plugin crate or pack",
        ));
    }
    let patched = root_table
        .get("patch")
        .and_then(|p| p.get("crates-io"))
        .and_then(|c| c.get("cautilus-sdk"))
        .is_some();
    let copy = root.join(VENDOR_DIR);
    let (copy_version, edited) = if copy.join("Cargo.toml").is_file() {
        let version = sdk_copy::version_of_copy(&copy)?;
        let edited = if version == SDK_VERSION {
            sdk_copy::differences(&copy)?
        } else {
            Vec::new()
        };
        (Some(version), edited)
    } else {
        (None, Vec::new())
    };
    Ok(ProjectSdk {
        root: root.to_path_buf(),
        carried: SDK_VERSION,
        requirements,
        patched,
        copy_version,
        edited,
    })
}

/// Replaces the project's SDK copy with the carried one (writing it and
/// the `[patch.crates-io]` entry if the project has none) and pins the
/// carried version in every manifest. Refuses a downgrade, and a copy of
/// the same version with local edits unless `force`.
pub fn update(root: &Path, force: bool) -> Result<Updated, AuthoringError> {
    let state = inspect(root)?;
    let carried = semver::Version::parse(SDK_VERSION).expect("the SDK version is semver");
    if let Some(version) = &state.copy_version {
        let found = semver::Version::parse(version).map_err(|_| {
            AuthoringError::project(
                state.copy_dir().join("Cargo.toml"),
                format!("declares version {version:?}, which is not semver"),
            )
        })?;
        if found > carried {
            return Err(AuthoringError::project(
                state.copy_dir(),
                format!(
                    "holds cautilus-sdk {found}, newer than the {carried} this cautilus carries; updating would downgrade it. Use a cautilus of {found} or later"
                ),
            ));
        }
        if found == carried && state.edited.is_empty() && requirements_pinned(&state) {
            return Ok(Updated::AlreadyCurrent);
        }
        if found == carried && !state.edited.is_empty() && !force {
            return Err(AuthoringError::project(
                state.copy_dir(),
                format!(
                    "differs from the cautilus-sdk {carried} this cautilus carries in {}; pass --force to replace it (the edits are lost)",
                    state.edited.join(", ")
                ),
            ));
        }
    }
    replace_copy(&state.copy_dir())?;
    if !state.patched {
        add_patch(&root.join("Cargo.toml"))?;
    }
    for (path, _) in &state.requirements {
        pin_requirement(path)?;
    }
    let lock = root.join("Cargo.lock");
    if let Ok(text) = std::fs::read_to_string(&lock) {
        write(&lock, &lock_with_sdk_version(&text))?;
    }
    Ok(Updated::Replaced {
        from: state.copy_version,
    })
}

fn requirements_pinned(state: &ProjectSdk) -> bool {
    let pinned = format!("={SDK_VERSION}");
    state.patched && state.requirements.iter().all(|(_, r)| *r == pinned)
}

/// Writes the carried copy beside `dir`, then swaps it in.
fn replace_copy(dir: &Path) -> Result<(), AuthoringError> {
    let parent = dir.parent().expect("vendor/cautilus-sdk has a parent");
    let fresh = parent.join(format!(".cautilus-sdk.new-{}", std::process::id()));
    let old = parent.join(format!(".cautilus-sdk.old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&fresh);
    sdk_copy::write_copy(&fresh)?;
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|e| AuthoringError::io(dir, e))?;
    }
    std::fs::rename(&fresh, dir).map_err(|e| AuthoringError::io(dir, e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

fn add_patch(manifest: &Path) -> Result<(), AuthoringError> {
    let text = std::fs::read_to_string(manifest).map_err(|e| AuthoringError::io(manifest, e))?;
    let entry = format!("cautilus-sdk = {{ path = \"{VENDOR_DIR}\" }}");
    let updated = if text.lines().any(|l| l.trim() == "[patch.crates-io]") {
        text.replacen(
            "[patch.crates-io]",
            &format!("[patch.crates-io]\n{entry}"),
            1,
        )
    } else {
        format!(
            "{}\n# cautilus-sdk is the copy in {VENDOR_DIR}/ (written by cautilus). Once the\n# crate is on crates.io, delete the next line to build from there.\n[patch.crates-io]\n{entry}\n",
            text.trim_end()
        )
    };
    write(manifest, &updated)
}

/// Rewrites the `cautilus-sdk` requirement of `manifest` to `=<carried>`
/// when it is a plain version or a table with `version`.
fn pin_requirement(manifest: &Path) -> Result<(), AuthoringError> {
    let text = std::fs::read_to_string(manifest).map_err(|e| AuthoringError::io(manifest, e))?;
    let mut out = String::new();
    let mut in_dependencies = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            in_dependencies = trimmed.starts_with("[dependencies]");
        }
        if in_dependencies && trimmed.starts_with("cautilus-sdk") {
            out.push_str(&repin(line));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    write(manifest, &out)
}

/// `line` with the first quoted version after `cautilus-sdk =` or
/// `version =` replaced by `"=<carried>"`.
fn repin(line: &str) -> String {
    let anchor = line
        .find("version")
        .map(|i| i + "version".len())
        .or_else(|| {
            let after = line.find('=')? + 1;
            line[after..].trim_start().starts_with('"').then_some(after)
        });
    let Some(anchor) = anchor else {
        return line.to_string();
    };
    let rest = &line[anchor..];
    let Some(open) = rest.find('"') else {
        return line.to_string();
    };
    let Some(close) = rest[open + 1..].find('"') else {
        return line.to_string();
    };
    format!(
        "{}\"={SDK_VERSION}\"{}",
        &line[..anchor + open],
        &rest[open + 1 + close + 1..]
    )
}

/// `lock` with the version of its (path-sourced) cautilus-sdk entry set to
/// the carried one; cargo adds what the new copy needs at the next build.
fn lock_with_sdk_version(lock: &str) -> String {
    let mut out = String::new();
    let mut in_sdk = false;
    for line in lock.lines() {
        if line.starts_with("name = ") {
            in_sdk = line == "name = \"cautilus-sdk\"";
        }
        if in_sdk && line.starts_with("version = ") {
            out.push_str(&format!("version = \"{SDK_VERSION}\""));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

fn read_toml(path: &Path) -> Result<toml::Table, AuthoringError> {
    let text = std::fs::read_to_string(path).map_err(|e| AuthoringError::io(path, e))?;
    toml::from_str(&text)
        .map_err(|e| AuthoringError::project(path, format!("is not valid TOML: {e}")))
}

fn write(path: &Path, text: &str) -> Result<(), AuthoringError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| AuthoringError::io(dir, e))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .map_err(|e| AuthoringError::io(path, e))?;
    file.persist(path)
        .map_err(|e| AuthoringError::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authoring::lockfile::Flavor;
    use crate::authoring::rust_project::{CrateSpec, SdkSource, write_standalone};

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let spec = CrateSpec {
            name: "tone",
            flavor: Flavor::Scorer,
        };
        write_standalone(dir.path(), spec, &SdkSource::Vendored).unwrap();
        dir
    }

    fn set_copy_version(root: &Path, version: &str) {
        let manifest = root.join(VENDOR_DIR).join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let text = text.replacen(
            &format!("version = \"{SDK_VERSION}\""),
            &format!("version = \"{version}\""),
            1,
        );
        std::fs::write(manifest, text).unwrap();
    }

    #[test]
    fn a_fresh_project_is_current() {
        let dir = project();
        let state = inspect(dir.path()).unwrap();
        assert_eq!(state.copy_version.as_deref(), Some(SDK_VERSION));
        assert!(state.patched && state.edited.is_empty());
        assert_eq!(update(dir.path(), false).unwrap(), Updated::AlreadyCurrent);
    }

    #[test]
    fn an_older_copy_is_replaced_and_repinned() {
        let dir = project();
        set_copy_version(dir.path(), "0.0.1");
        let manifest = dir.path().join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(
            &manifest,
            text.replace(&format!("\"={SDK_VERSION}\""), "\"=0.0.1\""),
        )
        .unwrap();
        assert_eq!(
            update(dir.path(), false).unwrap(),
            Updated::Replaced {
                from: Some("0.0.1".into())
            }
        );
        let state = inspect(dir.path()).unwrap();
        assert_eq!(state.copy_version.as_deref(), Some(SDK_VERSION));
        assert_eq!(state.requirements[0].1, format!("={SDK_VERSION}"));
    }

    #[test]
    fn a_newer_copy_is_never_downgraded() {
        let dir = project();
        set_copy_version(dir.path(), "99.0.0");
        let error = update(dir.path(), true).unwrap_err().to_string();
        assert!(
            error.contains("downgrade") && error.contains("99.0.0"),
            "{error}"
        );
        assert_eq!(
            sdk_copy::version_of_copy(&dir.path().join(VENDOR_DIR)).unwrap(),
            "99.0.0"
        );
    }

    #[test]
    fn edits_are_kept_unless_forced() {
        let dir = project();
        std::fs::write(dir.path().join(VENDOR_DIR).join("src/lib.rs"), "// mine").unwrap();
        let error = update(dir.path(), false).unwrap_err().to_string();
        assert!(
            error.contains("src/lib.rs") && error.contains("--force"),
            "{error}"
        );
        update(dir.path(), true).unwrap();
        assert!(inspect(dir.path()).unwrap().edited.is_empty());
    }

    #[test]
    fn a_project_without_a_copy_gets_one_and_the_patch() {
        let dir = project();
        std::fs::remove_dir_all(dir.path().join(VENDOR_DIR)).unwrap();
        let manifest = dir.path().join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let cut = text.find("# cautilus-sdk is the copy").unwrap();
        std::fs::write(&manifest, &text[..cut]).unwrap();
        assert!(!inspect(dir.path()).unwrap().patched);
        update(dir.path(), false).unwrap();
        let state = inspect(dir.path()).unwrap();
        assert!(state.patched && state.copy_version.is_some());
    }

    #[test]
    fn repinning_keeps_the_rest_of_the_line() {
        assert_eq!(
            repin("cautilus-sdk = \"=0.0.1\""),
            format!("cautilus-sdk = \"={SDK_VERSION}\"")
        );
        assert_eq!(
            repin("cautilus-sdk = { version = \"=0.0.1\", features = [\"app\"] }"),
            format!("cautilus-sdk = {{ version = \"={SDK_VERSION}\", features = [\"app\"] }}")
        );
        assert_eq!(
            repin("cautilus-sdk = { path = \"x\" }"),
            "cautilus-sdk = { path = \"x\" }"
        );
    }
}
