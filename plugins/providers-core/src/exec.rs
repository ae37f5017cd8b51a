//! The `exec` provider (harness `exec`): the user's own program answers
//! each case.
//!
//! The host resolves the program the fixture's `exec.command` names (a
//! file next to the fixture, or a program the user granted with
//! `--grant-program`), grants it to this provider alone and passes the
//! resolved command line as option `execArgv` (left out of the call key,
//! which covers `exec` as the fixture wrote it); it runs in a new empty
//! directory with only `PATH` and the granted secrets in its environment,
//! under the same process-tree supervisor as code graders.
//!
//! The program reads the case as one JSON object on stdin
//! ([`stdin_json`]: `caseId`, `mode`, `model`, `system`, `messages`,
//! `input`, `settings`) and answers on stdout: the text itself
//! (`output: text`, the default), or one JSON object (`output: json`,
//! [`answer_of_json`]): `finalText` (or `output`), and optionally `usage`,
//! `costUsd`, `toolCalls`, `model`, `structured`. A program that cannot
//! start, exits non-zero, is killed, times out, prints more than the host
//! keeps, or prints something else than the JSON it promised is a provider
//! error (the case is `errored`), naming the program and quoting its
//! stderr or stdout.

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::process::{self, Command, Output};
use cautilus_sdk::{Observation, PluginError, ToolCall, Usage, excerpt};
use serde_json::{Map, Value, json};

pub const NAME: &str = "exec";
pub const HARNESS: &str = "exec";

/// Characters of a program's stderr or stdout quoted in an error.
const EXCERPT: usize = 400;

/// Most characters of the command as written that an error names.
const WRITTEN_CHARS: usize = 200;
/// The generation settings passed on to the program (every one).
const SETTINGS: &[&str] = &["temperature", "maxTokens", "topP", "seed", "stop"];

/// How the program answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    Text,
    Json,
}

/// What the host tells the provider about the program.
#[derive(Debug, Clone)]
pub struct Config {
    /// The command as the fixture wrote it (for messages).
    pub written: String,
    /// The program and its arguments, resolved by the host.
    pub argv: Vec<String>,
    pub answer: Answer,
    pub timeout_ms: u32,
}

impl Config {
    /// Reads the host's options: `exec` (`{command, output}`), `execArgv`
    /// and `timeoutMs`.
    pub fn of_options(options: &Map<String, Value>) -> Result<Self, PluginError> {
        let exec = options.get("exec").and_then(Value::as_object).ok_or_else(|| {
            PluginError::failed(
                "exec: the suite names no program; add `exec: {command: [./your-app]}` to the fixture",
            )
        })?;
        let strings = |value: Option<&Value>| -> Option<Vec<String>> {
            value?
                .as_array()?
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect()
        };
        // Named in every error: a command of megabytes is named by its start.
        let written = strings(exec.get("command")).unwrap_or_default().join(" ");
        let written = match written.char_indices().nth(WRITTEN_CHARS) {
            Some((cut, _)) => format!("{}…", &written[..cut]),
            None => written,
        };
        let argv = strings(options.get("execArgv"))
            .filter(|argv| !argv.is_empty())
            .ok_or_else(|| {
                PluginError::failed(format!(
                    "exec: the host did not resolve `{written}` (this run answers from a cassette only; run with --replay record-new to call the program)"
                ))
            })?;
        let answer = match exec.get("output").and_then(Value::as_str) {
            None | Some("text") => Answer::Text,
            Some("json") => Answer::Json,
            Some(other) => {
                return Err(PluginError::failed(format!(
                    "exec: unknown `output: {other}`; use text or json"
                )));
            }
        };
        let timeout_ms = options
            .get("timeoutMs")
            .and_then(Value::as_u64)
            .and_then(|t| u32::try_from(t).ok())
            .unwrap_or(60_000);
        Ok(Self {
            written,
            argv,
            answer,
            timeout_ms,
        })
    }
}

/// The case as the program reads it on stdin.
pub fn stdin_json(request: &Invocation, options: &Map<String, Value>) -> Value {
    let input = request
        .input
        .as_deref()
        .map(|text| serde_json::from_str::<Value>(text).unwrap_or_else(|_| json!(text)));
    let settings: Map<String, Value> = options
        .iter()
        .filter(|(key, _)| SETTINGS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    json!({
        "caseId": request.case_id,
        "mode": request.mode,
        "model": request.model,
        "system": request.system,
        "messages": request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect::<Vec<_>>(),
        "input": input,
        "settings": settings,
    })
}

/// The command of one invocation.
pub fn command(request: &Invocation, options: &Map<String, Value>, config: &Config) -> Command {
    Command {
        program: config.argv[0].clone(),
        args: config.argv[1..].to_vec(),
        stdin: Some(stdin_json(request, options).to_string().into_bytes()),
        cwd: None,
        env: Vec::new(),
        timeout_ms: Some(config.timeout_ms),
    }
}

/// Runs one case with the program.
pub fn invoke(request: &Invocation) -> Result<Observation, PluginError> {
    let options = crate::messaging::options("exec", request)?;
    let config = Config::of_options(&options)?;
    let output = process::run(&command(request, &options, &config)).map_err(|error| {
        let why = match error {
            process::ProcessError::NotFound(_) => "it was not found".to_string(),
            process::ProcessError::Denied(why) | process::ProcessError::Failed(why) => why,
        };
        PluginError::failed(format!("exec: cannot run `{}`: {why}", config.written))
    })?;
    observation(request, &output, &config)
}

/// `; stderr: "…"` (else stdout) for an error, or nothing when both are empty.
fn said(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    match (stderr.trim(), stdout.trim()) {
        ("", "") => String::new(),
        ("", stdout) => format!("; stdout: {}", excerpt(stdout, EXCERPT)),
        (stderr, _) => format!("; stderr: {}", excerpt(stderr, EXCERPT)),
    }
}

/// The observation of a finished run of the program.
pub fn observation(
    request: &Invocation,
    output: &Output,
    config: &Config,
) -> Result<Observation, PluginError> {
    let program = &config.written;
    if output.timed_out {
        return Err(PluginError::failed(format!(
            "exec: `{program}` did not answer within {} ms and was ended with every process it started (raise `exec.timeoutMs` or --timeout-ms){}",
            config.timeout_ms,
            said(output)
        )));
    }
    match output.status {
        Some(0) => {}
        Some(code) => {
            return Err(PluginError::failed(format!(
                "exec: `{program}` exited with status {code}{}",
                said(output)
            )));
        }
        None => {
            return Err(PluginError::failed(format!(
                "exec: `{program}` was killed by a signal{}",
                said(output)
            )));
        }
    }
    if output.truncated {
        return Err(PluginError::failed(format!(
            "exec: `{program}` printed more than the host keeps of a program's output ({} bytes kept): answer in fewer bytes, or raise the limit with --output-mib",
            output.stdout.len()
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut observed = Observation {
        harness: Some(HARNESS.into()),
        mode: Some("messaging".into()),
        ..Observation::empty()
    };
    let text = match config.answer {
        Answer::Text => stdout.trim_end_matches(['\n', '\r']).to_string(),
        Answer::Json => {
            let answer = serde_json::from_str::<Value>(stdout.trim()).map_err(|e| {
                PluginError::failed(format!(
                    "exec: `{program}` promised JSON (`output: json`) but printed {}: {e}",
                    excerpt(stdout.trim(), EXCERPT)
                ))
            })?;
            answer_of_json(&answer, &mut observed)
                .map_err(|why| PluginError::failed(format!("exec: `{program}` answered {why}")))?
        }
    };
    // The presets need an answer to judge: an empty one is the program's
    // mistake, said as such (not a preset's "missing field").
    if text.trim().is_empty() {
        let what = match config.answer {
            Answer::Text => "printed no answer on stdout".to_string(),
            Answer::Json => "answered an empty `finalText`".to_string(),
        };
        return Err(PluginError::failed(format!(
            "exec: `{program}` {what}{}",
            said(output)
        )));
    }
    observed.messages = crate::prompt::with_answer(&request.messages, &text);
    observed.final_text = Some(text);
    Ok(observed)
}

/// Reads a JSON answer into `observed`; its final text, or what is wrong.
pub fn answer_of_json(answer: &Value, observed: &mut Observation) -> Result<String, String> {
    let Some(answer) = answer.as_object() else {
        return Err(format!(
            "{}, not a JSON object with `finalText`",
            excerpt(&answer.to_string(), EXCERPT)
        ));
    };
    let text = ["finalText", "output"]
        .iter()
        .find_map(|key| answer.get(*key))
        .ok_or("a JSON object without `finalText` (or `output`)")?
        .as_str()
        .ok_or("a `finalText` that is not a string")?
        .to_string();
    let field = |key: &str| answer.get(key).filter(|v| !v.is_null());
    if let Some(model) = field("model") {
        observed.model = Some(
            model
                .as_str()
                .ok_or("a `model` that is not a string")?
                .to_string(),
        );
    }
    if let Some(cost) = field("costUsd") {
        let cost = cost
            .as_f64()
            .filter(|c| c.is_finite() && *c >= 0.0)
            .ok_or("a `costUsd` that is not a number of 0 or more")?;
        observed.cost_usd = Some(cost);
        observed.cost_source = Some("reported".into());
    }
    if let Some(usage) = field("usage") {
        observed.usage = Some(usage_of(usage)?);
    }
    if let Some(calls) = field("toolCalls") {
        observed.tool_calls = Some(tool_calls_of(calls)?);
    }
    observed.structured = field("structured").map(Value::to_string);
    Ok(text)
}

fn usage_of(usage: &Value) -> Result<Usage, String> {
    let usage = usage.as_object().ok_or("a `usage` that is not an object")?;
    let count = |key: &str| -> Result<Option<u64>, String> {
        match usage.get(key).filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or(format!(
                "a `usage.{key}` that is not a whole number of 0 or more"
            )),
        }
    };
    Ok(Usage {
        input_tokens: count("inputTokens")?,
        output_tokens: count("outputTokens")?,
        cached_input_tokens: count("cachedInputTokens")?,
        reasoning_tokens: count("reasoningTokens")?,
        llm_calls: count("llmCalls")?.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
    })
}

pub(crate) fn tool_calls_of(calls: &Value) -> Result<Vec<ToolCall>, String> {
    let calls = calls.as_array().ok_or("a `toolCalls` that is not a list")?;
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let bad = |what: &str| format!("a `toolCalls[{i}]` {what}");
            let call = call
                .as_object()
                .ok_or_else(|| bad("that is not an object"))?;
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("without a `name` string"))?;
            Ok(ToolCall {
                name: name.to_string(),
                arguments: call
                    .get("arguments")
                    .filter(|v| !v.is_null())
                    .map(Value::to_string),
                output: match call.get("output") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(other) => Some(other.to_string()),
                },
                succeeded: call.get("succeeded").and_then(Value::as_bool),
                duration_ms: call.get("durationMs").and_then(Value::as_u64),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{invocation, output};

    fn config(answer: Answer) -> Config {
        Config {
            written: "./app.py".into(),
            argv: vec!["/fx/app.py".into(), "--fast".into()],
            answer,
            timeout_ms: 5000,
        }
    }

    fn options(text: &str) -> Map<String, Value> {
        match serde_json::from_str(text).unwrap() {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_program_reads_the_case_and_every_setting_on_stdin() {
        let mut request = invocation("faq-1", "messaging", "Hi", None);
        request.input = Some("{\"question\":\"Hi\"}".into());
        request.system = Some("Be brief.".into());
        let options = options(
            r#"{"exec":{"command":["./app.py"]},"execArgv":["/fx/app.py","--fast"],"timeoutMs":900,"temperature":0.2,"stop":["x"],"canned":1}"#,
        );
        let config = Config::of_options(&options).unwrap();
        assert_eq!(config.timeout_ms, 900);
        let command = command(&request, &options, &config);
        assert_eq!(
            (command.program.as_str(), command.args.as_slice()),
            ("/fx/app.py", &["--fast".to_string()][..])
        );
        assert!(command.env.is_empty() && command.cwd.is_none());
        let stdin: Value = serde_json::from_slice(command.stdin.as_deref().unwrap()).unwrap();
        assert_eq!(
            stdin,
            json!({"caseId": "faq-1", "mode": "messaging", "model": null, "system": "Be brief.",
                "messages": [{"role": "user", "content": "Hi"}], "input": {"question": "Hi"},
                "settings": {"temperature": 0.2, "stop": ["x"]}})
        );
    }

    #[test]
    fn options_without_a_program_or_with_an_unknown_output_are_refused() {
        for (text, expected) in [
            (r#"{}"#, "the suite names no program"),
            (r#"{"exec":{"command":["./a"]}}"#, "did not resolve `./a`"),
            (
                r#"{"exec":{"command":["./a"],"output":"xml"},"execArgv":["/a"]}"#,
                "unknown `output: xml`",
            ),
        ] {
            let error = Config::of_options(&options(text)).unwrap_err();
            assert!(format!("{error:?}").contains(expected), "{text}: {error:?}");
        }
    }

    #[test]
    fn a_text_answer_is_the_final_text_without_its_last_newline() {
        let request = invocation("c", "messaging", "Hi", None);
        let observed = observation(&request, &output("Hello.\n\n"), &config(Answer::Text)).unwrap();
        assert_eq!(observed.final_text.as_deref(), Some("Hello."));
        assert_eq!(observed.messages.len(), 2);
        assert_eq!(observed.harness.as_deref(), Some("exec"));
        assert!(observed.tool_calls.is_none() && observed.usage.is_none());
    }

    #[test]
    fn a_json_answer_gives_text_usage_cost_and_tool_calls() {
        let request = invocation("c", "messaging", "Hi", None);
        let stdout = r#"{"output":"Hello","model":"faq-v2","costUsd":0.5,"usage":{"inputTokens":3,"outputTokens":2},
            "toolCalls":[{"name":"search","arguments":{"q":"x"},"output":"found","succeeded":true}],"structured":{"a":1}}"#;
        let observed = observation(&request, &output(stdout), &config(Answer::Json)).unwrap();
        assert_eq!(observed.final_text.as_deref(), Some("Hello"));
        assert_eq!(observed.model.as_deref(), Some("faq-v2"));
        assert_eq!(
            (observed.cost_usd, observed.cost_source.as_deref()),
            (Some(0.5), Some("reported"))
        );
        let usage = observed.usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(3), Some(2))
        );
        let calls = observed.tool_calls.unwrap();
        assert_eq!(calls[0].name, "search");
        assert_eq!(calls[0].arguments.as_deref(), Some(r#"{"q":"x"}"#));
        assert_eq!(observed.structured.as_deref(), Some(r#"{"a":1}"#));
    }

    #[test]
    fn every_failure_of_the_program_is_an_error_naming_it() {
        let request = invocation("c", "messaging", "Hi", None);
        let with = |edit: &dyn Fn(&mut Output)| {
            let mut out = output("partial");
            edit(&mut out);
            out
        };
        let rows: Vec<(Output, Answer, &str)> = vec![
            (
                with(&|o| {
                    o.status = Some(3);
                    o.stderr = b"Traceback: boom".to_vec();
                }),
                Answer::Text,
                "exec: `./app.py` exited with status 3; stderr: \"Traceback: boom\"",
            ),
            (
                with(&|o| o.status = Some(1)),
                Answer::Text,
                "exited with status 1; stdout: \"partial\"",
            ),
            (
                with(&|o| o.status = None),
                Answer::Text,
                "was killed by a signal",
            ),
            (
                with(&|o| {
                    o.timed_out = true;
                    o.status = None;
                }),
                Answer::Text,
                "did not answer within 5000 ms and was ended with every process it started",
            ),
            (
                with(&|o| o.truncated = true),
                Answer::Text,
                "printed more than the host keeps",
            ),
            (
                with(&|o| {
                    o.stdout = b"\n".to_vec();
                    o.stderr = b"no index".to_vec();
                }),
                Answer::Text,
                "printed no answer on stdout; stderr: \"no index\"",
            ),
            (
                output(r#"{"finalText":"  "}"#),
                Answer::Json,
                "answered an empty `finalText`",
            ),
            (
                output("not json"),
                Answer::Json,
                "promised JSON (`output: json`) but printed \"not json\"",
            ),
            (
                output("[1]"),
                Answer::Json,
                "not a JSON object with `finalText`",
            ),
            (
                output("{}"),
                Answer::Json,
                "without `finalText` (or `output`)",
            ),
            (
                output(r#"{"finalText":1}"#),
                Answer::Json,
                "`finalText` that is not a string",
            ),
            (
                output(r#"{"finalText":"a","usage":{"inputTokens":-1}}"#),
                Answer::Json,
                "`usage.inputTokens` that is not a whole number",
            ),
            (
                output(r#"{"finalText":"a","costUsd":"1"}"#),
                Answer::Json,
                "`costUsd` that is not a number",
            ),
            (
                output(r#"{"finalText":"a","toolCalls":[{"arguments":{}}]}"#),
                Answer::Json,
                "`toolCalls[0]` without a `name` string",
            ),
        ];
        for (out, answer, expected) in rows {
            let error = observation(&request, &out, &config(answer)).unwrap_err();
            let PluginError::Failed(message) = error else {
                panic!("{error:?}")
            };
            assert!(message.contains(expected), "{expected}: {message}");
            assert!(message.contains("`./app.py`"), "{message}");
        }
    }
}
