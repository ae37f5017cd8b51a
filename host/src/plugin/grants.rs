//! What a run lets plugins do ([`Grants`]), what a plugin asked for in its
//! `describe` ([`Requested`]), and the model behind the `model` import
//! ([`ModelBackend`]). The host imports ([`super::imports`]) allow a call
//! only when both say yes.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::bindings::model;
use super::bindings::types::Capability;

/// A model the host calls on behalf of judge plugins.
pub trait ModelBackend: Send + Sync {
    fn generate(
        &self,
        request: &model::GenerateRequest,
    ) -> Result<model::GenerateResponse, model::ModelError>;

    /// Embedding vectors of texts; a backend without an embeddings
    /// endpoint says so.
    fn embed(
        &self,
        request: &model::EmbedRequest,
    ) -> Result<model::EmbedResponse, model::ModelError> {
        let _ = request;
        Err(model::ModelError::Unavailable(
            "this run's model has no embeddings endpoint".into(),
        ))
    }
}

/// What the user's run allows plugins to do. The default grants nothing.
#[derive(Default, Clone)]
pub struct Grants {
    /// The model behind the `model` import, if the run configured a judge.
    pub model: Option<Arc<dyn ModelBackend>>,
    /// Host names plugins may reach through `http`.
    pub http_hosts: Vec<String>,
    /// Programs plugins may run through `process`.
    pub programs: Vec<String>,
    /// Secret name → environment variable the host reads it from.
    pub secrets: BTreeMap<String, String>,
    /// Working directory for `process` calls.
    pub workspace: Option<std::path::PathBuf>,
    /// Variables of the host's environment that granted programs get (a
    /// CLI's login and endpoint); the plugin never sees their values.
    pub program_env: Vec<String>,
    /// Values the host sets for some of `program_env` instead of its own
    /// (an isolated `CODEX_HOME`).
    pub program_env_set: Vec<(String, std::ffi::OsString)>,
}

impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("model", &self.model.is_some())
            .field("http_hosts", &self.http_hosts)
            .field("programs", &self.programs)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("program_env", &self.program_env)
            .finish()
    }
}

/// Capabilities a plugin requested in `describe`, recorded per store; for
/// a pack's plugin, only those its pack was granted at install, and the
/// pack's `name@version` (second field) to say so when a call is denied.
#[derive(Debug, Default, Clone)]
pub struct Requested(pub Vec<Capability>, pub Option<String>);

impl Requested {
    /// Why a call needing `capability` is denied before the run's grants
    /// are looked at.
    pub(crate) fn refusal(&self, plugin: &str, capability: &str) -> String {
        match &self.1 {
            None => format!("plugin `{plugin}` did not request `{capability}` in its describe"),
            Some(pack) => format!(
                "plugin `{plugin}` may not use `{capability}`: it did not request it, or its pack {pack} was not granted it at install (`cautilus pack install <source> --grant {capability}`)"
            ),
        }
    }

    pub(crate) fn model(&self) -> bool {
        self.0.iter().any(|c| matches!(c, Capability::Model))
    }

    /// `*` asks for whichever hosts the run grants (an API provider whose
    /// endpoint the user chooses); the grant still decides.
    pub(crate) fn http_host(&self, host: &str) -> bool {
        self.0.iter().any(|c| match c {
            Capability::Http(hosts) => hosts.iter().any(|h| h == host || h == "*"),
            _ => false,
        })
    }

    pub(crate) fn program(&self, program: &str) -> bool {
        self.0.iter().any(|c| match c {
            Capability::Process(programs) => programs.iter().any(|p| p == program),
            _ => false,
        })
    }
}
