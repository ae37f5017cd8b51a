//! Tool-trajectory checks on the tool calls a provider captured:
//! `tool-called`, `tool-not-called`, `tool-trajectory`, `tool-order`,
//! `tools-succeeded` and `tool-count`.
//!
//! A call matches an expected entry when its name is the entry's `tool`
//! (exactly, as the harness names it: `Read`, `Bash`, `shell` …) and, when
//! the entry gives `args`, its arguments contain them: every member of an
//! `args` object is present with a matching value (recursively); arrays and
//! scalars compare equal.
//!
//! Whether tool calls were captured at all is decided by the caller: these
//! functions see only a captured list (possibly empty).

use serde::Deserialize;
use serde_json::Value;

use crate::{ConfigError, Verdict};
use cautilus_sdk::ToolCall;

/// An expected call: a tool name, or `{tool, args?}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Expected {
    Name(String),
    Call(CallSpec),
}

/// `{tool, args?}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    pub tool: String,
    #[serde(default)]
    pub args: Option<Value>,
}

impl Expected {
    fn tool(&self) -> &str {
        match self {
            Expected::Name(name) => name,
            Expected::Call(call) => &call.tool,
        }
    }

    fn args(&self) -> Option<&Value> {
        match self {
            Expected::Name(_) => None,
            Expected::Call(call) => call.args.as_ref(),
        }
    }

    fn describe(&self) -> String {
        match self.args() {
            None => format!("`{}`", self.tool()),
            Some(args) => format!("`{}` with {args}", self.tool()),
        }
    }

    /// Whether `call` is this expected call.
    pub fn matches(&self, call: &ToolCall) -> bool {
        call.name == self.tool()
            && self.args().is_none_or(|want| {
                call.arguments
                    .as_deref()
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .is_some_and(|seen| contains(&seen, want))
            })
    }
}

/// The calls a config compares with what was called.
pub trait ExpectedCalls {
    fn expected_calls(&self) -> Vec<Expected>;
}

/// Why a captured call cannot be matched: its arguments are JSON the parser
/// cannot hold (nested past its limit, a number past `f64`) and an expected
/// call of its tool gives `args`. Matching it would guess, so the check is
/// unchecked (errored) with this reason, never failed or passed.
pub fn unreadable_arguments(expected: &[Expected], calls: &[ToolCall]) -> Option<String> {
    calls
        .iter()
        .filter(|call| {
            expected
                .iter()
                .any(|e| e.args().is_some() && e.tool() == call.name)
        })
        .find_map(
            |call| match crate::json::parse(call.arguments.as_deref()?) {
                crate::json::Parsed::Unparsable(why) => Some(format!(
                    "the arguments of a `{}` call cannot be compared with `args`: {why}",
                    call.name
                )),
                _ => None,
            },
        )
}

/// Whether `seen` contains `want`: objects member by member (extra members
/// allowed), everything else equal.
fn contains(seen: &Value, want: &Value) -> bool {
    match (seen, want) {
        (Value::Object(seen), Value::Object(want)) => want
            .iter()
            .all(|(key, value)| seen.get(key).is_some_and(|s| contains(s, value))),
        _ => seen == want,
    }
}

/// `tool-called` / `tool-not-called`: `{tool, args?}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalledConfig {
    pub tool: String,
    #[serde(default)]
    pub args: Option<Value>,
}

impl CalledConfig {
    fn expected(&self) -> Expected {
        Expected::Call(CallSpec {
            tool: self.tool.clone(),
            args: self.args.clone(),
        })
    }
}

impl ExpectedCalls for CalledConfig {
    fn expected_calls(&self) -> Vec<Expected> {
        vec![self.expected()]
    }
}

impl ExpectedCalls for TrajectoryConfig {
    fn expected_calls(&self) -> Vec<Expected> {
        self.tools.clone()
    }
}

impl ExpectedCalls for OrderConfig {
    fn expected_calls(&self) -> Vec<Expected> {
        vec![self.before.clone(), self.after.clone()]
    }
}

impl ExpectedCalls for SucceededConfig {
    fn expected_calls(&self) -> Vec<Expected> {
        Vec::new()
    }
}

impl ExpectedCalls for CountConfig {
    fn expected_calls(&self) -> Vec<Expected> {
        self.tool
            .iter()
            .map(|tool| {
                Expected::Call(CallSpec {
                    tool: tool.clone(),
                    args: self.args.clone(),
                })
            })
            .collect()
    }
}

/// The names of the calls, in order, for failure details.
fn names(calls: &[ToolCall]) -> String {
    if calls.is_empty() {
        return "no tool calls".into();
    }
    let mut listed: Vec<&str> = calls.iter().take(20).map(|c| c.name.as_str()).collect();
    if calls.len() > 20 {
        listed.push("…");
    }
    format!("calls: {}", listed.join(", "))
}

fn require_tool(tool: &str, path: &str) -> Result<(), ConfigError> {
    if tool.trim().is_empty() {
        return Err(ConfigError::new(path, "name a tool (e.g. `Read`, `Bash`)"));
    }
    Ok(())
}

pub fn check_called(config: &CalledConfig) -> Result<(), ConfigError> {
    require_tool(&config.tool, "tool")
}

/// `tool-called`: some call matches.
pub fn called(config: &CalledConfig, calls: &[ToolCall]) -> Verdict {
    let expected = config.expected();
    let first = calls.iter().position(|c| expected.matches(c));
    Verdict::explain(
        first.is_some(),
        || {
            format!(
                "{} was called (call {} of {})",
                expected.describe(),
                first.unwrap_or_default() + 1,
                calls.len()
            )
        },
        || format!("{} was not called; {}", expected.describe(), names(calls)),
    )
}

/// `tool-not-called`: no call matches.
pub fn not_called(config: &CalledConfig, calls: &[ToolCall]) -> Verdict {
    let expected = config.expected();
    let hits = calls.iter().filter(|c| expected.matches(c)).count();
    Verdict::explain(
        hits == 0,
        || format!("{} was never called; {}", expected.describe(), names(calls)),
        || format!("{} was called {hits} time(s)", expected.describe()),
    )
}

/// How `tool-trajectory` compares the calls with `tools`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The calls are exactly `tools`, in order.
    Strict,
    /// The calls are exactly `tools`, in any order.
    Unordered,
    /// Every call is one of `tools` (each entry used at most once).
    Subset,
    /// Every entry of `tools` was called (in any order; other calls allowed).
    Superset,
}

/// `tool-trajectory`: `{mode, tools: [name | {tool, args?}]}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryConfig {
    pub mode: Mode,
    pub tools: Vec<Expected>,
}

pub fn check_trajectory(config: &TrajectoryConfig) -> Result<(), ConfigError> {
    for (i, entry) in config.tools.iter().enumerate() {
        require_tool(entry.tool(), &format!("tools[{i}]"))?;
    }
    if config.tools.is_empty() && config.mode == Mode::Superset {
        return Err(ConfigError::new(
            "tools",
            "a superset of no tools always passes; list the tools that must be called",
        ));
    }
    Ok(())
}

/// Pairs calls with expected entries, each used once, as many as can be
/// (a maximum bipartite matching, so an order of the entries never makes
/// a pairing fail that exists): which expected entries and which calls
/// stayed unpaired.
fn pair(expected: &[Expected], calls: &[ToolCall]) -> (Vec<usize>, Vec<usize>) {
    let edges: Vec<Vec<usize>> = calls
        .iter()
        .map(|call| {
            (0..expected.len())
                .filter(|&e| expected[e].matches(call))
                .collect()
        })
        .collect();
    // owner[e]: the call paired with expected entry e.
    let mut owner: Vec<Option<usize>> = vec![None; expected.len()];
    fn augment(
        call: usize,
        edges: &[Vec<usize>],
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for &e in &edges[call] {
            if seen[e] {
                continue;
            }
            seen[e] = true;
            if owner[e].is_none_or(|other| augment(other, edges, owner, seen)) {
                owner[e] = Some(call);
                return true;
            }
        }
        false
    }
    for call in 0..calls.len() {
        let mut seen = vec![false; expected.len()];
        augment(call, &edges, &mut owner, &mut seen);
    }
    let missing = (0..expected.len())
        .filter(|&e| owner[e].is_none())
        .collect();
    let extra = (0..calls.len())
        .filter(|c| !owner.contains(&Some(*c)))
        .collect();
    (missing, extra)
}

pub fn trajectory(config: &TrajectoryConfig, calls: &[ToolCall]) -> Verdict {
    let expected = &config.tools;
    let list = |entries: &[usize]| {
        entries
            .iter()
            .map(|&e| expected[e].describe())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let calls_named = |indices: &[usize]| {
        indices
            .iter()
            .map(|&c| format!("`{}` (call {})", calls[c].name, c + 1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match config.mode {
        Mode::Strict => {
            let first_difference = (0..expected.len().max(calls.len())).find(|&i| {
                match (expected.get(i), calls.get(i)) {
                    (Some(e), Some(c)) => !e.matches(c),
                    _ => true,
                }
            });
            Verdict::check(first_difference.is_none(), || {
                let i = first_difference.unwrap_or(0);
                let want = expected
                    .get(i)
                    .map_or("no more calls".into(), Expected::describe);
                let seen = calls
                    .get(i)
                    .map_or("no call".into(), |c| format!("`{}`", c.name));
                format!(
                    "call {} should be {want}, was {seen}; {}",
                    i + 1,
                    names(calls)
                )
            })
        }
        mode => {
            let (missing, extra) = pair(expected, calls);
            let ok = match mode {
                Mode::Unordered => missing.is_empty() && extra.is_empty(),
                Mode::Subset => extra.is_empty(),
                _ => missing.is_empty(),
            };
            Verdict::check(ok, || {
                let mut parts = Vec::new();
                if mode != Mode::Subset && !missing.is_empty() {
                    parts.push(format!("not called: {}", list(&missing)));
                }
                if mode != Mode::Superset && !extra.is_empty() {
                    parts.push(format!("not in `tools`: {}", calls_named(&extra)));
                }
                format!("{}; {}", parts.join("; "), names(calls))
            })
        }
    }
}

/// `tool-order`: `{before, after}`, each a name or `{tool, args?}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderConfig {
    pub before: Expected,
    pub after: Expected,
}

pub fn check_order(config: &OrderConfig) -> Result<(), ConfigError> {
    require_tool(config.before.tool(), "before")?;
    require_tool(config.after.tool(), "after")?;
    if config.before == config.after {
        return Err(ConfigError::new(
            "after",
            "`before` and `after` are the same call, which can never come before itself",
        ));
    }
    Ok(())
}

/// The first call to `before` comes before the first call to `after`; both
/// must have been called.
pub fn order(config: &OrderConfig, calls: &[ToolCall]) -> Verdict {
    let first = |e: &Expected| calls.iter().position(|c| e.matches(c));
    match (first(&config.before), first(&config.after)) {
        (Some(b), Some(a)) => Verdict::check(b < a, || {
            format!(
                "{} (first at call {}) came after {} (first at call {})",
                config.before.describe(),
                b + 1,
                config.after.describe(),
                a + 1
            )
        }),
        (b, a) => {
            let never: Vec<String> = [(b, &config.before), (a, &config.after)]
                .into_iter()
                .filter(|(at, _)| at.is_none())
                .map(|(_, e)| e.describe())
                .collect();
            Verdict::fail(format!(
                "{} never called; {}",
                never.join(" and "),
                names(calls)
            ))
        }
    }
}

/// `tools-succeeded` takes no config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SucceededConfig {}

/// Every call succeeded. `Err` names the calls whose outcome the provider
/// did not capture (the check is then unmeasured, not passed).
pub fn succeeded(calls: &[ToolCall]) -> Result<Verdict, String> {
    let unknown: Vec<String> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.succeeded.is_none())
        .map(|(i, c)| format!("`{}` (call {})", c.name, i + 1))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "whether these calls succeeded: {}",
            unknown.join(", ")
        ));
    }
    let failed: Vec<String> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.succeeded == Some(false))
        .map(|(i, c)| format!("`{}` (call {})", c.name, i + 1))
        .collect();
    Ok(Verdict::check(failed.is_empty(), || {
        format!("failed: {}", failed.join(", "))
    }))
}

/// `tool-count`: `{tool?, args?, min?, max?}` (at least one bound).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountConfig {
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub args: Option<Value>,
    #[serde(default)]
    pub min: Option<u64>,
    #[serde(default)]
    pub max: Option<u64>,
}

pub fn check_count(config: &CountConfig) -> Result<(), ConfigError> {
    if config.min.unwrap_or(0) == 0 && config.max.is_none() {
        return Err(ConfigError::new(
            "min",
            "give `max`, or a `min` above 0 (at least 0 calls always holds)",
        ));
    }
    if let (Some(min), Some(max)) = (config.min, config.max)
        && min > max
    {
        return Err(ConfigError::new(
            "max",
            format!("`max` ({max}) is below `min` ({min})"),
        ));
    }
    if config.args.is_some() && config.tool.is_none() {
        return Err(ConfigError::new("args", "`args` needs `tool`"));
    }
    if let Some(tool) = &config.tool {
        require_tool(tool, "tool")?;
    }
    Ok(())
}

pub fn count(config: &CountConfig, calls: &[ToolCall]) -> Verdict {
    let (n, what) = match &config.tool {
        Some(tool) => {
            let expected = Expected::Call(CallSpec {
                tool: tool.clone(),
                args: config.args.clone(),
            });
            (
                calls.iter().filter(|c| expected.matches(c)).count() as u64,
                format!("calls to {}", expected.describe()),
            )
        }
        None => (calls.len() as u64, "tool calls".to_string()),
    };
    let low = config.min.is_some_and(|min| n < min);
    let high = config.max.is_some_and(|max| n > max);
    Verdict::check(!low && !high, || {
        let bound = match (config.min, config.max) {
            (Some(min), Some(max)) => format!("between {min} and {max}"),
            (Some(min), None) => format!("at least {min}"),
            (None, Some(max)) => format!("at most {max}"),
            (None, None) => unreachable!("checked: a bound is given"),
        };
        format!("{n} {what}, expected {bound}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, args: Option<Value>, ok: Option<bool>) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments: args.map(|a| a.to_string()),
            output: None,
            succeeded: ok,
            duration_ms: None,
        }
    }

    #[test]
    fn arguments_past_the_parser_are_unreadable_only_where_args_are_compared() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(300), "]".repeat(300));
        let calls = [ToolCall {
            arguments: Some(deep),
            ..call("Bash", None, Some(true))
        }];
        let with_args: CalledConfig =
            serde_json::from_value(json!({"tool": "Bash", "args": {"a": 1}})).unwrap();
        let why = unreadable_arguments(&with_args.expected_calls(), &calls).unwrap();
        assert!(
            why.contains("`Bash`") && why.contains("nested 301 levels deep"),
            "{why}"
        );
        let by_name: CalledConfig = serde_json::from_value(json!({"tool": "Bash"})).unwrap();
        assert_eq!(
            unreadable_arguments(&by_name.expected_calls(), &calls),
            None
        );
        let other: CalledConfig =
            serde_json::from_value(json!({"tool": "Read", "args": {"a": 1}})).unwrap();
        assert_eq!(unreadable_arguments(&other.expected_calls(), &calls), None);
        let shallow = [call("Bash", Some(json!({"a": 1})), Some(true))];
        assert_eq!(
            unreadable_arguments(&with_args.expected_calls(), &shallow),
            None
        );
    }

    fn trace() -> Vec<ToolCall> {
        vec![
            call("Read", Some(json!({"file_path": "AGENTS.md"})), Some(true)),
            call(
                "Bash",
                Some(json!({"command": "ls", "timeout": 5})),
                Some(true),
            ),
            call(
                "Read",
                Some(json!({"file_path": "wit/README.md"})),
                Some(false),
            ),
        ]
    }

    fn parse<T: serde::de::DeserializeOwned>(config: Value) -> T {
        serde_json::from_value(config).unwrap()
    }

    #[test]
    fn called_matches_the_name_and_a_partial_argument_object() {
        let calls = trace();
        let pass = |c: Value| called(&parse(c), &calls).passed == Some(true);
        assert!(pass(json!({"tool": "Bash"})));
        assert!(pass(json!({"tool": "Bash", "args": {"command": "ls"}})));
        assert!(pass(
            json!({"tool": "Read", "args": {"file_path": "wit/README.md"}})
        ));
        assert!(!pass(json!({"tool": "Bash", "args": {"command": "rm"}})));
        assert!(!pass(json!({"tool": "bash"})));
        let failed = called(&parse(json!({"tool": "Write"})), &calls);
        assert_eq!(
            failed.detail.as_deref(),
            Some("`Write` was not called; calls: Read, Bash, Read")
        );
        let absent = not_called(&parse(json!({"tool": "Read"})), &calls);
        assert_eq!(
            absent.detail.as_deref(),
            Some("`Read` was called 2 time(s)")
        );
        assert_eq!(
            not_called(&parse(json!({"tool": "Write"})), &calls).passed,
            Some(true)
        );
    }

    #[test]
    fn trajectory_modes() {
        let calls = trace();
        let run = |mode: &str, tools: Value| {
            trajectory(&parse(json!({"mode": mode, "tools": tools})), &calls)
        };
        let exact =
            json!(["Read", "Bash", {"tool": "Read", "args": {"file_path": "wit/README.md"}}]);
        assert_eq!(run("strict", exact.clone()).passed, Some(true));
        assert_eq!(run("unordered", exact).passed, Some(true));
        let reordered = json!(["Bash", "Read", "Read"]);
        let strict = run("strict", reordered.clone());
        assert_eq!(
            strict.detail.as_deref(),
            Some("call 1 should be `Bash`, was `Read`; calls: Read, Bash, Read")
        );
        assert_eq!(run("unordered", reordered).passed, Some(true));
        assert_eq!(run("strict", json!(["Read", "Bash"])).passed, Some(false));
        // subset: nothing outside the list; superset: everything in it.
        assert_eq!(
            run("subset", json!(["Read", "Read", "Bash", "Grep"])).passed,
            Some(true)
        );
        let subset = run("subset", json!(["Read", "Bash"]));
        assert_eq!(
            subset.detail.as_deref(),
            Some("not in `tools`: `Read` (call 3); calls: Read, Bash, Read")
        );
        assert_eq!(run("superset", json!(["Bash"])).passed, Some(true));
        let superset = run("superset", json!(["Bash", "Grep"]));
        assert_eq!(
            superset.detail.as_deref(),
            Some("not called: `Grep`; calls: Read, Bash, Read")
        );
        // An entry with args is paired with the call it describes even when
        // a bare name could take that call first.
        let specific =
            json!(["Read", {"tool": "Read", "args": {"file_path": "AGENTS.md"}}, "Bash"]);
        assert_eq!(run("unordered", specific).passed, Some(true));
    }

    #[test]
    fn order_needs_both_calls_and_the_first_of_before_first() {
        let calls = trace();
        let run = |c: Value| order(&parse(c), &calls);
        assert_eq!(
            run(json!({"before": "Read", "after": "Bash"})).passed,
            Some(true)
        );
        assert_eq!(
            run(json!({"before": "Bash", "after": "Read"}))
                .detail
                .as_deref(),
            Some("`Bash` (first at call 2) came after `Read` (first at call 1)")
        );
        assert_eq!(
            run(json!({"before": {"tool": "Bash"}, "after": {"tool": "Read", "args": {"file_path": "wit/README.md"}}}))
                .passed,
            Some(true)
        );
        assert_eq!(
            run(json!({"before": "Read", "after": "Write"}))
                .detail
                .as_deref(),
            Some("`Write` never called; calls: Read, Bash, Read")
        );
    }

    #[test]
    fn succeeded_fails_on_a_failed_call_and_refuses_an_unknown_outcome() {
        let calls = trace();
        assert_eq!(
            succeeded(&calls).unwrap().detail.as_deref(),
            Some("failed: `Read` (call 3)")
        );
        assert_eq!(succeeded(&calls[..2]).unwrap().passed, Some(true));
        assert_eq!(succeeded(&[]).unwrap().passed, Some(true));
        let unknown = [call("Bash", None, None)];
        assert_eq!(
            succeeded(&unknown).unwrap_err(),
            "whether these calls succeeded: `Bash` (call 1)"
        );
    }

    #[test]
    fn count_bounds_all_calls_or_one_tool() {
        let calls = trace();
        let run = |c: Value| count(&parse(c), &calls);
        assert_eq!(run(json!({"max": 3})).passed, Some(true));
        assert_eq!(
            run(json!({"max": 2})).detail.as_deref(),
            Some("3 tool calls, expected at most 2")
        );
        assert_eq!(
            run(json!({"tool": "Read", "min": 1, "max": 1}))
                .detail
                .as_deref(),
            Some("2 calls to `Read`, expected between 1 and 1")
        );
        assert_eq!(
            run(json!({"tool": "Read", "args": {"file_path": "AGENTS.md"}, "min": 1})).passed,
            Some(true)
        );
    }

    #[test]
    fn bad_configs_name_the_field() {
        let count_error = |c: Value| check_count(&parse(c)).unwrap_err().path;
        assert_eq!(count_error(json!({})), "min");
        assert_eq!(count_error(json!({"min": 0})), "min");
        assert_eq!(count_error(json!({"min": 3, "max": 1})), "max");
        assert_eq!(count_error(json!({"args": {}, "max": 1})), "args");
        assert_eq!(
            check_trajectory(&parse(json!({"mode": "superset", "tools": []})))
                .unwrap_err()
                .path,
            "tools"
        );
        assert_eq!(
            check_trajectory(&parse(json!({"mode": "strict", "tools": ["Read", ""]})))
                .unwrap_err()
                .path,
            "tools[1]"
        );
        assert!(
            serde_json::from_value::<TrajectoryConfig>(json!({"mode": "loose", "tools": []}))
                .is_err()
        );
        assert!(
            serde_json::from_value::<CalledConfig>(json!({"tool": "Read", "arg": {}})).is_err()
        );
    }
}
