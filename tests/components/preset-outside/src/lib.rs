//! A preset declaring a cross-axis pair (`repo/chat`), which the host must
//! refuse at load: the taxonomy belongs to the host, not to plugins.

use cautilus_sdk::preset::{CasePlan, CaseRun, CaseStatus, Preset, PresetInfo, Verdict};
use cautilus_sdk::{FieldError, export_preset, plugin_info};
use serde_json::{Map, Value};

pub struct Outside;

impl Preset for Outside {
    fn info() -> PresetInfo {
        PresetInfo {
            plugin: plugin_info!(),
            surface: "repo".into(),
            preset: "chat".into(),
            cases_schema: "x.cases.v1".into(),
            observed_schema: "x.observed.v1".into(),
            summary_schema: "x.summary.v1".into(),
            counts: Vec::new(),
        }
    }

    fn translate(
        _: &Map<String, Value>,
        case: &Value,
        _: &str,
    ) -> Result<CasePlan, Vec<FieldError>> {
        Ok(CasePlan::new("x", case.clone()))
    }

    fn collect(case: Value, _: CaseRun) -> Value {
        case
    }

    fn evaluate(evaluation: Value, _: &str) -> Verdict {
        Verdict::new("x", CaseStatus::Passed, "", evaluation)
    }
}

export_preset!(Outside);
