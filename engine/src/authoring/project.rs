//! A scorer project on disk: which language it is written in, where its
//! component is built, and the commands that build it — the ones `cautilus
//! plugin new scorer` prints:
//!
//! - Rust (`Cargo.toml` with a `cdylib`): `cargo build --release --target
//!   wasm32-wasip2`, the component at `<target dir>/wasm32-wasip2/release/
//!   <lib name>.wasm` (the target dir as cargo reports it, so
//!   `CARGO_TARGET_DIR` and cargo config are honoured); always run, cargo
//!   itself skips an up-to-date build;
//! - JavaScript (`package.json` with a `build` script): `npm install` when
//!   there is no `node_modules`, then `npm run build`; the component is the
//!   script's `--out`/`-o` file, else `<package name>.wasm`;
//! - Python (`app.py` and `wit/`): `componentize-py -d wit -w scorer
//!   componentize app -o <name>.wasm` (`.venv/bin/componentize-py` when the
//!   project has one), `<name>` being the examples' scorer id, else the
//!   directory's name.
//!
//! JavaScript and Python components are rebuilt only when missing or older
//! than a source file of the project.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use serde_json::Value;

/// A problem finding or building a project.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(
        "{}: no scorer project here: expected Cargo.toml (Rust), package.json with a `build` script (JavaScript) or app.py and wit/ (Python){}",
        .0.display(),
        if .0.join(crate::pack::manifest::MANIFEST).is_file() { "; this is a pack: run `cautilus pack test`" } else { "" }
    )]
    NotAProject(PathBuf),
    #[error("{}: {message}", file.display())]
    Manifest { file: PathBuf, message: String },
    #[error("running `{command}` in {}: {source}{hint}", dir.display())]
    Spawn {
        command: String,
        dir: PathBuf,
        source: std::io::Error,
        hint: &'static str,
    },
    #[error("`{command}` failed in {} ({status}); fix the build, then run again", dir.display())]
    Failed {
        command: String,
        dir: PathBuf,
        status: std::process::ExitStatus,
    },
}

/// The language a scorer project is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    Python,
    JavaScript,
}

impl Language {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rust => "Rust",
            Self::Python => "Python",
            Self::JavaScript => "JavaScript",
        }
    }
}

/// One command of a build: a program and its arguments, run in the project.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub program: String,
    pub args: Vec<String>,
}

impl Step {
    fn new(program: impl Into<String>, args: &[&str]) -> Self {
        Self {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// The command as a shell line.
    pub fn line(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A scorer project: its language, its component and how to build it.
#[derive(Debug, Clone)]
pub struct Project {
    pub dir: PathBuf,
    pub language: Language,
    /// Where the build writes the component.
    pub component: PathBuf,
    /// What to run, in order; empty when the component is up to date.
    pub steps: Vec<Step>,
}

/// The most entries looked at when comparing source and component times.
const MAX_WALK: usize = 20_000;

/// Finds the project in `dir`; `name` is the scorer id the examples give,
/// which names a Python project's component.
pub fn detect(dir: &Path, name: Option<&str>) -> Result<Project, ProjectError> {
    if dir.join("Cargo.toml").is_file() {
        return rust(dir);
    }
    if dir.join("package.json").is_file() {
        return javascript(dir);
    }
    if dir.join("app.py").is_file() && dir.join("wit").is_dir() {
        let name = match name {
            Some(name) => name.to_string(),
            None => dir_name(dir),
        };
        let component = dir.join(format!("{name}.wasm"));
        let venv = dir.join(".venv/bin/componentize-py");
        let program = if venv.is_file() {
            ".venv/bin/componentize-py".to_string()
        } else {
            "componentize-py".to_string()
        };
        let output = format!("{name}.wasm");
        let steps = if stale(dir, &component) {
            let mut args = COMPONENTIZE_PY_ARGS.to_vec();
            args.push(output.as_str());
            vec![Step::new(program, &args)]
        } else {
            Vec::new()
        };
        return Ok(project(dir, Language::Python, component, steps));
    }
    Err(ProjectError::NotAProject(dir.to_path_buf()))
}

/// What builds a Python scorer project, before the output file: the one
/// spelling of the command the scaffolds print, `pack add` writes and
/// `plugin test` runs.
pub const COMPONENTIZE_PY_ARGS: [&str; 7] =
    ["-d", "wit", "-w", "scorer", "componentize", "app", "-o"];

/// [`COMPONENTIZE_PY_ARGS`] as a command line writing `output`.
pub fn componentize_py_command(output: &str) -> String {
    format!(
        "componentize-py {} {output}",
        COMPONENTIZE_PY_ARGS.join(" ")
    )
}

fn project(dir: &Path, language: Language, component: PathBuf, steps: Vec<Step>) -> Project {
    Project {
        dir: dir.to_path_buf(),
        language,
        component,
        steps,
    }
}

fn dir_name(dir: &Path) -> String {
    let full = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    full.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scorer".into())
}

fn rust(dir: &Path) -> Result<Project, ProjectError> {
    let manifest = dir.join("Cargo.toml");
    let metadata = Step::new(
        "cargo",
        &[
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ],
    );
    let out = Command::new(&metadata.program)
        .args(&metadata.args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ProjectError::Spawn {
            command: metadata.line(),
            dir: dir.to_path_buf(),
            source,
            hint: "; install Rust from https://rustup.rs",
        })?;
    let bad = |message: String| ProjectError::Manifest {
        file: manifest.clone(),
        message,
    };
    if !out.status.success() {
        return Err(bad(format!(
            "`cargo metadata` refused it: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let metadata: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| bad(format!("`cargo metadata` printed no JSON: {e}")))?;
    let wanted = std::fs::canonicalize(&manifest).unwrap_or(manifest.clone());
    let package = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["manifest_path"].as_str().map(PathBuf::from).as_ref() == Some(&wanted))
        .ok_or_else(|| {
            bad("no package in it (a workspace root? run in the scorer crate's directory)".into())
        })?;
    let library = package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| {
            t["crate_types"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"))
        })
        .and_then(|t| t["name"].as_str())
        .ok_or_else(|| {
            bad("its library is not a `cdylib`; a scorer crate has `[lib] crate-type = [\"cdylib\"]`".into())
        })?;
    let target_dir = metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("target"));
    let component = target_dir
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", library.replace('-', "_")));
    let build = Step::new(
        "cargo",
        &["build", "--release", "--target", "wasm32-wasip2"],
    );
    Ok(project(dir, Language::Rust, component, vec![build]))
}

fn javascript(dir: &Path) -> Result<Project, ProjectError> {
    let file = dir.join("package.json");
    let bad = |message: String| ProjectError::Manifest {
        file: file.clone(),
        message,
    };
    let text = crate::regular_file::read_to_string(&file, 1 << 20)
        .map_err(|e| bad(format!("cannot read it: {e}")))?
        .unwrap_or_default();
    let package: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let Some(script) = package["scripts"]["build"].as_str() else {
        return Err(bad(
            "no `scripts.build`; a scorer project builds its component with `npm run build`".into(),
        ));
    };
    let output = out_file(script)
        .or_else(|| package["name"].as_str().map(|n| format!("{n}.wasm")))
        .ok_or_else(|| {
            bad("the build script has no `--out FILE` and the package no `name`".into())
        })?;
    let component = dir.join(output);
    let mut steps = Vec::new();
    if !dir.join("node_modules").is_dir() {
        steps.push(Step::new("npm", &["install"]));
    }
    if !steps.is_empty() || stale(dir, &component) {
        steps.push(Step::new("npm", &["run", "build"]));
    }
    Ok(project(dir, Language::JavaScript, component, steps))
}

/// The file a componentize command writes (`--out FILE`, `--out=FILE`, `-o FILE`).
fn out_file(script: &str) -> Option<String> {
    let words: Vec<&str> = script.split_whitespace().collect();
    words.iter().enumerate().find_map(|(i, word)| {
        if let Some(file) = word.strip_prefix("--out=") {
            return Some(file.to_string());
        }
        matches!(*word, "--out" | "-o")
            .then(|| words.get(i + 1).map(|f| f.to_string()))
            .flatten()
    })
}

/// Whether `component` is missing or older than a source file in `dir`.
fn stale(dir: &Path, component: &Path) -> bool {
    let Some(built) = modified(component) else {
        return true;
    };
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                return true;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skipped = name.starts_with('.')
                    || matches!(
                        name.as_str(),
                        "node_modules" | "target" | "__pycache__" | "dist"
                    );
                if !skipped {
                    pending.push(entry.path());
                }
            } else if is_source(&name) && modified(&entry.path()).is_some_and(|t| t > built) {
                return true;
            }
        }
    }
    false
}

fn is_source(name: &str) -> bool {
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        extension,
        "py" | "js" | "mjs" | "cjs" | "ts" | "wit" | "json"
    ) && !super::examples::FILE_NAMES.contains(&name)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Project {
    /// Runs the build steps in the project's directory, calling `announce`
    /// with each command first. Their output goes to stderr.
    pub fn build(&self, mut announce: impl FnMut(&Step)) -> Result<(), ProjectError> {
        for step in &self.steps {
            announce(step);
            let hint = match (self.language, step.program.as_str()) {
                (Language::Rust, _) => "; install Rust from https://rustup.rs",
                (_, "npm") => "; install Node.js (npm)",
                _ => "; install componentize-py (see the project's README.md) or put it on PATH",
            };
            let status = Command::new(&step.program)
                .args(&step.args)
                .current_dir(&self.dir)
                .stdin(Stdio::null())
                .stdout(std::io::stderr())
                .status()
                .map_err(|source| ProjectError::Spawn {
                    command: step.line(),
                    dir: self.dir.clone(),
                    source,
                    hint,
                })?;
            if !status.success() {
                return Err(ProjectError::Failed {
                    command: step.line(),
                    dir: self.dir.clone(),
                    status,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_out_file_of_a_build_script() {
        let script = "componentize-js scorer.js --wit wit --out tone.wasm";
        assert_eq!(out_file(script).as_deref(), Some("tone.wasm"));
        assert_eq!(out_file("x -o a.wasm").as_deref(), Some("a.wasm"));
        assert_eq!(out_file("x --out=b.wasm").as_deref(), Some("b.wasm"));
        assert_eq!(out_file("x --out"), None);
    }

    #[test]
    fn python_and_javascript_projects_are_detected_and_rebuilt_when_stale() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(matches!(
            detect(root, None),
            Err(ProjectError::NotAProject(_))
        ));
        std::fs::write(root.join("app.py"), "x = 1").unwrap();
        std::fs::create_dir(root.join("wit")).unwrap();
        let project = detect(root, Some("tone")).unwrap();
        assert_eq!(project.language, Language::Python);
        assert_eq!(project.component, root.join("tone.wasm"));
        assert_eq!(
            project.steps[0].line(),
            "componentize-py -d wit -w scorer componentize app -o tone.wasm"
        );
        std::fs::write(root.join("tone.wasm"), "built").unwrap();
        std::fs::write(root.join("examples.yaml"), "edited after").unwrap();
        let old = SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::open(root.join("app.py"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(
            detect(root, Some("tone")).unwrap().steps.is_empty(),
            "up to date"
        );
        std::fs::write(
            root.join("package.json"),
            r#"{"name": "js", "scripts": {"build": "componentize-js s.js -o js.wasm"}}"#,
        )
        .unwrap();
        let project = detect(root, None).unwrap();
        assert_eq!(project.language, Language::JavaScript);
        assert_eq!(project.component, root.join("js.wasm"));
        let lines: Vec<_> = project.steps.iter().map(Step::line).collect();
        assert_eq!(lines, ["npm install", "npm run build"]);
    }
}
