//! The preset trait and the `export_preset!` macro.
//!
//! A preset owns one (surface, preset) pair of the host's taxonomy. It works
//! one case at a time; the host batches cases, runs batches in parallel and
//! owns the packets' headers, counts and the suite recommendation:
//!
//! - [`Preset::translate`] validates and normalizes one case of a suite;
//! - [`Preset::collect`] turns a case and what the host ran for it into the
//!   case's observed evaluation (which the SDK then scores with
//!   [`Preset::evaluate`] in the same call);
//! - [`Preset::evaluate`] scores one observed evaluation (from `collect` or
//!   any other runner) into a [`Verdict`].
//!
//! Cases and evaluations are JSON ([`serde_json::Value`]); what the host must
//! reason about (invocation fields, status, recommendation) is typed.
//!
//! One concern per file: what a preset declares about its suites
//! (`contract.rs`), a case's plan (`plan.rs`), a verdict (`verdict.rs`) and
//! its JSON text (`verdict_text.rs`), the batches the host calls with
//! (`export.rs`), helpers for packets (`packet.rs`).

use serde_json::{Map, Value};

use crate::bindings::preset_api;
use crate::types::FieldError;

mod contract;
mod export;
pub mod packet;
mod plan;
mod verdict;
mod verdict_text;

pub use contract::{SuiteContract, SuiteField};
#[doc(hidden)]
pub use export::PresetExport;
pub use plan::CasePlan;
pub use verdict::{Verdict, status_name};

/// A [`CasePlan`] with its body and values as JSON text, as the host takes it.
pub use preset_api::CasePlan as WrittenPlan;
pub use preset_api::{CaseRun, CaseStatus, PresetInfo, Recommendation, Sample};

/// A preset plugin. Each method handles one case; the SDK does the batching.
pub trait Preset: 'static {
    /// Identity, the (surface, preset) pair, the packet schema ids and the
    /// summary's count keys.
    fn info() -> PresetInfo;

    /// Validates and normalizes one case. `suite` holds the suite-level
    /// fields (everything but `cases`); `at` is the case's JSON path
    /// (`cases[3]`): report every problem at a path under it.
    fn translate(
        suite: &Map<String, Value>,
        case: &Value,
        at: &str,
    ) -> Result<CasePlan, Vec<FieldError>>;

    /// Optional fast path of [`Preset::translate`] for a preset whose
    /// suites are large: the plan of one case written straight from `case`,
    /// the case's JSON text as the host sends it (written by `serde_json`:
    /// compact, canonical escapes and numbers). It must give what
    /// `translate` gives ([`CasePlan::written`]), byte for byte; return
    /// `None` for any case it does not handle, and always for a case with a
    /// problem, and the SDK runs `translate`, which names the problems. The
    /// default handles none.
    fn translate_written(suite: &Map<String, Value>, case: &str) -> Option<WrittenPlan> {
        let _ = (suite, case);
        None
    }

    /// The observed evaluation of one case: `case` is the body from
    /// [`Preset::translate`], `run` what the host ran (one sample per repeat).
    fn collect(case: Value, run: CaseRun) -> Value;

    /// Optional fast path of [`Preset::collect`] for a preset whose cases
    /// are many: the observed evaluation's JSON text and its verdict
    /// ([`Verdict::written`]), written straight from `case`, the JSON text
    /// of the body [`Preset::translate`] gave, as the SDK wrote it (the
    /// SDK's [`crate::json`] writers help). It must give what `collect` and
    /// then `evaluate` give, byte for byte, members in the same order; read
    /// numbers with `serde_json`'s `float_roundtrip` if it copies any, so
    /// that the value path writes the same digits ([`Verdict::entry_text`]
    /// gives either verdict's entry for a test). Return `None` for any case
    /// it does not handle, and the SDK runs those two. The default handles
    /// none.
    fn collect_written(case: &str, run: &CaseRun) -> Option<(String, Verdict)> {
        let _ = (case, run);
        None
    }

    /// Scores one observed evaluation (always a JSON object: the SDK makes
    /// anything else an `errored` verdict); `at` is its JSON path
    /// (`evaluations[3]`). A malformed evaluation is an `errored` verdict
    /// naming the field; one that declares nothing to check is
    /// [`CaseStatus::Unchecked`], never `passed`.
    fn evaluate(evaluation: Value, at: &str) -> Verdict;

    /// The suite fields this preset reads, whether it uses snapshots, and
    /// the schemas it publishes. The default declares nothing: its suites
    /// may use only the host's own fields.
    fn contract() -> SuiteContract {
        SuiteContract::default()
    }
}

/// Identity of a plugin from the crate's `Cargo.toml`.
#[macro_export]
macro_rules! plugin_info {
    ($($capability:expr),* $(,)?) => {
        $crate::PluginInfo {
            id: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            description: env!("CARGO_PKG_DESCRIPTION").to_string(),
            capabilities: vec![$($capability),*],
        }
    };
}

/// Exports a [`Preset`] as this component's preset world.
#[macro_export]
macro_rules! export_preset {
    ($preset:ty) => {
        const _: () = {
            type __CautilusPresetExport = $crate::__private::PresetExport<$preset>;
            $crate::__private::__export_preset_world!(
                __CautilusPresetExport with_types_in $crate::__private::preset_bindings
            );
        };
    };
}
