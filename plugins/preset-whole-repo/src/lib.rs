//! The repo/whole-repo preset (workspace surface): an agent is given a
//! prompt in a real workspace; the observation says which entry file and
//! instruction/supporting files it loaded and how it routed the work.
//!
//! Scoring follows the published upstream semantics:
//! - `expectedEntryFile` matches the observed `entryFile` exactly, or as a
//!   prefix followed by ` `, `(` or `:`;
//! - required/forbidden instruction and supporting files against the
//!   loaded sets (the matched entry file counts as loaded);
//! - `expectedRouting`: `selectedSkill` (observed falls back to `workSkill`,
//!   then `bootstrapHelper`), `bootstrapHelper`, `workSkill` (falls back to
//!   `selectedSkill`), `selectedSupport`; tokens match when equal or when
//!   their parts after the last `:` are equal (`charness:impl` ~ `impl`);
//!   `firstToolCallPattern` is a substring of `firstToolCall`;
//! - `allowedFirstToolCalls`: exact membership of `firstToolCall`.
//!
//! A blocked observation is `blocked`; any failed expectation `failed`; an
//! evaluation with no expectations at all `unchecked`; otherwise `passed`.
//! Recommendation: failed → reject, blocked or unchecked → defer.

mod check;

use cautilus_sdk::preset::{CasePlan, CaseRun, Preset, PresetInfo, SuiteContract, Verdict};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value};

const CASES: &str = "cautilus.evaluation_cases.v1";
const OBSERVED: &str = "cautilus.evaluation_observed.v1";
const SUMMARY: &str = "cautilus.evaluation_summary.v1";

struct WholeRepo;

impl Preset for WholeRepo {
    fn info() -> PresetInfo {
        PresetInfo {
            plugin: plugin_info!(),
            surface: "repo".into(),
            preset: "whole-repo".into(),
            cases_schema: CASES.into(),
            observed_schema: OBSERVED.into(),
            summary_schema: SUMMARY.into(),
            counts: ["passed", "failed", "blocked"].map(String::from).to_vec(),
        }
    }

    fn translate(
        _suite: &Map<String, Value>,
        case: &Value,
        at: &str,
    ) -> Result<CasePlan, Vec<FieldError>> {
        check::translate(case, at)
    }

    fn collect(case: Value, run: CaseRun) -> Value {
        check::collect(case, run)
    }

    fn evaluate(evaluation: Value, _at: &str) -> Verdict {
        check::evaluate(evaluation)
    }

    /// No suite fields of its own (`agent` is the host's, on the repo
    /// surface); its case shape and packets' schemas.
    fn contract() -> SuiteContract {
        SuiteContract::default()
            .with_input_fields(&["prompt"])
            .with_case_schema(include_str!(
                "../../../schemas/presets/repo-whole-repo.case.schema.json"
            ))
            .with_schema(
                OBSERVED,
                include_str!(
                    "../../../schemas/presets/cautilus.evaluation_observed.v1.schema.json"
                ),
            )
            .with_schema(
                SUMMARY,
                include_str!("../../../schemas/presets/cautilus.evaluation_summary.v1.schema.json"),
            )
    }
}

export_preset!(WholeRepo);
