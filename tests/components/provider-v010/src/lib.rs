//! A messaging provider built against `cautilus:plugin@0.1.0` (the frozen
//! WIT in `../wit-0.1.0`), before providers declared their needs: the
//! proof that a provider of an older patch of the line loads and answers
//! on a newer host, declaring nothing. Deliberately small and without the
//! SDK (which follows the current contract): it echoes the last message.

wit_bindgen::generate!({
    path: "../wit-0.1.0",
    world: "provider",
});

use cautilus::plugin::types::{Message, Observation, PluginError, PluginInfo};
use exports::cautilus::plugin::provider_api::{Guest, Invocation, ProviderInfo};

struct Component;

impl Guest for Component {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            plugin: PluginInfo {
                id: "test-provider-v010".into(),
                version: "0.1.0".into(),
                description: "echoes the last message (built against 0.1.0)".into(),
                capabilities: Vec::new(),
            },
            harness: "v010-echo".into(),
            modes: vec!["messaging".into()],
        }
    }

    fn invoke(request: Invocation) -> Result<Observation, PluginError> {
        let text = request
            .messages
            .last()
            .map(|m| format!("echo: {}", m.content))
            .unwrap_or_default();
        let mut messages = request.messages;
        messages.push(Message {
            role: "assistant".into(),
            content: text.clone(),
        });
        Ok(Observation {
            final_text: Some(text),
            messages,
            tool_calls: None,
            usage: None,
            cost_usd: None,
            cost_source: None,
            retries: None,
            duration_ms: Some(1),
            provider: None,
            model: request.model,
            harness: Some("v010-echo".into()),
            mode: Some(request.mode),
            structured: None,
            trace: None,
        })
    }
}

export!(Component);
