//! Model calls for judge scorers, mediated by the host.
//!
//! Request the capability with
//! `export_scorers!(MyJudge; capabilities = [Capability::Model])`; the host
//! allows the call only when the user's run also configured a judge model.

pub use crate::bindings::model::{
    EmbedRequest, EmbedResponse, GenerateRequest, GenerateResponse, ModelError,
};

/// Asks the host's model for a completion.
pub fn generate(request: &GenerateRequest) -> Result<GenerateResponse, ModelError> {
    crate::bindings::model::generate(request)
}

/// Asks the host for embedding vectors of texts, one per input.
pub fn embed(request: &EmbedRequest) -> Result<EmbedResponse, ModelError> {
    crate::bindings::model::embed(request)
}
