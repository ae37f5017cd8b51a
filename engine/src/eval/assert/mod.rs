//! Assertions: checks a fixture adds on top of a preset's expectations.
//! Their kinds ([`kinds`]) in a leaf below the runner ([`assertions`]), the
//! scorer pool ([`scorer_pool`]) and one assertion's result ([`outcome`]);
//! an assertion split into host fields and scorer config ([`syntax`]); the
//! checks the host runs itself ([`host_checks`]); the suite's judge model
//! ([`judge`]); golden files ([`snapshots`]).

pub mod assertions;
pub mod host_checks;
pub mod judge;
pub mod judge_config;
pub mod judge_spend;
pub mod kinds;
pub mod outcome;
pub mod scorer_pool;
pub mod scoring;
pub mod snapshots;
pub mod syntax;
