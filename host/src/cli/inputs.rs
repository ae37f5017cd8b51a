//! Reading command-line values given inline, from `@file`, or from `@-` (stdin).

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
