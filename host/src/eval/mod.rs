//! Evaluation runs: `eval test` (fixture → preset → provider → observed →
//! summary), `eval evaluate` (score an observed packet from any runner) and
//! `eval validate` (offline checks).
//!
//! - [`pipeline`]: the steps, in order;
//! - [`cases`]: turning a case of the cases packet into a provider
//!   invocation, and an observation into the result the preset collects;
//! - [`records`]: run directories, atomic JSON writes, timestamps;
//! - [`report`]: the terminal summary.

pub mod cases;
pub mod pipeline;
pub mod records;
pub mod report;

use std::path::PathBuf;

use crate::fixture::FixtureError;
use crate::plugin::PluginError;

pub use pipeline::{EvaluateOptions, Outcome, TestOptions, evaluate, test, validate};

/// Why an evaluation could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The preset rejected the fixture's cases (paths into the fixture).
    #[error("{}: {}", file.display(), format_problems(problems))]
    Cases {
        file: PathBuf,
        problems: Vec<(String, String)>,
    },
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
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
            Self::Fixture(_) | Self::Cases { .. } | Self::Input { .. } => true,
            Self::Plugin(e) => e.is_definition_error(),
            Self::Write { .. } => false,
        }
    }
}

fn format_problems(problems: &[(String, String)]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|(path, message)| {
            if path.is_empty() {
                message.clone()
            } else {
                format!("{path}: {message}")
            }
        })
        .collect();
    if lines.len() == 1 {
        lines[0].clone()
    } else {
        format!("{} problems:\n  {}", lines.len(), lines.join("\n  "))
    }
}
