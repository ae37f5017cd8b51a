//! What the providers' unit tests build their inputs from.

use cautilus_sdk::Message;
use cautilus_sdk::provider::Invocation;
use cautilus_sdk::provider::process::Output;

/// A one-message invocation of case `case_id` in `mode`.
pub fn invocation(case_id: &str, mode: &str, prompt: &str, options: Option<&str>) -> Invocation {
    Invocation {
        case_id: case_id.into(),
        mode: mode.into(),
        model: None,
        system: None,
        messages: vec![Message {
            role: "user".into(),
            content: prompt.into(),
        }],
        input: None,
        expected: None,
        options: options.map(str::to_string),
    }
}

/// A program's output: `stdout`, exit status 0, nothing else.
pub fn output(stdout: &str) -> Output {
    Output {
        status: Some(0),
        stdout: stdout.as_bytes().to_vec(),
        stderr: Vec::new(),
        timed_out: false,
        truncated: false,
    }
}
