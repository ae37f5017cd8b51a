//! Each host import is allowed only when the plugin requested the capability
//! and the run granted it: one allowed and denied tests per capability.

use std::collections::BTreeMap;
use std::sync::Arc;

use cautilus::plugin::bindings::model::{GenerateRequest, GenerateResponse, ModelError};
use cautilus::plugin::bindings::provider_api::Invocation;
use cautilus::plugin::oneshot::invoke_provider;
use cautilus::plugin::{Grants, Limits, ModelBackend};
use cautilus_tests::LoopbackServer;
use serde_json::json;

use crate::support::{component, input, registry, session_with};

/// A deterministic model: answers `echo: <last message>`.
struct EchoModel;

impl ModelBackend for EchoModel {
    fn generate(&self, request: &GenerateRequest) -> Result<GenerateResponse, ModelError> {
        let last = request
            .messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        Ok(GenerateResponse {
            text: format!("echo: {last}"),
            model: "echo".into(),
            usage: None,
            cost_usd: None,
        })
    }
}

fn with_model() -> Grants {
    Grants {
        model: Some(Arc::new(EchoModel)),
        ..Grants::default()
    }
}

#[test]
fn model_allowed_when_requested_and_granted() {
    let mut session = session_with(
        &component("judge-probe"),
        json!({}),
        Limits::default(),
        with_model(),
    )
    .unwrap();
    let score = session.score(&input("bonjour", None)).unwrap();
    assert_eq!(score.passed, Some(true), "{score:?}");
    assert_eq!(score.label.as_deref(), Some("echo: bonjour"));
}

#[test]
fn model_denied_when_the_run_grants_none() {
    let mut session = session_with(
        &component("judge-probe"),
        json!({}),
        Limits::default(),
        Grants::default(),
    )
    .unwrap();
    let score = session.score(&input("bonjour", None)).unwrap();
    let detail = score.detail.unwrap();
    assert!(
        detail.contains("Denied") && detail.contains("grants no model"),
        "{detail}"
    );
}

#[test]
fn model_denied_when_the_plugin_did_not_request_it() {
    let mut session = session_with(
        &component("hostile"),
        json!({}),
        Limits::default(),
        with_model(),
    )
    .unwrap();
    let score = session.score(&input("ask-model", None)).unwrap();
    let detail = score.detail.unwrap();
    assert!(
        detail.contains("Denied") && detail.contains("did not request `model` in its describe"),
        "{detail}"
    );
}

fn invocation(options: serde_json::Value) -> Invocation {
    Invocation {
        case_id: "c1".into(),
        mode: "messaging".into(),
        model: None,
        system: None,
        messages: Vec::new(),
        input: None,
        expected: None,
        options: Some(options.to_string()),
    }
}

/// Asks the provider probe to make the call described by `options` under `grants`.
fn probe(
    options: serde_json::Value,
    grants: Grants,
) -> Result<cautilus::plugin::Observation, cautilus::plugin::PluginError> {
    invoke_provider(
        &provider(),
        &invocation(options),
        &Limits::default(),
        Arc::new(grants),
    )
}

fn provider() -> Arc<cautilus::plugin::Plugin> {
    registry()
        .load_path(&cautilus_tests::component("provider-probe"))
        .unwrap()
}

#[test]
fn http_allowed_to_a_granted_host_with_an_injected_secret() {
    let server = LoopbackServer::start("hello from loopback");
    let grants = Grants {
        http_hosts: vec!["127.0.0.1".into()],
        // The secret's value comes from the host's environment, never from the plugin.
        secrets: BTreeMap::from([("token".to_string(), "CARGO_PKG_NAME".to_string())]),
        ..Grants::default()
    };
    let observation = probe(json!({"url": server.url}), grants).unwrap();
    assert_eq!(
        observation.final_text.as_deref(),
        Some("hello from loopback")
    );
    let headers = server.request().expect("the request arrived");
    let expected = format!("authorization: {}", env!("CARGO_PKG_NAME"));
    assert!(
        headers.iter().any(|h| h.eq_ignore_ascii_case(&expected)),
        "{headers:?}"
    );
}

#[test]
fn a_server_echoing_the_secret_it_was_sent_never_shows_it_to_the_plugin() {
    // The probe returns the body as it got it: the host scrubbed the
    // secret's value (here `CARGO_PKG_NAME`'s) before handing it over.
    let secret = env!("CARGO_PKG_NAME");
    let body = format!("bad key {}, not {secret}x", secret.to_uppercase());
    let server = LoopbackServer::start(Box::leak(body.into_boxed_str()));
    let grants = Grants {
        http_hosts: vec!["127.0.0.1".into()],
        secrets: BTreeMap::from([("token".to_string(), "CARGO_PKG_NAME".to_string())]),
        ..Grants::default()
    };
    let observation = probe(json!({"url": server.url}), grants).unwrap();
    assert_eq!(
        observation.final_text.as_deref(),
        Some("bad key [redacted], not [redacted]x")
    );
}

#[test]
fn http_denied_without_a_grant() {
    let error = probe(
        json!({"url": "http://127.0.0.1:9/never"}),
        Grants::default(),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("Denied(\"this run does not grant http access to `127.0.0.1`\")"),
        "{error}"
    );
}

#[test]
fn http_denied_to_a_host_the_plugin_did_not_request() {
    let grants = Grants {
        http_hosts: vec!["localhost".into()],
        ..Grants::default()
    };
    let error = probe(json!({"url": "http://localhost:9/x"}), grants).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("did not request `http:localhost`"),
        "{error}"
    );
}

#[test]
fn process_allowed_when_granted() {
    let grants = Grants {
        programs: vec!["echo".into()],
        ..Grants::default()
    };
    let observation = probe(json!({"program": "echo"}), grants).unwrap();
    assert_eq!(observation.final_text.as_deref(), Some("from-the-probe\n"));
}

#[test]
fn process_denied_without_a_grant() {
    let error = probe(json!({"program": "echo"}), Grants::default()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("this run does not grant running `echo`"),
        "{error}"
    );
    let grants = Grants {
        programs: vec!["sh".into()],
        ..Grants::default()
    };
    let error = probe(json!({"program": "sh"}), grants).unwrap_err();
    assert!(
        error.to_string().contains("did not request `process:sh`"),
        "{error}"
    );
}

#[test]
fn http_checks_the_host_the_transport_really_uses() {
    // A backslash ends the authority for URL parsers: this URL goes to
    // `evil.invalid`, not to the granted 127.0.0.1.
    let grants = Grants {
        http_hosts: vec!["127.0.0.1".into()],
        ..Grants::default()
    };
    let error = probe(json!({"url": "http://evil.invalid\\@127.0.0.1/"}), grants).unwrap_err();
    assert!(error.to_string().contains("`http:evil.invalid`"), "{error}");
    assert!(error.to_string().contains("Denied"), "{error}");
}

#[test]
fn a_pack_plugin_is_held_to_what_its_pack_was_granted_at_install() {
    use cautilus::pack::Capability as Granted;
    // The probe requests `http:127.0.0.1` and `process:echo`; its pack was
    // granted the host only. The run grants both.
    let packed = Arc::new(
        provider().with_ceiling(vec![Granted::Http("127.0.0.1".into())], "acme@1.0.0".into()),
    );
    let grants = Arc::new(Grants {
        http_hosts: vec!["127.0.0.1".into()],
        programs: vec!["echo".into()],
        secrets: BTreeMap::from([("token".to_string(), "CARGO_PKG_NAME".to_string())]),
        ..Grants::default()
    });
    let call = |options: serde_json::Value| {
        invoke_provider(
            &packed,
            &invocation(options),
            &Limits::default(),
            grants.clone(),
        )
    };
    let server = LoopbackServer::start("within the pack's grant");
    let observation = call(json!({"url": server.url})).unwrap();
    assert_eq!(
        observation.final_text.as_deref(),
        Some("within the pack's grant")
    );
    let error = call(json!({"program": "echo"})).unwrap_err().to_string();
    assert!(
        error.contains(
            "may not use `process:echo`: it did not request it, or its pack acme@1.0.0 was not granted it at install (`cautilus pack install <source> --grant process:echo`)"
        ),
        "{error}"
    );
}
