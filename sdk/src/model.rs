//! Model calls for judge scorers, mediated by the host.
//!
//! Request the capability with
//! `export_scorers!(MyJudge; capabilities = [Capability::Model])`; the host
//! allows the call only when the user's run also configured a judge model.

pub use crate::bindings::scorer::cautilus::plugin::model::{
    GenerateRequest, GenerateResponse, ModelError,
};

/// Asks the host's model for a completion.
pub fn generate(request: &GenerateRequest) -> Result<GenerateResponse, ModelError> {
    crate::bindings::scorer::cautilus::plugin::model::generate(request)
}
