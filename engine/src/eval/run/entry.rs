//! The entry point of `eval test`: a fixture's suite through the suite
//! runner ([`crate::eval::run::suite_run`]), or its steps ([`crate::eval::run::steps`]).
//!
//! `eval test`: fixture → checks (suite, taxonomy) → every case checked in
//! batches ([`crate::eval::run::check_pass`]: preset `translate`, assertions, unique ids,
//! `eval-cases.json`) → the cases again, per batch on worker threads with
//! their own stores ([`crate::eval::run::run_pass`]: provider per case → preset
//! `collect` → assertions) → `eval-observed.json`, `eval-summary.json` and
//! the journal in case order. The host writes the packets' headers, counts
//! and recommendation. Nothing runs unless the fixture and flags are valid.

use crate::eval::EvalError;
use crate::eval::options::TestOptions;
use crate::eval::run::suite_outcome::SuiteOutcome;
use crate::eval::run::suite_run::run_suite;
use crate::fixture;
use crate::plugin::Registry;

/// What `eval test` ran: one suite, or a sequence of steps.
#[derive(Debug)]
pub enum TestRun {
    Suite(SuiteOutcome),
    Steps(crate::eval::run::steps::StepsOutcome),
}

/// Runs a fixture end to end and writes its records.
pub fn test(registry: &Registry, options: &TestOptions) -> Result<TestRun, EvalError> {
    match fixture::load_fixture_within(&options.fixture, options.path_root.as_deref())? {
        fixture::Fixture::Suite(suite) => {
            Ok(TestRun::Suite(run_suite(registry, options, suite, false)?))
        }
        fixture::Fixture::Steps(..) if options.resume => Err(EvalError::Input {
            path: options.fixture.clone(),
            message: "`--resume` continues a suite run; a steps fixture runs again from the start (each step reads the outputs of the steps before it)".into(),
        }),
        fixture::Fixture::Steps(steps, warnings) => {
            for warning in &warnings {
                eprintln!("warning: {}", crate::term::shown(warning));
            }
            Ok(TestRun::Steps(crate::eval::run::steps::run(
                registry, options, &steps,
            )?))
        }
    }
}
