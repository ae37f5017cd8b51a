//! A provider that requests `http` to 127.0.0.1 and `process` for `echo`,
//! and makes whichever call the invocation's options ask for (or, through
//! `eval test`, the case's canned result: `{"url": ...}` or `{"program": ...}`).

use cautilus_sdk::provider::{Invocation, Provider, ProviderInfo, http, process};
use cautilus_sdk::{Capability, Observation, PluginError, export_provider, plugin_info};
use serde_json::Value;

pub struct Probe;

fn observation(text: String) -> Observation {
    Observation {
        final_text: Some(text),
        duration_ms: Some(1),
        provider: Some("probe".into()),
        harness: Some("probe".into()),
        mode: Some("messaging".into()),
        ..Observation::empty()
    }
}

impl Provider for Probe {
    fn info() -> ProviderInfo {
        ProviderInfo {
            plugin: plugin_info!(
                Capability::Http(vec!["127.0.0.1".into()]),
                Capability::Process(vec!["echo".into()]),
            ),
            harness: "probe".into(),
            modes: vec!["messaging".into()],
        }
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        let options: Value = serde_json::from_str(request.options.as_deref().unwrap_or("{}"))
            .map_err(|e| PluginError::failed(e.to_string()))?;
        // Through `eval test`, what to do is the case's canned result.
        let options = options.get("canned").cloned().unwrap_or(options);
        if let Some(url) = options.get("url").and_then(Value::as_str) {
            let response = http::send(&http::Request {
                method: "GET".into(),
                url: url.into(),
                headers: vec![http::Header {
                    name: "authorization".into(),
                    value: http::HeaderValue::Secret("token".into()),
                }],
                body: None,
                timeout_ms: Some(5_000),
            })
            .map_err(|e| PluginError::failed(format!("{e:?}")))?;
            return Ok(observation(
                String::from_utf8_lossy(&response.body).into_owned(),
            ));
        }
        if let Some(program) = options.get("program").and_then(Value::as_str) {
            let output = process::run(&process::Command {
                program: program.into(),
                args: vec!["from-the-probe".into()],
                stdin: None,
                cwd: None,
                env: Vec::new(),
                timeout_ms: Some(5_000),
            })
            .map_err(|e| PluginError::failed(format!("{e:?}")))?;
            return Ok(observation(
                String::from_utf8_lossy(&output.stdout).into_owned(),
            ));
        }
        Err(PluginError::failed("give `url` or `program` in options"))
    }
}

export_provider!(Probe);
