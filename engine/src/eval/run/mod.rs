//! Running a suite: the entry point of `eval test` ([`entry`]) above the
//! suite runner ([`suite_run`]: the checking pass [`check_pass`], then the
//! run pass [`run_pass`], then `run.json`; the plans of a suite too large
//! to keep between the two set aside on disk, [`spilled_plans`]; its case
//! ids, [`case_ids`]); one case's run ([`case_run`]);
//! batches of cases made ready for the preset ([`batch`]); ordered parallel
//! workers ([`workers`]) and the preset sessions they borrow
//! ([`preset_sessions`]); the provider a run uses ([`provider_choice`]);
//! multi-step fixtures ([`steps`], a case's output for later steps in
//! [`case_output`]); what every packet carries ([`packets`]); answers given
//! beforehand ([`canned`]); and what a finished suite hands back
//! ([`suite_outcome`]).

pub mod batch;
pub mod canned;
pub mod case_ids;
pub mod case_output;
pub mod case_run;
pub mod check_pass;
pub mod entry;
pub mod packets;
pub mod preset_sessions;
pub mod provider_choice;
pub mod resume;
pub mod run_pass;
pub mod spilled_plans;
pub mod steps;
pub mod suite_outcome;
pub mod suite_run;
pub mod workers;
