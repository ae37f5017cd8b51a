//! The judge model of a suite (`judge: {provider, model}`): the model
//! behind the host `model` import, granted to judge scorers of that suite
//! only. Calls go through the named provider component, so a judge scorer
//! never sees keys or endpoints; the `fixture` provider answers judge
//! calls deterministically (for tests).
//!
//! Plain-string assertions (natural-language criteria) are graded by the
//! built-in `judge` scorer with this model; without a `judge:` they are a
//! definition error that says how to configure one.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::eval::EvalError;
use crate::eval::assert::judge_config::JudgeConfig;
use crate::eval::assert::judge_spend::SPEND;
use crate::plugin::bindings::model::{
    EmbedRequest, EmbedResponse, GenerateRequest, GenerateResponse, ModelError,
};
use crate::plugin::bindings::provider_api::Invocation;
use crate::plugin::bindings::types::{Message, Usage};
use crate::plugin::provider::ProviderSession;
use crate::plugin::{Grants, Limits, ModelBackend, Observation, Plugin, Registry};

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

    /// One call through a pooled session of the judge's provider.
    async fn invoke(&self, invocation: &Invocation) -> Result<Observation, String> {
        let pooled = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut session = match pooled {
            Some(session) => session,
            None => ProviderSession::new(
                self.plugin.clone(),
                self.limits.clone(),
                self.grants.clone(),
            )
            .map_err(|e| e.to_string())?,
        };
        let result = session
            .invoke(invocation)
            .await
            .map(|o| self.pricing.apply(o))
            .map_err(|e| e.to_string());
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(session);
        }
        result
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
        use crate::eval::provider::embeddings;
        let model = request
            .model
            .clone()
            .unwrap_or_else(|| embeddings::DEFAULT_MODEL.to_string());
        match self.plugin.id() {
            "fixture" => {
                return Ok(EmbedResponse {
                    vectors: embeddings::fixture_vectors(&request.inputs),
                    model: "fixture-embedding".into(),
                    usage: None,
                    cost_usd: None,
                });
            }
            "openai" => {}
            other => {
                return Err(ModelError::Unavailable(format!(
                    "embeddings go to an OpenAI-compatible `/embeddings` endpoint: the judge's provider must be `openai` (OPENAI_BASE_URL, OPENAI_API_KEY), or `fixture` for stand-in vectors, not `{other}`"
                )));
            }
        }
        let base = self
            .options
            .get("baseUrl")
            .and_then(Value::as_str)
            .unwrap_or("https://api.openai.com/v1")
            .to_string();
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
        let timeout = self.limits.timeout;
        let live = async {
            let started = std::time::Instant::now();
            let key = std::env::var("OPENAI_API_KEY")
                .ok()
                .filter(|k| !k.is_empty());
            crate::secrets::register(key.as_deref());
            let outcome =
                embeddings::openai(&base, key.as_deref(), &model, &request.inputs, timeout)
                    .await
                    .map(|embedded| {
                        let mut observation = Observation::empty();
                        observation.structured = Some(json!(embedded.vectors).to_string());
                        observation.model = Some(embedded.model);
                        observation.usage = embedded.input_tokens.map(|tokens| Usage {
                            input_tokens: Some(tokens),
                            output_tokens: None,
                            cached_input_tokens: None,
                            reasoning_tokens: None,
                            llm_calls: Some(1),
                        });
                        observation
                    });
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            (outcome, ms)
        };
        let result = self.answer("embed", "openai", &invocation, live);
        let observation = result
            .map(|o| crate::eval::provider::observation_scrub::scrub_observation(o, &self.secrets))
            .map_err(|e| {
                ModelError::Failed(format!(
                    "embeddings: {}",
                    crate::secrets::scrub(&e, &self.secrets)
                ))
            })?;
        SPEND.with(|spend| {
            let mut total = spend.get();
            total.calls += 1;
            total.input_tokens += observation
                .usage
                .as_ref()
                .and_then(|u| u.input_tokens)
                .unwrap_or(0);
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
            cost_usd: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
