//! `translate`: skill case validation and repeat/consensus resolution.

use cautilus_sdk::preset::CasePlan;
use cautilus_sdk::{FieldError, Message};
use serde_json::{Map, Value, json};

pub const CASE_FIELDS: &[&str] = &[
    "caseId",
    "displayName",
    "evaluationKind",
    "targetKind",
    "targetId",
    "prompt",
    "turns",
    "expectedTrigger",
    "thresholds",
    "repeatCount",
    "minConsensusCount",
    "requiredSummaryFragments",
    "forbiddenSummaryFragments",
    "requiredCommandFragments",
    "forbiddenCommandFragments",
    "auditKind",
];
/// Upper bound of `repeatCount`: each sample is a full agent run.
const MAX_REPEAT: u64 = 100;
pub const THRESHOLDS: &[&str] = &[
    "max_total_tokens",
    "max_uncached_tokens",
    "max_median_run_uncached_tokens",
    "max_peak_run_uncached_tokens",
    "max_duration_ms",
    "max_cost_usd",
];
const FRAGMENTS: &[&str] = &[
    "requiredSummaryFragments",
    "forbiddenSummaryFragments",
    "requiredCommandFragments",
    "forbiddenCommandFragments",
];

/// Appended to the prompt of an execution case.
pub const OUTCOME_REQUEST: &str = "\n\nWhen you are done, end your answer with one JSON object on its own line: {\"outcome\": \"passed\" if you completed the task, \"failed\" if you could not, \"blocked\" if something outside your control stopped you}";

pub fn translate(
    suite: &Map<String, Value>,
    case: &Value,
    at: &str,
) -> Result<CasePlan, Vec<FieldError>> {
    let mut errors: Vec<FieldError> = Vec::new();
    let mut err = |path: String, message: String| errors.push(FieldError { path, message });
    let skill_id = suite
        .get("skillId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let suite_repeat = suite.get("repeatCount").and_then(Value::as_u64);
    let suite_consensus = suite.get("minConsensusCount").and_then(Value::as_u64);
    let Some(c) = case.as_object() else {
        err(at.to_string(), "a case must be an object".into());
        return Err(errors);
    };
    let mut misspelled: Vec<&str> = Vec::new();
    for key in c.keys().filter(|k| !CASE_FIELDS.contains(&k.as_str())) {
        let guess =
            cautilus_sdk::suggest::unknown_case_field(key, CASE_FIELDS, |g| c.contains_key(g));
        let hint = if let Some((field, hint)) = guess {
            misspelled.push(field);
            hint
        } else if key == "expected" {
            "repo/skill cases declare `expectedTrigger` or `thresholds` at the case level instead"
                .to_string()
        } else {
            format!("case fields are: {}", CASE_FIELDS.join(", "))
        };
        err(
            format!("{at}.{key}"),
            format!("unknown case field `{key}`; {hint}"),
        );
    }
    let text = |key: &str| c.get(key).and_then(Value::as_str).map(str::to_string);
    if text("caseId").is_none_or(|s| s.trim().is_empty()) && !misspelled.contains(&"caseId") {
        err(
            format!("{at}.caseId"),
            "is missing or empty (required)".into(),
        );
    }
    let kind = text("evaluationKind");
    match kind.as_deref() {
        Some("trigger") => match text("expectedTrigger").as_deref() {
            Some("must_invoke" | "must_not_invoke") => {}
            Some(other) => err(
                format!("{at}.expectedTrigger"),
                format!("must be must_invoke or must_not_invoke, got `{other}`"),
            ),
            None if misspelled.contains(&"expectedTrigger") => {}
            None => err(
                format!("{at}.expectedTrigger"),
                "is required for a trigger case (must_invoke or must_not_invoke)".into(),
            ),
        },
        Some("execution") => {
            if c.contains_key("expectedTrigger") {
                err(
                    format!("{at}.expectedTrigger"),
                    "applies to trigger cases only; remove it from this execution case".into(),
                );
            }
        }
        Some(other) => err(
            format!("{at}.evaluationKind"),
            format!("must be trigger or execution, got `{other}`"),
        ),
        None if misspelled.contains(&"evaluationKind") => {}
        None => err(
            format!("{at}.evaluationKind"),
            "is missing: trigger or execution".into(),
        ),
    }
    let turns = c.get("turns").and_then(Value::as_array);
    if turns.is_some() && kind.as_deref() == Some("trigger") {
        err(
            format!("{at}.turns"),
            "multi-turn episodes apply to execution cases only".into(),
        );
    }
    if c.contains_key("auditKind") && turns.is_none() {
        err(format!("{at}.auditKind"), "requires `turns`".into());
    }
    let prompt = text("prompt").or_else(|| {
        turns
            .and_then(|t| t.first())
            .and_then(|t| t.get("input"))
            .and_then(Value::as_str)
            .map(|first| format!("Multi-turn episode starting with: {first}"))
    });
    if prompt.is_none() && !misspelled.contains(&"prompt") && !misspelled.contains(&"turns") {
        err(
            format!("{at}.prompt"),
            "is missing: give `prompt` (or `turns` for an execution episode)".into(),
        );
    }
    if let Some(thresholds) = c.get("thresholds") {
        match thresholds.as_object() {
            Some(t) => {
                for (key, value) in t {
                    if !THRESHOLDS.contains(&key.as_str()) {
                        err(
                            format!("{at}.thresholds.{key}"),
                            format!("unknown threshold; use {}", THRESHOLDS.join(", ")),
                        );
                    } else if !value.as_f64().is_some_and(|v| v >= 0.0) {
                        err(
                            format!("{at}.thresholds.{key}"),
                            "must be a non-negative number".into(),
                        );
                    }
                }
            }
            None => err(format!("{at}.thresholds"), "must be an object".into()),
        }
    }
    for key in FRAGMENTS {
        if let Some(v) = c.get(*key)
            && !v.as_array().is_some_and(|l| l.iter().all(Value::is_string))
        {
            err(format!("{at}.{key}"), "must be a list of strings".into());
        }
    }
    for key in ["repeatCount", "minConsensusCount"] {
        if let Some(value) = c.get(key)
            && value.as_u64().is_none()
        {
            err(
                format!("{at}.{key}"),
                format!("must be a whole number, got {value}"),
            );
        }
    }
    let case_repeat = c.get("repeatCount").and_then(Value::as_u64);
    let repeat = case_repeat.or(suite_repeat).unwrap_or(1);
    let consensus = match (
        c.get("minConsensusCount").and_then(Value::as_u64),
        case_repeat,
    ) {
        (Some(n), _) => n,
        (None, Some(r)) => r,
        (None, None) => suite_consensus.unwrap_or(repeat),
    };
    if !(1..=MAX_REPEAT).contains(&repeat) {
        err(
            format!("{at}.repeatCount"),
            format!("must be between 1 and {MAX_REPEAT}, got {repeat}"),
        );
    }
    if consensus == 0 || consensus > repeat {
        err(
            format!("{at}.minConsensusCount"),
            format!("must be between 1 and repeatCount ({repeat}), got {consensus}"),
        );
    }
    let mut normalized: Map<String, Value> = c.clone();
    normalized.insert(
        "displayName".into(),
        json!(text("displayName").or(text("caseId"))),
    );
    normalized.insert(
        "targetKind".into(),
        json!(text("targetKind").unwrap_or_else(|| "public_skill".into())),
    );
    normalized.insert(
        "targetId".into(),
        json!(text("targetId").unwrap_or_else(|| skill_id.clone())),
    );
    normalized.insert("prompt".into(), json!(prompt.clone()));
    normalized.insert("repeatCount".into(), json!(repeat));
    normalized.insert("minConsensusCount".into(), json!(consensus));
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut plan = CasePlan::new(
        text("caseId").unwrap_or_default(),
        Value::Object(normalized),
    );
    let mut prompt = prompt.unwrap_or_default();
    // An execution's outcome is the agent's to report, the way upstream
    // runners give it an output schema; whether it invoked the skill is
    // observed, so a trigger case asks for nothing.
    if c.get("evaluationKind").and_then(Value::as_str) == Some("execution") {
        prompt.push_str(OUTCOME_REQUEST);
    }
    plan.messages = vec![Message {
        role: "user".into(),
        content: prompt,
    }];
    plan.repeat_count = u32::try_from(repeat).unwrap_or(1);
    Ok(plan)
}
