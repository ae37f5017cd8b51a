//! The tools that check or run suites do it through the `cautilus` binary
//! itself (`eval list --json`, `eval test`), as a child process in the
//! project root: the same checks, grants, replay mode and records as the
//! command line, and a run that fails or is killed never takes the server
//! with it.
//!
//! What a client may choose is only which suite (an id of the project's
//! manifest, whose fixture path the manifest gives) and which of its cases
//! and variants (patterns, each passed as one `--case=…`/`--variant=…`
//! argument, so none can become a flag). Everything else comes from the
//! project's `cautilus.toml`: the provider (`[defaults] provider`), the
//! replay mode (`[defaults] replay`), the grants (`[grants]`), the judge,
//! the redactions, the records directory. No argument names a path, a
//! provider, a grant, a cassette or a flag.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

/// The longest case or variant pattern taken.
const MAX_PATTERN: usize = 256;
/// The most case and variant patterns one run takes.
const MAX_PATTERNS: usize = 100;
/// Bytes of a failed command's stderr carried back.
const STDERR_BYTES: usize = 8 * 1024;

/// How to run this binary for a project.
#[derive(Debug, Clone)]
pub struct Binary {
    /// The `cautilus` executable (this process's).
    pub exe: PathBuf,
    /// The project root: the working directory of every command.
    pub root: PathBuf,
    /// The project's `cautilus.toml`, when it has one.
    pub config: Option<PathBuf>,
}

/// What a command printed and how it ended.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// The end of stderr, for an error message.
    pub fn stderr_tail(&self) -> String {
        let text = self.stderr.trim();
        let start = text
            .char_indices()
            .map(|(i, _)| i)
            .find(|i| text.len() - i <= STDERR_BYTES)
            .unwrap_or(0);
        text[start..].to_string()
    }
}

impl Binary {
    /// Runs `cautilus <args>` in the project root and waits for it.
    pub async fn run(&self, args: &[String]) -> Result<Ran, String> {
        let mut command = tokio::process::Command::new(&self.exe);
        command
            .args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let out = command
            .output()
            .await
            .map_err(|e| format!("cannot start {}: {e}", self.exe.display()))?;
        Ok(Ran {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// `--config=<file>`, when the project has one.
    fn config_arg(&self) -> Vec<String> {
        self.config
            .iter()
            .map(|c| format!("--config={}", c.display()))
            .collect()
    }

    /// The project's manifest, every suite checked (`eval list --json`,
    /// `cautilus.manifest.v1`): valid suites under `suites`, the others
    /// under `invalid` with their errors.
    pub async fn manifest(&self) -> Result<Value, String> {
        let mut args = vec!["eval".to_string(), "list".into(), "--json".into()];
        args.extend(self.config_arg());
        let ran = self.run(&args).await?;
        serde_json::from_str(&ran.stdout).map_err(|_| {
            format!(
                "the project's suites could not be listed (exit {}): {}; fix cautilus.toml or the fixtures it names",
                ran.code,
                ran.stderr_tail()
            )
        })
    }

    /// Runs suite `suite` (its fixture `fixture`, relative to the root)
    /// into the new run directory `output`, only the cases and variants
    /// the patterns select.
    pub async fn run_suite(
        &self,
        fixture: &str,
        output: &Path,
        cases: &[String],
        variants: &[String],
    ) -> Result<Ran, String> {
        let mut args = vec![
            "eval".to_string(),
            "test".into(),
            format!("--fixture={}", self.root.join(fixture).display()),
            format!("--output-dir={}", output.display()),
            "--json".into(),
            "--quiet".into(),
        ];
        args.extend(self.config_arg());
        for case in cases {
            args.push(format!("--case={case}"));
        }
        for variant in variants {
            args.push(format!("--variant={variant}"));
        }
        self.run(&args).await
    }
}

/// Checks case or variant patterns a client gave.
pub fn check_patterns(what: &str, patterns: &[String]) -> Result<(), String> {
    if patterns.len() > MAX_PATTERNS {
        return Err(format!(
            "at most {MAX_PATTERNS} {what} patterns; run the suite whole, or in parts"
        ));
    }
    for pattern in patterns {
        if pattern.is_empty()
            || pattern.len() > MAX_PATTERN
            || pattern.chars().any(char::is_control)
        {
            return Err(format!(
                "{what} pattern {pattern:?} is empty, longer than {MAX_PATTERN} bytes or holds control characters; give an id (or a `*` pattern) from `list_suites`"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_plain_text() {
        assert!(check_patterns("case", &["c1".into(), "refund-*".into()]).is_ok());
        assert!(check_patterns("case", &["".into()]).is_err());
        assert!(check_patterns("case", &["a\nb".into()]).is_err());
        assert!(check_patterns("case", &vec!["c".to_string(); 101]).is_err());
        // A leading dash is a pattern like any other: it is passed as
        // `--case=-x`, never as a flag of its own.
        assert!(check_patterns("case", &["--grant-http=evil".into()]).is_ok());
    }
}
