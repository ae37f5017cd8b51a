//! The `model` import: the run's model, for the plugins its policy
//! ([`ModelPolicy`]) allows.

use wasmtime::component::{HasData, Linker};

use crate::plugin::bindings::model;
use crate::plugin::capability::model::ModelPolicy;

/// What the `model` import sees of a store.
pub struct ModelCtx {
    pub policy: ModelPolicy,
}

/// The `model` interface's data.
pub struct Model;

impl HasData for Model {
    type Data<'a> = &'a mut ModelCtx;
}

/// A store state that serves `model`.
pub trait ModelView {
    fn model(&mut self) -> &mut ModelCtx;
}

impl model::Host for ModelCtx {
    fn generate(
        &mut self,
        request: model::GenerateRequest,
    ) -> Result<model::GenerateResponse, model::ModelError> {
        let backend = self.policy.allows().map_err(model::ModelError::Denied)?;
        backend.generate(&request)
    }

    fn embed(
        &mut self,
        request: model::EmbedRequest,
    ) -> Result<model::EmbedResponse, model::ModelError> {
        let backend = self.policy.allows().map_err(model::ModelError::Denied)?;
        backend.embed(&request)
    }
}

pub(super) fn add_to_linker<T: ModelView + 'static>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    model::add_to_linker::<T, Model>(linker, T::model)
}
