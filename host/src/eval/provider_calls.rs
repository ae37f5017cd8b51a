//! A run's calls to its provider: every sample of every case goes through
//! here, from the cassette or live, with the granted secrets scrubbed from
//! whatever comes back.
//!
//! Calls are futures on the I/O runtime ([`crate::plugin::io`]). Each call
//! in flight has a provider session of its own, taken from a pool and put
//! back after, so the pool holds at most as many sessions as calls were
//! ever in flight at once (the run's concurrency).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::cassette::{Cassette, scrub, scrub_observation};
use crate::plugin::bindings::preset::exports::cautilus::plugin::preset_api::Sample;
use crate::plugin::bindings::provider::exports::cautilus::plugin::provider_api::Invocation;
use crate::plugin::provider::ProviderSession;
use crate::plugin::{Grants, Limits, Plugin};

/// The provider of a run, its sessions and its cassette.
pub struct ProviderCalls {
    plugin: Arc<Plugin>,
    limits: Limits,
    grants: Arc<Grants>,
    /// Where calls are recorded or replayed from (`--replay`), if anywhere.
    cassette: Option<Arc<Cassette>>,
    /// The values of the secrets the provider is granted: redacted from
    /// whatever it answers before anything is recorded.
    secrets: Vec<String>,
    idle: Mutex<Vec<ProviderSession>>,
}

impl ProviderCalls {
    pub fn new(
        plugin: Arc<Plugin>,
        limits: Limits,
        grants: Arc<Grants>,
        cassette: Option<Arc<Cassette>>,
        secrets: Vec<String>,
    ) -> Self {
        Self {
            plugin,
            limits,
            grants,
            cassette,
            secrets,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The provider's id (what a cassette entry is keyed by).
    pub fn provider_id(&self) -> &str {
        self.plugin.id()
    }

    /// Takes every sample of one case, in order, in `workspace` (the case's
    /// own copy) when it has one. A provider failure is that sample's
    /// outcome (the preset decides what it means); it never stops the run.
    pub async fn samples(
        &self,
        requests: Vec<Invocation>,
        workspace: Option<PathBuf>,
    ) -> Vec<Sample> {
        let mut session = match self.take_session() {
            Ok(session) => session,
            Err(error) => {
                let started = Instant::now();
                return requests
                    .iter()
                    .map(|_| Sample {
                        outcome: Err(error.clone()),
                        duration_ms: elapsed_ms(started),
                    })
                    .collect();
            }
        };
        session.set_case_workspace(workspace);
        let mut samples = Vec::with_capacity(requests.len());
        for (index, request) in requests.iter().enumerate() {
            samples.push(self.sample(&mut session, request, index).await);
        }
        session.set_case_workspace(None);
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(session);
        samples
    }

    async fn sample(
        &self,
        session: &mut ProviderSession,
        request: &Invocation,
        index: usize,
    ) -> Sample {
        let started = Instant::now();
        let live = async {
            let outcome = session.invoke(request).await.map_err(|e| e.to_string());
            (outcome, elapsed_ms(started))
        };
        let outcome = match &self.cassette {
            Some(cassette) => {
                cassette
                    .answer("provider", self.plugin.id(), request, index, live)
                    .await
            }
            None => live.await.0,
        };
        let outcome = match outcome {
            Ok(observation) => Ok(scrub_observation(observation, &self.secrets)),
            Err(error) => Err(scrub(&error, &self.secrets)),
        };
        Sample {
            outcome,
            duration_ms: elapsed_ms(started),
        }
    }

    fn take_session(&self) -> Result<ProviderSession, String> {
        let pooled = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
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
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
