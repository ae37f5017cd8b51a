//! The `model` policy: whether a store may call the run's model (a judge).
//!
//! A plugin gets the model when it requested `model`, its pack (if any)
//! was granted `model` at install, and the run configured one.

use std::sync::Arc;

use super::{Origin, Requested};
use crate::plugin::bindings::types::Capability;
use crate::plugin::grants::{Grants, ModelBackend};

/// What the run tells a plugin that asks for a model it did not configure.
const NO_MODEL: &str = "this run grants no model: configure a judge to let scorers call one (a suite's `judge: {provider, model}`, `[judge]` in cautilus.toml, or `--judge PROVIDER/MODEL`)";

/// Whether the plugin requested a model, within its pack's ceiling.
pub(super) fn requested(requested: &Requested) -> bool {
    requested
        .asked
        .iter()
        .any(|c| matches!(c, Capability::Model))
        && requested.within_ceiling(&crate::pack::Capability::Model)
}

/// The model one store may call, or why it may not.
#[derive(Clone)]
pub struct ModelPolicy(Result<Arc<dyn ModelBackend>, String>);

impl ModelPolicy {
    pub fn new(origin: Origin, asked: &Requested, grants: &Grants) -> Self {
        Self(if !requested(asked) {
            Err(origin.not_requested("model"))
        } else {
            grants.model.clone().ok_or_else(|| NO_MODEL.to_string())
        })
    }

    /// The run's model if this store may call it; the refusal otherwise.
    pub fn allows(&self) -> Result<&Arc<dyn ModelBackend>, String> {
        self.0.as_ref().map_err(Clone::clone)
    }
}

impl std::fmt::Debug for ModelPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Ok(_) => f.write_str("ModelPolicy(allowed)"),
            Err(why) => write!(f, "ModelPolicy(denied: {why})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Granted, not_requested, origin, packed, plain};
    use super::*;
    use crate::plugin::bindings::model;
    use crate::plugin::bindings::types::Capability as Asked;

    struct Echo;

    impl ModelBackend for Echo {
        fn generate(
            &self,
            _: &model::GenerateRequest,
        ) -> Result<model::GenerateResponse, model::ModelError> {
            Err(model::ModelError::Unavailable("echo".into()))
        }
    }

    #[test]
    fn a_model_needs_the_request_the_pack_and_the_run() {
        let with_model = Grants {
            model: Some(Arc::new(Echo)),
            ..Grants::default()
        };
        let without = Grants::default();
        let refused = |r: &Requested| Some(not_requested(r, "model"));
        // (requested, run grant, None = allowed / Some(refusal))
        let rows: Vec<(Requested, &Grants, Option<String>)> = vec![
            (plain(vec![Asked::Model]), &with_model, None),
            (plain(vec![Asked::Model]), &without, Some(NO_MODEL.into())),
            (plain(vec![]), &with_model, refused(&plain(vec![]))),
            (
                plain(vec![Asked::Http(vec!["*".into()])]),
                &with_model,
                refused(&plain(vec![])),
            ),
            (
                packed(vec![Asked::Model], vec![Granted::Model]),
                &with_model,
                None,
            ),
            (
                packed(vec![Asked::Model], vec![Granted::Model]),
                &without,
                Some(NO_MODEL.into()),
            ),
            (
                packed(vec![Asked::Model], vec![Granted::Process("model".into())]),
                &with_model,
                refused(&packed(vec![], vec![])),
            ),
            (
                packed(vec![], vec![Granted::Model]),
                &with_model,
                refused(&packed(vec![], vec![])),
            ),
        ];
        for (requested, grants, expected) in rows {
            let policy = ModelPolicy::new(origin(&requested), &requested, grants);
            assert_eq!(policy.allows().err(), expected, "{requested:?}");
            assert_eq!(
                requested.model(),
                expected.as_deref() != refused(&requested).as_deref()
            );
        }
    }
}
