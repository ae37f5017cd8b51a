//! The tool-trajectory scorers over [`cautilus_scorers_core::trajectory`].
//!
//! Tool calls are a signal only some providers capture. When the
//! observation says they were not captured (`tool-calls: none`, as opposed
//! to an empty list), every scorer here fails with the label `uncaptured`,
//! naming the harness that ran the case and the ones that capture tool
//! calls: an unmeasured trajectory is never a pass (and the host does not
//! turn it into one when the assertion is negated).

use cautilus_scorers_core::trajectory::{
    self, CalledConfig, CountConfig, OrderConfig, SucceededConfig, TrajectoryConfig,
};
use cautilus_sdk::{ConfigSchema, PluginError, Score, ScoreInput, Scorer, ToolCall};
use serde_json::json;

use crate::{to_error, to_score};

/// The label of a score on a signal the run did not capture.
pub const UNCAPTURED: &str = "uncaptured";

/// Who captures tool calls, for the `uncaptured` detail.
const CAPTURED_BY: &str = "the `claude-code` (claude_code) and `codex` (codex_exec) workspace providers capture them, and the fixture backend reports a canned result's `toolCalls`";

fn uncaptured(name: &str, input: &ScoreInput, what: &str) -> Score {
    let harness = input.observation.harness.as_deref().unwrap_or("(unnamed)");
    Score {
        name: name.to_string(),
        value: Some(0.0),
        passed: Some(false),
        label: Some(UNCAPTURED.into()),
        detail: Some(format!(
            "uncaptured: the provider (harness `{harness}`) did not capture {what}; {CAPTURED_BY}"
        )),
    }
}

/// The captured tool calls, or the `uncaptured` score.
fn calls<'a>(name: &str, input: &'a ScoreInput) -> Result<&'a [ToolCall], Score> {
    input
        .observation
        .tool_calls
        .as_deref()
        .ok_or_else(|| uncaptured(name, input, "tool calls"))
}

fn tool_schema(extra: serde_json::Value) -> ConfigSchema {
    let mut properties = json!({
        "tool": { "type": "string", "description": "the tool's name as the harness reports it (`Read`, `Bash`, `shell` …)" },
        "args": { "type": "object", "description": "arguments the call must contain (a partial object)" },
        "negate": { "type": "boolean" }
    });
    if let (Some(props), serde_json::Value::Object(extra)) = (properties.as_object_mut(), extra) {
        props.extend(extra);
    }
    ConfigSchema::raw(json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    }))
}

fn entry_schema() -> serde_json::Value {
    json!({
        "oneOf": [
            { "type": "string" },
            { "type": "object", "properties": { "tool": { "type": "string" }, "args": { "type": "object" } }, "required": ["tool"], "additionalProperties": false }
        ]
    })
}

macro_rules! trajectory_scorer {
    ($name:ident, $id:literal, $description:literal, $config:ty, $schema:expr, $check:expr, $score:expr) => {
        pub struct $name($config);

        impl Scorer for $name {
            const ID: &'static str = $id;
            const DESCRIPTION: &'static str = $description;
            type Config = $config;

            fn config_schema() -> ConfigSchema {
                $schema
            }

            fn new(config: $config) -> Result<Self, PluginError> {
                let check: fn(&$config) -> Result<(), cautilus_scorers_core::ConfigError> = $check;
                check(&config).map_err(to_error)?;
                Ok(Self(config))
            }

            fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
                let score: fn(&$config, &str, &ScoreInput, &[ToolCall]) -> Score = $score;
                Ok(match calls(Self::ID, input) {
                    Ok(calls) => {
                        let expected = trajectory::ExpectedCalls::expected_calls(&self.0);
                        if let Some(why) = trajectory::unreadable_arguments(&expected, calls) {
                            return Err(PluginError::failed(why));
                        }
                        score(&self.0, Self::ID, input, calls)
                    }
                    Err(uncaptured) => uncaptured,
                })
            }
        }
    };
}

trajectory_scorer!(
    ToolCalled,
    "tool-called",
    "the agent called `tool` (with arguments containing `args`, when given)",
    CalledConfig,
    tool_schema(json!({})),
    trajectory::check_called,
    |c, name, _, calls| to_score(name, trajectory::called(c, calls))
);

trajectory_scorer!(
    ToolNotCalled,
    "tool-not-called",
    "the agent never called `tool` (with arguments containing `args`, when given)",
    CalledConfig,
    tool_schema(json!({})),
    trajectory::check_called,
    |c, name, _, calls| to_score(name, trajectory::not_called(c, calls))
);

trajectory_scorer!(
    ToolTrajectory,
    "tool-trajectory",
    "the tool calls match `tools` (`mode`: strict = same calls in order, unordered = same calls in any order, subset = no call outside `tools`, superset = every entry called)",
    TrajectoryConfig,
    ConfigSchema::raw(json!({
        "type": "object",
        "properties": {
            "mode": { "enum": ["strict", "unordered", "subset", "superset"] },
            "tools": { "type": "array", "items": entry_schema() },
            "negate": { "type": "boolean" }
        },
        "required": ["mode", "tools"],
        "additionalProperties": false
    })),
    trajectory::check_trajectory,
    |c, name, _, calls| to_score(name, trajectory::trajectory(c, calls))
);

trajectory_scorer!(
    ToolOrder,
    "tool-order",
    "the first call to `before` comes before the first call to `after` (both called)",
    OrderConfig,
    ConfigSchema::raw(json!({
        "type": "object",
        "properties": { "before": entry_schema(), "after": entry_schema(), "negate": { "type": "boolean" } },
        "required": ["before", "after"],
        "additionalProperties": false
    })),
    trajectory::check_order,
    |c, name, _, calls| to_score(name, trajectory::order(c, calls))
);

trajectory_scorer!(
    ToolsSucceeded,
    "tools-succeeded",
    "every tool call succeeded",
    SucceededConfig,
    ConfigSchema::raw(json!({
        "type": "object",
        "properties": { "negate": { "type": "boolean" } },
        "additionalProperties": false
    })),
    |_| Ok(()),
    |_, name, input, calls| match trajectory::succeeded(calls) {
        Ok(verdict) => to_score(name, verdict),
        Err(unknown) => uncaptured(name, input, &unknown),
    }
);

trajectory_scorer!(
    ToolCount,
    "tool-count",
    "the number of tool calls (of `tool`, when given) is within `min`..=`max`",
    CountConfig,
    tool_schema(json!({
        "min": { "type": "integer", "minimum": 0 },
        "max": { "type": "integer", "minimum": 0 }
    })),
    trajectory::check_count,
    |c, name, _, calls| to_score(name, trajectory::count(c, calls))
);
