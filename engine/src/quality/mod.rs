//! The quality engine: what a run of many cells concludes, beyond "did
//! each case pass once". A cell is one case × variant × trial.
//!
//! - [`plan`]: the suite's experiment fields (`trials`, `variants`,
//!   `baseline`, `gates`, `fixtureResults`) and the cells a run takes, in
//!   groups of one variant's trial; [`field_scan`]: whether a case file may set
//!   a host-owned case field, without parsing it;
//! - [`experiment`]: running the groups; [`record`]: what the cells
//!   conclude and `experiment.json`;
//! - [`aggregate`]: per-variant aggregates and the paired comparison with
//!   the baseline; [`stats`]: the estimators they use;
//! - [`gates`]: the declarative pass policy that sets the exit code;
//! - [`check`]: the offline check of a fixture before anything runs;
//! - [`baseline`]: committed baselines (`eval promote`); [`merge`]: the
//!   shards of a run joined (`eval merge`);
//! - [`report`]: the readable summary; [`resume`]: `--resume` of an
//!   experiment (`experiment-run.json`); [`reuse`]: `--reuse-outputs`;
//!   [`rescore`]: `eval evaluate --fixture`.

pub mod aggregate;
pub mod baseline;
pub mod check;
pub mod experiment;
pub mod field_scan;
pub mod gate_spec;
pub mod gates;
pub mod merge;
pub mod outcome;
pub mod plan;
pub mod record;
mod record_form;
pub mod report;
pub mod rescore;
pub mod resume;
pub mod reuse;
pub mod stats;

pub use experiment::{ExperimentOutcome, Run, test};
