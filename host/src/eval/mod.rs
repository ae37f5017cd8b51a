//! Evaluation runs: `eval test` (fixture → preset → provider → observed →
//! summary), `eval evaluate` (score an observed packet from any runner) and
//! `eval validate` (offline checks).
//!
//! - [`pipeline`]: the options and entry of `eval test`, what its passes share;
//! - [`validate`]: the checking pass (every case, before anything runs);
//! - [`suite_run`]: running one suite (checking pass, run pass, `run.json`);
//! - [`run_pass`]: the run pass (cases through provider, preset, assertions),
//!   inline or with provider calls in flight; [`provider_calls`]: a run's
//!   provider calls (sessions, cassette, redaction);
//! - [`batch`]: one batch of cases made ready for the preset;
//! - [`run_records`]: packets, journal, tally and case lines as a run writes them;
//! - [`journal`]: `cells.jsonl`, one line per finished case (resume, crashes);
//! - [`run_state`]: `run.json`, how a run was started and how it ended;
//! - [`interrupt`]: SIGINT/SIGTERM stop a run between cases;
//! - [`observed`]: `eval evaluate` (which preset scores a packet, and the
//!   scoring);
//! - [`workers`]: ordered parallel batches (one set of stores per thread);
//! - [`run_provider`]: which provider a run uses, and its cassette;
//!   [`provider_setup`]: what a provider is granted and told;
//! - [`compare`]: `eval compare`, two runs against the cross-runtime rules;
//! - [`secrets`]: granted secret values scrubbed from what comes back, is
//!   written and is printed;
//! - [`cassette`]: record/replay of provider and judge calls
//!   ([`cassette_file`]: the file, read within a size cap and indexed;
//!   [`observation_json`]: the observation's JSON form);
//! - [`cases`]: running one case (invocation, samples, the case run);
//! - [`steps`]: multi-step fixtures, each step a suite of its own;
//! - [`assertions`]: fixture assertions through scorer plugins;
//!   [`scorer_pool`]: a worker's scorer instances and batched calls;
//!   [`outcome`]: one assertion's result; `assertion_syntax`: one assertion
//!   split into the fields the host reads and its scorer config;
//! - [`host_checks`]: the assertion types the host runs (code graders,
//!   execution metrics); [`judge`]: the suite's judge model
//!   ([`embeddings`]: its `embed` calls);
//! - [`origins`]: where each case came from (its file, directory, workspace);
//! - [`snapshots`]: golden files of `expected.snapshot`;
//! - [`tally`]: the host-owned counts and suite recommendation;
//! - [`records`]: run directories, streamed atomic packets, timestamps;
//! - [`run_dir`]: claiming a run directory (its lock, and refusing one that
//!   holds the run's inputs or files it did not write);
//! - [`report`]: the terminal summary.

pub mod assertion_kinds;
mod assertion_syntax;
pub mod assertions;
pub mod batch;
pub mod canned;
pub mod case_output;
pub mod cases;
pub mod cassette;
pub mod cassette_file;
#[cfg(test)]
mod cassette_fuzz;
pub mod compare;
pub mod embeddings;
pub mod entry;
pub mod host_checks;
pub mod interrupt;
pub mod journal;
#[cfg(test)]
mod journal_fuzz;
pub mod judge;
pub mod observation_json;
pub mod observation_scrub;
pub mod observed;
pub mod options;
pub mod origins;
pub mod outcome;
pub mod packets;
pub mod positions;
pub mod pricing;
pub mod progress;
pub mod provider_calls;
pub mod provider_setup;
pub mod records;
pub mod redact;
pub mod report;
pub mod run_dir;
pub mod run_pass;
pub mod run_provider;
pub mod run_records;
pub mod run_state;
pub mod scorer_pool;
pub mod snapshots;
pub mod status_names;
pub mod steps;
pub mod suite_outcome;
pub mod suite_run;
pub mod tally;
pub mod validate;
pub mod verdicts;
pub mod workers;
pub mod workspace_copy;

use std::path::PathBuf;

use serde_json::Value;

use crate::fixture::FixtureError;
use crate::plugin::PluginError;

pub use entry::{TestRun, test};
pub use observed::{EvaluateOptions, evaluate};
pub use options::{CellFilters, DEFAULT_CONCURRENCY, SuiteOptions, TestOptions, default_jobs};
pub use run_records::CaseLines;
pub use suite_outcome::SuiteOutcome;
pub use suite_run::resume_options;
pub use suite_run::run_suite;
pub use validate::check_preset_fields;
pub use validate::validate_suite;

/// A JSON value in one line of at most 80 characters, for reports.
pub(crate) fn report_excerpt(value: &Value) -> String {
    let text = match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(79).collect::<String>())
    } else {
        text
    }
}

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
    /// ([`positions::placed`]) starts with `file:line:col`, and then alone
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
            Self::Write { .. } | Self::Stopped => false,
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
