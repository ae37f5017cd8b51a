//! Evaluation runs: `eval test` (fixture → cases → provider → assertions
//! → verdicts → records), `eval evaluate` (score an observed packet from any
//! runner), `eval compare` and `eval validate` (offline checks).
//!
//! The folders are the stages of a run, in the order its data flows; a
//! module imports only from its own stage, the stages below it, and the
//! leaves at this level:
//!
//! - [`cases`]: where each case came from and its own copy of the
//!   workspace (fixture → plan);
//! - [`provider`]: calling the provider for a case: what it is granted and
//!   told, the calls in flight, the cassette, the observation's JSON form
//!   and its scrubbing, prices;
//! - [`assert`]: the assertions of a suite (their kinds in a leaf), the
//!   scorer pool, the checks the host runs itself, the judge model and
//!   golden files;
//! - [`verdict`]: a case's verdict from its preset expectations and its
//!   assertions, and the host-owned tally and recommendation;
//! - [`records`]: what a run writes and prints as it goes: the journal,
//!   `run.json`, the run directory, packets and case lines, progress and
//!   the terminal summary;
//! - [`run`]: the entry point of `eval test` above the suite runner, the
//!   checking pass and the run pass, one case's run, workers, steps;
//! - the leaves: [`options`], [`error`], [`files`] (atomic writes,
//!   streamed packets, timestamps), [`redact`] (user-configured
//!   redaction), [`interrupt`] (SIGINT/SIGTERM), [`positions`]
//!   (`file:line:col` of a fixture problem);
//! - the other commands on top: [`evaluate`] (`eval evaluate`) and
//!   [`compare`] (`eval compare`).

pub mod assert;
pub mod cases;
pub mod compare;
pub mod error;
pub mod evaluate;
pub mod files;
pub mod interrupt;
pub mod options;
pub mod positions;
pub mod provider;
pub mod records;
pub mod redact;
pub mod run;
pub mod verdict;

pub use error::EvalError;
pub use evaluate::{EvaluateOptions, evaluate};
pub use options::{CellFilters, DEFAULT_CONCURRENCY, SuiteOptions, TestOptions, default_jobs};
pub use records::run_records::CaseLines;
pub use run::check_pass::{check_preset_fields, validate_suite};
pub use run::entry::{TestRun, test};
pub use run::provider_choice::check_service;
pub use run::resume::resume_options;
pub use run::suite_outcome::SuiteOutcome;
pub use run::suite_run::run_suite;
