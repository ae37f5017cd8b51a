//! What a run lets plugins do ([`Grants`]) and the model behind the
//! `model` import ([`ModelBackend`]). Each capability's policy
//! ([`super::capability`]) weighs the run's grant against what the plugin
//! requested and its pack's install grant.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::bindings::model;

/// A model the host calls on behalf of judge plugins.
pub trait ModelBackend: Send + Sync {
    fn generate(
        &self,
        request: &model::GenerateRequest,
    ) -> Result<model::GenerateResponse, model::ModelError>;

    /// Embedding vectors of texts; a backend without embeddings says so.
    fn embed(
        &self,
        request: &model::EmbedRequest,
    ) -> Result<model::EmbedResponse, model::ModelError> {
        let _ = request;
        Err(model::ModelError::Unavailable(
            "this run's model has no embeddings".into(),
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
    /// Each `process` call runs in a new empty directory (inside the
    /// workspace), removed when it ends: no run of a program sees what
    /// another left (the `exec` provider's).
    pub fresh_dir: bool,
}

impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("model", &self.model.is_some())
            .field("http_hosts", &self.http_hosts)
            .field("programs", &self.programs)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("program_env", &self.program_env)
            .field("fresh_dir", &self.fresh_dir)
            .finish()
    }
}
