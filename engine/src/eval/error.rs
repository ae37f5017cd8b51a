//! Why an evaluation could not run or finish ([`EvalError`]), and how its
//! list of problems is shown.

use std::path::PathBuf;

use crate::fixture::FixtureError;
use crate::plugin::PluginError;

/// Why an evaluation could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The preset rejected the fixture's cases (paths into the fixture).
    /// Its message has a line per problem; the file and each problem are
    /// escaped for a terminal ([`crate::term::inline`]), so the only line
    /// breaks are those. A problem placed in the file
    /// ([`super::positions::placed`]) starts with `file:line:col`, and then alone
    /// is not preceded by the file again.
    #[error("{}", cases_message(file, problems))]
    Cases {
        file: PathBuf,
        problems: Vec<(String, String)>,
    },
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    /// The run's provider cannot be set up (its endpoint, key or grants).
    #[error("provider `{provider}`: {message}")]
    Provider { provider: String, message: String },
    /// A step of a multi-step fixture could not run.
    #[error("step {index}: {error}")]
    Step { index: usize, error: Box<EvalError> },
    /// A batch stopped early because another one failed (never reported:
    /// the first error is).
    #[error("the run stopped after an earlier error")]
    Stopped,
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The checked cases' plans a large suite set aside in its run
    /// directory could not be read back (writing them is allowed to fail:
    /// the run then translates the cases again).
    #[error(
        "the checked cases set aside in {} could not be read back: {source}; run again (and report it if it happens again)",
        path.display()
    )]
    SetAside {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl EvalError {
    /// True when the input (fixture, flags, packet, plugin definition) is
    /// invalid and nothing was run: exit code 2.
    pub fn is_definition_error(&self) -> bool {
        match self {
            Self::Fixture(_) | Self::Cases { .. } | Self::Input { .. } | Self::Provider { .. } => {
                true
            }
            Self::Plugin(e) => e.is_definition_error(),
            Self::Step { error, .. } => error.is_definition_error(),
            Self::Write { .. } | Self::SetAside { .. } | Self::Stopped => false,
        }
    }

    /// True when every line break of its message is the host's (a list of
    /// problems, whose texts are escaped): the CLI keeps those.
    pub fn lines_are_ours(&self) -> bool {
        match self {
            Self::Cases { .. } => true,
            Self::Step { error, .. } => error.lines_are_ours(),
            _ => false,
        }
    }
}

/// Problems shown in one error message; the rest are counted.
const SHOWN_PROBLEMS: usize = 50;

fn cases_message(file: &std::path::Path, problems: &[(String, String)]) -> String {
    let file = crate::term::shown(file.display()).to_string();
    let problems_text = format_problems(problems);
    match problems {
        [(path, _)] if crate::term::inline(path).starts_with(&format!("{file}:")) => problems_text,
        _ => format!("{file}: {problems_text}"),
    }
}

fn format_problems(problems: &[(String, String)]) -> String {
    let mut lines: Vec<String> = problems
        .iter()
        .take(SHOWN_PROBLEMS)
        .map(|(path, message)| {
            let message = crate::term::inline(message);
            if path.is_empty() {
                message.into_owned()
            } else {
                format!("{}: {message}", crate::term::inline(path))
            }
        })
        .collect();
    if problems.len() > SHOWN_PROBLEMS {
        lines.push(format!("… and {} more", problems.len() - SHOWN_PROBLEMS));
    }
    if problems.len() == 1 {
        lines[0].clone()
    } else {
        format!("{} problems:\n  {}", problems.len(), lines.join("\n  "))
    }
}
