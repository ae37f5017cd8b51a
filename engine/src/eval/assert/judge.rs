//! The judge model of a suite (`judge: {provider, model}`): the model
//! behind the host `model` import, granted to judge scorers of that suite
//! only. Calls go through the named provider component, so a judge scorer
//! never sees keys or endpoints; the `fixture` provider answers judge
//! calls deterministically (for tests).
//!
//! Plain-string assertions (natural-language criteria) are graded by the
//! built-in `judge` scorer with this model; without a `judge:` they are a
//! definition error that says how to configure one.
//!
//! The `model` import's `embed` goes to the same provider's
//! `provider-embed` export (refused naming the provider when it has none);
//! its calls are recorded and replayed, and counted in the judge's spend,
//! here in the host, like `generate` calls.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::assert::judge_config::JudgeConfig;
use crate::eval::assert::judge_spend::SPEND;
use crate::plugin::bindings::model::{
    EmbedRequest, EmbedResponse, GenerateRequest, GenerateResponse, ModelError,
};
use crate::plugin::bindings::provider_api::Invocation;
use crate::plugin::bindings::provider_embed::{
    EmbedRequest as ProviderEmbedRequest, EmbedResponse as ProviderEmbedResponse,
};
use crate::plugin::bindings::types::Message;
use crate::plugin::provider::ProviderSession;
use crate::plugin::{Description, Grants, Limits, ModelBackend, Observation, Plugin, Registry};

/// A judge model served by a provider component. Sessions are pooled, one
/// per concurrent caller.
pub struct JudgeModel {
    plugin: Arc<Plugin>,
    model: String,
    limits: Limits,
    /// What the provider is granted (an API provider: its endpoint's host
    /// and key) and told on every call.
    grants: Arc<Grants>,
    options: Map<String, Value>,
    /// Where calls are recorded or replayed from (`--replay`), if anywhere.
    cassette: Option<Arc<crate::eval::provider::cassette::Cassette>>,
    /// The values of the secrets its provider is granted (for redaction).
    secrets: Vec<String>,
    /// Which costs of its live calls stand.
    pricing: crate::eval::provider::pricing::Pricing,
    /// The empty directory a CLI judge runs in, kept while the judge lives.
    _scratch: Option<tempfile::TempDir>,
    idle: Mutex<Vec<ProviderSession>>,
}

impl JudgeModel {
    /// The limits of every judge call (and of the scorers it is granted to).
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn new(
        registry: &Registry,
        config: &JudgeConfig,
        limits: Limits,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, EvalError> {
        let setup = crate::eval::provider::setup::setup(
            registry,
            &config.provider,
            &crate::eval::provider::setup::GrantFlags::default(),
            u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
            env,
        )?;
        Self::from_setup(config, limits, setup)
    }

    /// A judge served by `setup`'s provider, its world checked now, before
    /// any case runs.
    fn from_setup(
        config: &JudgeConfig,
        limits: Limits,
        setup: crate::eval::provider::setup::ProviderSetup,
    ) -> Result<Self, EvalError> {
        let secrets = setup.secret_values();
        let grants = Arc::new(setup.grants);
        ProviderSession::new(setup.plugin.clone(), limits.clone(), grants.clone())?;
        Ok(Self {
            plugin: setup.plugin,
            model: config.model.clone(),
            limits,
            grants,
            options: setup.options,
            cassette: None,
            secrets,
            pricing: setup.pricing,
            _scratch: setup.scratch,
            idle: Mutex::new(Vec::new()),
        })
    }
}

impl JudgeModel {
    /// The judge of a suite checked offline (`eval validate`): its provider
    /// is resolved and its world checked, and nothing will call it, so its
    /// endpoint and key are not looked for.
    pub fn offline(registry: &Registry, config: &JudgeConfig) -> Result<Self, EvalError> {
        let setup = crate::eval::provider::setup::denied(registry, &config.provider)?;
        Self::from_setup(config, Limits::default(), setup)
    }
}

impl JudgeModel {
    /// The judge of a run, as a suite and `cautilus score` build it. With
    /// no `limits` nothing will call it (offline validation), and with a
    /// `replay-strict` cassette every call replays: then its endpoint and
    /// key are not looked for. Otherwise they are read from the
    /// environment, else from `provider_env` (a project's
    /// `[providers.*]`). Its calls are recorded in or replayed from
    /// `cassette`.
    pub fn for_run(
        registry: &Registry,
        config: &JudgeConfig,
        limits: Option<&Limits>,
        cassette: Option<Arc<crate::eval::provider::cassette::Cassette>>,
        provider_env: &std::collections::BTreeMap<String, String>,
    ) -> Result<Self, EvalError> {
        let strict = cassette
            .as_ref()
            .is_some_and(|c| c.mode() == crate::eval::provider::cassette::ReplayMode::ReplayStrict);
        Ok(match limits {
            Some(_) if strict => Self::offline(registry, config)?.with_cassette(cassette),
            Some(limits) => Self::new(registry, config, limits.clone(), &|name| {
                std::env::var(name)
                    .ok()
                    .filter(|v| !v.trim().is_empty())
                    .or_else(|| provider_env.get(name).cloned())
            })?
            .with_cassette(cassette),
            None => Self::offline(registry, config)?,
        })
    }

    /// What a scorer that requested `model` is granted: this judge, and
    /// nothing else. (A scorer that did not request it is granted nothing;
    /// the host refuses its model calls either way.)
    pub fn scorer_grants(self: &Arc<Self>) -> Grants {
        Grants {
            model: Some(self.clone()),
            ..Grants::default()
        }
    }

    /// A pooled session of the judge's provider, or a new one.
    fn session(&self) -> Result<ProviderSession, String> {
        let pooled = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        match pooled {
            Some(session) => Ok(session),
            None => ProviderSession::new(
                self.plugin.clone(),
                self.limits.clone(),
                self.grants.clone(),
            )
            .map_err(|e| e.to_string()),
        }
    }

    /// Returns `session` to the pool.
    fn pool(&self, session: ProviderSession) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(session);
        }
    }

    /// One call through a pooled session of the judge's provider.
    async fn invoke(&self, invocation: &Invocation) -> Result<Observation, String> {
        let mut session = self.session()?;
        let result = session
            .invoke(invocation)
            .await
            .map(|o| self.pricing.apply(o))
            .map_err(|e| e.to_string());
        self.pool(session);
        result
    }

    /// One `provider-embed` call through a pooled session of the judge's
    /// provider (which has one: its description says so).
    async fn embed_live(
        &self,
        request: &ProviderEmbedRequest,
    ) -> Result<ProviderEmbedResponse, String> {
        let mut session = self.session()?;
        let result = session.embed(request).await.map_err(|e| e.to_string());
        self.pool(session);
        result?.ok_or_else(|| no_embeddings(self.plugin.id()))
    }

    /// A call answered from the cassette when there is one (recorded or
    /// replayed by kind), else live; run to completion from the scorer's
    /// synchronous guest call.
    fn answer(
        &self,
        kind: &str,
        adapter: &str,
        invocation: &Invocation,
        live: impl std::future::Future<Output = (Result<Observation, String>, u64)>,
    ) -> Result<Observation, String> {
        crate::plugin::io::block_on(async {
            match &self.cassette {
                Some(cassette) => cassette.answer(kind, adapter, invocation, 0, live).await,
                None => live.await.0,
            }
        })
    }

    /// Records or replays its calls in `cassette` (kind `model`).
    pub fn with_cassette(
        mut self,
        cassette: Option<Arc<crate::eval::provider::cassette::Cassette>>,
    ) -> Self {
        if let Some(cassette) = &cassette {
            cassette.add_secrets(self.secrets.clone());
        }
        self.cassette = cassette;
        self
    }
}

impl ModelBackend for JudgeModel {
    fn generate(&self, request: &GenerateRequest) -> Result<GenerateResponse, ModelError> {
        let model = request.model.clone().unwrap_or_else(|| self.model.clone());
        let mut options = self.options.clone();
        let judge = json!({
            "purpose": "judge",
            "temperature": request.temperature,
            "maxTokens": request.max_tokens,
            "responseSchema": request
                .response_schema
                .as_deref()
                .and_then(|s| serde_json::from_str::<Value>(s).ok()),
        });
        if let Value::Object(judge) = judge {
            options.extend(judge.into_iter().filter(|(_, v)| !v.is_null()));
        }
        let invocation = Invocation {
            case_id: "judge".into(),
            mode: "messaging".into(),
            model: Some(model.clone()),
            system: request.system.clone(),
            messages: request.messages.clone(),
            input: None,
            expected: None,
            options: Some(Value::Object(options).to_string()),
        };
        let live = async {
            let started = std::time::Instant::now();
            let outcome = self.invoke(&invocation).await;
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            (outcome, ms)
        };
        let result = self.answer("model", self.plugin.id(), &invocation, live);
        let observation = result
            .map(|o| crate::eval::provider::observation_scrub::scrub_observation(o, &self.secrets))
            .map_err(|e| {
                ModelError::Failed(format!(
                    "judge provider `{}`: {}",
                    self.plugin.id(),
                    crate::secrets::scrub(&e, &self.secrets)
                ))
            })?;
        let text = observation.final_text.ok_or_else(|| {
            ModelError::Failed(format!(
                "judge provider `{}` returned no final text",
                self.plugin.id()
            ))
        })?;
        let response = GenerateResponse {
            text,
            model: observation.model.unwrap_or(model),
            usage: observation.usage,
            cost_usd: observation.cost_usd,
        };
        SPEND.with(|spend| {
            let mut total = spend.get();
            total.add(&response);
            spend.set(total);
        });
        Ok(response)
    }

    fn embed(&self, request: &EmbedRequest) -> Result<EmbedResponse, ModelError> {
        // A judge's plugin is a provider (checked in `from_setup`).
        let Description::Provider(provider) = &self.plugin.description else {
            return Err(ModelError::Unavailable(no_embeddings(self.plugin.id())));
        };
        let Some(embedder) = &provider.embedder else {
            return Err(ModelError::Unavailable(no_embeddings(self.plugin.id())));
        };
        let model = request
            .model
            .clone()
            .unwrap_or_else(|| embedder.default_model.clone());
        let call = ProviderEmbedRequest {
            model: model.clone(),
            inputs: request.inputs.clone(),
            options: Some(Value::Object(self.options.clone()).to_string()),
        };
        let failed = |e: String| {
            ModelError::Failed(format!(
                "embeddings: {}",
                crate::secrets::scrub(&e, &self.secrets)
            ))
        };
        // A provider that reaches nothing outside its sandbox computes its
        // vectors: nothing to record, no model call to count.
        if !provider.reaches_out() {
            return crate::plugin::io::block_on(self.embed_live(&call))
                .map(|embedded| EmbedResponse {
                    vectors: embedded.vectors,
                    model: embedded.model,
                    usage: embedded.usage,
                    cost_usd: embedded.cost_usd,
                })
                .map_err(failed);
        }
        // Recorded and replayed like a generate call, keyed by the texts.
        let invocation = Invocation {
            case_id: "embed".into(),
            mode: "messaging".into(),
            model: Some(model.clone()),
            system: None,
            messages: request
                .inputs
                .iter()
                .map(|text| Message {
                    role: "user".into(),
                    content: text.clone(),
                })
                .collect(),
            input: None,
            expected: None,
            options: Some(json!({"purpose": "embed"}).to_string()),
        };
        let live = async {
            let started = std::time::Instant::now();
            let outcome = self.embed_live(&call).await.map(|embedded| {
                let mut observation = Observation::empty();
                observation.structured = Some(json!(embedded.vectors).to_string());
                observation.model = Some(embedded.model);
                observation.usage = embedded.usage;
                observation.cost_usd = embedded.cost_usd;
                observation
            });
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            (outcome, ms)
        };
        let result = self.answer("embed", self.plugin.id(), &invocation, live);
        let observation = result
            .map(|o| crate::eval::provider::observation_scrub::scrub_observation(o, &self.secrets))
            .map_err(failed)?;
        SPEND.with(|spend| {
            let mut total = spend.get();
            total.calls += 1;
            total.input_tokens += observation
                .usage
                .as_ref()
                .and_then(|u| u.input_tokens)
                .unwrap_or(0);
            if let Some(usd) = observation.cost_usd {
                total.cost_usd = Some(total.cost_usd.unwrap_or(0.0) + usd);
            }
            spend.set(total);
        });
        let vectors: Vec<Vec<f32>> = observation
            .structured
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
            .ok_or_else(|| ModelError::Failed("embeddings: no vectors in the answer".into()))?;
        Ok(EmbedResponse {
            vectors,
            model: observation.model.unwrap_or(model),
            usage: observation.usage,
            cost_usd: observation.cost_usd,
        })
    }
}

/// Why a judge whose provider gives no embeddings cannot embed.
fn no_embeddings(provider: &str) -> String {
    format!(
        "the judge provider `{}` does not provide embeddings; judge with a provider that does (`cautilus plugin inspect <provider> --json` shows `provider.embeddings`)",
        crate::term::inline(provider)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::assert::judge_spend::take_spend;
    use crate::plugin::registry::test_registry as registry;

    #[test]
    fn a_judge_flag_is_provider_then_model() {
        let parsed = |v: &str| JudgeConfig::parse_flag(v).map(|j| (j.provider, j.model));
        let pair = |p: &str, m: &str| Ok((p.to_string(), m.to_string()));
        assert_eq!(parsed("openai/gpt-5-mini"), pair("openai", "gpt-5-mini"));
        assert_eq!(parsed("openai:gpt-5-mini"), pair("openai", "gpt-5-mini"));
        assert_eq!(parsed("openai/llama3:8b"), pair("openai", "llama3:8b"));
        assert_eq!(
            parsed("openai:meta/llama-3"),
            pair("openai", "meta/llama-3")
        );
        assert_eq!(parsed("./judge.wasm:m"), pair("./judge.wasm", "m"));
        assert_eq!(parsed("dir/judge.wasm:m/x"), pair("dir/judge.wasm", "m/x"));
        for bad in ["openai", "openai/", "openai: ", "/m", ":m", "./x:m"] {
            let error = parsed(bad).unwrap_err();
            assert!(error.contains("PROVIDER/MODEL"), "{bad}: {error}");
        }
    }

    #[test]
    fn judge_config_is_checked() {
        let ok = JudgeConfig::parse(&json!({"provider": "fixture", "model": "m"})).unwrap();
        assert_eq!(ok.model, "m");
        let (path, message) = JudgeConfig::parse(&json!({"provider": "fixture"})).unwrap_err();
        assert_eq!(path, "judge.model");
        assert!(message.contains("judge: {provider"));
        assert_eq!(
            JudgeConfig::parse(&json!({"provider": "f", "model": "m", "x": 1}))
                .unwrap_err()
                .0,
            "judge.x"
        );
    }

    fn judge(provider: &str) -> JudgeModel {
        let config = JudgeConfig {
            provider: provider.into(),
            model: "m".into(),
        };
        JudgeModel::offline(registry(), &config).unwrap()
    }

    fn embed_request() -> EmbedRequest {
        EmbedRequest {
            model: None,
            inputs: vec!["Hello Ada".into(), "welcome back".into()],
        }
    }

    #[test]
    fn a_judge_whose_provider_gives_no_embeddings_is_refused_naming_it() {
        for provider in [
            "anthropic",
            "claude-cli",
            "codex-cli",
            "claude-code",
            "codex",
        ] {
            let error = judge(provider).embed(&embed_request()).unwrap_err();
            let ModelError::Unavailable(message) = &error else {
                panic!("{provider}: {error:?}");
            };
            assert!(
                message.starts_with(&format!(
                    "the judge provider `{provider}` does not provide embeddings"
                )),
                "{message}"
            );
            assert!(
                !message.contains("openai"),
                "no provider is named but the judge's: {message}"
            );
            assert_eq!(
                take_spend(),
                Default::default(),
                "{provider}: nothing was called"
            );
        }
    }

    #[test]
    fn the_fixture_judge_embeds_in_its_sandbox_unrecorded_and_uncounted() {
        let judge = judge("fixture");
        let out = judge.embed(&embed_request()).unwrap();
        assert_eq!(out.model, "fixture-embedding");
        assert_eq!(out.vectors.len(), 2);
        assert!(out.vectors.iter().all(|v| v.len() == 64));
        assert!(out.usage.is_none() && out.cost_usd.is_none());
        // One word, one dimension (its FNV-1a hash), normalized: the
        // vectors records were made with.
        let one = judge
            .embed(&EmbedRequest {
                model: Some("any".into()),
                inputs: vec!["Hello".into()],
            })
            .unwrap();
        let hash = b"hello".iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
        let mut expected = vec![0f32; 64];
        expected[(hash % 64) as usize] = 1.0;
        assert_eq!(one.vectors, vec![expected]);
        assert_eq!(
            one.model, "fixture-embedding",
            "whatever model is asked for"
        );
        assert_eq!(take_spend(), Default::default(), "no model call is counted");
    }
}
