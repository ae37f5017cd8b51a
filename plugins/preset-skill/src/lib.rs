//! The repo/skill preset (workspace surface): does one skill trigger when it
//! should (and not otherwise), and does it execute within its thresholds?
//!
//! Semantics follow the published upstream:
//! - **trigger** cases (`expectedTrigger: must_invoke | must_not_invoke`) are
//!   sampled `repeatCount` times; consensus is reached when at least
//!   `minConsensusCount` samples match the expectation. Without consensus the
//!   aggregate `invoked` is the opposite of the expectation and the case is
//!   `unstable` (and fails);
//! - **execution** cases: `invoked == false` fails; otherwise the status is
//!   the consensus outcome (the first of passed, failed, blocked, degraded
//!   with at least `minConsensusCount` samples; else degraded when enough
//!   samples invoked the skill, blocked when not); a threshold overrun turns
//!   `passed` into `degraded` with `thresholdFindings`;
//! - fragment guards (case-insensitive substrings of the summary and the
//!   command log) turn a trigger into not-invoked and an execution into failed.
//!
//! Recommendation: failed → reject; degraded, blocked or unstable → defer.

mod sampling;
mod shape;

use cautilus_sdk::preset::{
    CasePlan, CaseRun, Preset, PresetInfo, SuiteContract, SuiteField, Verdict,
};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value, json};

const CASES: &str = "cautilus.skill_test_cases.v1";
const OBSERVED: &str = "cautilus.skill_evaluation_inputs.v1";
const SUMMARY: &str = "cautilus.skill_evaluation_summary.v1";

struct Skill;

impl Preset for Skill {
    fn info() -> PresetInfo {
        PresetInfo {
            plugin: plugin_info!(),
            surface: "repo".into(),
            preset: "skill".into(),
            cases_schema: CASES.into(),
            observed_schema: OBSERVED.into(),
            summary_schema: SUMMARY.into(),
            counts: [
                "passed",
                "failed",
                "degraded",
                "blocked",
                "trigger",
                "execution",
                "unstable",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    fn translate(
        suite: &Map<String, Value>,
        case: &Value,
        at: &str,
    ) -> Result<CasePlan, Vec<FieldError>> {
        shape::translate(suite, case, at)
    }

    fn collect(case: Value, run: CaseRun) -> Value {
        sampling::collect(case, run)
    }

    fn evaluate(evaluation: Value, _at: &str) -> Verdict {
        sampling::evaluate(evaluation)
    }

    fn contract() -> SuiteContract {
        let name = json!({"type": "string", "minLength": 1});
        let count = json!({"type": "integer", "minimum": 1, "maximum": 100});
        SuiteContract {
            fields: vec![
                SuiteField::new("skillId", name.clone(), "the skill under test")
                    .identity()
                    .default_from("suiteId"),
                SuiteField::new("skillDisplayName", name, "the skill's name for people").identity(),
                SuiteField::new(
                    "repeatCount",
                    count.clone(),
                    "how many times each trigger case is sampled: a whole number from 1 to 100",
                ),
                SuiteField::new(
                    "minConsensusCount",
                    count,
                    "how many samples must agree: a whole number from 1 to 100",
                ),
            ],
            ..SuiteContract::default()
        }
        .with_input_fields(&["prompt", "turns"])
        .with_case_schema(include_str!(
            "../../../schemas/presets/repo-skill.case.schema.json"
        ))
        .with_schema(
            OBSERVED,
            include_str!(
                "../../../schemas/presets/cautilus.skill_evaluation_inputs.v1.schema.json"
            ),
        )
        .with_schema(
            SUMMARY,
            include_str!(
                "../../../schemas/presets/cautilus.skill_evaluation_summary.v1.schema.json"
            ),
        )
    }
}

export_preset!(Skill);
