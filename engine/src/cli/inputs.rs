//! Reading command-line values given inline, from `@file`, or from `@-`
//! (stdin), and run directories given as a path or `latest`.

use std::io::Read;

use anyhow::Context;

/// The text of `arg`: itself, or the contents of the file after `@`.
pub fn text_arg(flag: &str, arg: &str) -> anyhow::Result<String> {
    match arg.strip_prefix('@') {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .with_context(|| format!("{flag} @-: cannot read standard input"))?;
            Ok(text)
        }
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("{flag} @{path}: cannot read the file (give the text inline, or @path to a UTF-8 file)")),
        None => Ok(arg.to_string()),
    }
}

/// A JSON value given inline or as `@file`.
pub fn json_arg(flag: &str, arg: &str) -> anyhow::Result<serde_json::Value> {
    let text = text_arg(flag, arg)?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{flag}: not valid JSON: {}",
            crate::plugin::excerpt(text.trim(), 80)
        )
    })
}

/// The records root of the project `config` names (else the nearest
/// `cautilus.toml` upward): its `dir`; without a config, `./.cautilus`.
pub fn records_root(config: Option<&std::path::Path>) -> anyhow::Result<std::path::PathBuf> {
    let cwd = std::env::current_dir()?;
    let (project, file) = crate::project::open(&cwd, config)?;
    let records = if file.is_some() {
        project.records_dir()
    } else {
        cwd.join(".cautilus")
    };
    crate::eval::files::refuse_linked_records_root(&records)?;
    Ok(records)
}

/// A run directory argument: itself, or for `latest` the newest finished
/// run of the project ([`crate::project::latest`]).
pub fn run_dir(
    run: &std::path::Path,
    config: Option<&std::path::Path>,
) -> anyhow::Result<std::path::PathBuf> {
    if run != std::path::Path::new(crate::project::latest::LATEST) {
        return Ok(run.to_path_buf());
    }
    Ok(crate::project::latest::resolve(
        run,
        &records_root(config)?,
    )?)
}
