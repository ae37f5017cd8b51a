//! `cautilus plugin new scorer --lang python|javascript`: writes a scorer
//! project from the templates in `templates/` (embedded in the binary, so
//! an installed `cautilus` needs no checkout), with the contract's WIT in
//! `./wit`, building with one command:
//! - Python: `componentize-py -d wit -w scorer componentize app -o <name>.wasm`;
//! - JavaScript: `npm install && npm run build` (componentize-js).

use std::path::Path;

use anyhow::Context;

/// One file of a template: its path in the project and its text, with
/// `{{name}}` standing for the scorer's name.
type TemplateFile = (&'static str, &'static str);

macro_rules! template {
    ($dir:literal: $($file:literal),+ $(,)?) => {
        &[$(($file, include_str!(concat!("../../../templates/", $dir, "/", $file)))),+]
    };
}

const PYTHON: &[TemplateFile] = template!("scorer-python":
    "app.py", "cautilus_sdk.py", "scorer_api.py", "examples.yaml", "README.md", ".gitignore");

const JAVASCRIPT: &[TemplateFile] = template!("scorer-javascript":
    "scorer.js", "cautilus-sdk.js", "package.json", "examples.yaml", "README.md", ".gitignore");

/// The contract the component is built against.
const WIT: &[TemplateFile] = &[
    ("wit/types.wit", include_str!("../../../wit/types.wit")),
    ("wit/host.wit", include_str!("../../../wit/host.wit")),
    ("wit/worlds.wit", include_str!("../../../wit/worlds.wit")),
];

/// The languages a scorer can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Rust,
    Python,
    Javascript,
}

/// Writes a Python or JavaScript scorer project named `name` in `dir`;
/// returns the command that builds it.
pub fn write_project(dir: &Path, name: &str, lang: Lang) -> anyhow::Result<String> {
    let (files, build) = match lang {
        Lang::Python => (
            PYTHON,
            crate::authoring::project::componentize_py_command("{{name}}.wasm"),
        ),
        Lang::Javascript => (JAVASCRIPT, "npm install && npm run build".to_string()),
        Lang::Rust => unreachable!("the Rust scaffold is a crate (scaffold.rs)"),
    };
    for (path, text) in files.iter().chain(WIT) {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&full, text.replace("{{name}}", name))
            .with_context(|| format!("writing {}", full.display()))?;
    }
    Ok(build.replace("{{name}}", name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_names_its_scorer_and_carries_the_contract() {
        for (lang, main) in [(Lang::Python, "app.py"), (Lang::Javascript, "scorer.js")] {
            let dir = tempfile::tempdir().unwrap();
            let build = write_project(dir.path(), "tone-check", lang).unwrap();
            assert!(!build.is_empty());
            let text = std::fs::read_to_string(dir.path().join(main)).unwrap();
            assert!(
                text.contains("tone-check") && !text.contains("{{name}}"),
                "{text}"
            );
            let examples = dir.path().join("examples.yaml");
            let examples = crate::authoring::examples::read(&examples).unwrap();
            assert_eq!(examples.scorer.as_deref(), Some("tone-check"));
            let worlds = std::fs::read_to_string(dir.path().join("wit/worlds.wit")).unwrap();
            assert!(worlds.contains("world scorer"), "{worlds}");
        }
    }
}
