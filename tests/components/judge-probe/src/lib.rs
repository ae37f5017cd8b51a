//! A judge-like scorer that requests the `model` capability and calls it.

use cautilus_sdk::{Capability, PluginError, Score, ScoreInput, Scorer, export_scorers, model};

pub struct AskModel;

impl Scorer for AskModel {
    const ID: &'static str = "ask-model";
    const DESCRIPTION: &'static str = "asks the host's model to repeat the output";
    const COST_CLASS: cautilus_sdk::CostClass = cautilus_sdk::CostClass::Model;
    type Config = serde_json::Value;

    fn new(_: serde_json::Value) -> Result<Self, PluginError> {
        Ok(Self)
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        let request = model::GenerateRequest {
            model: None,
            system: Some("repeat the user".into()),
            messages: vec![cautilus_sdk::Message {
                role: "user".into(),
                content: input.output().into(),
            }],
            max_tokens: Some(64),
            temperature: Some(0.0),
            response_schema: None,
        };
        Ok(match model::generate(&request) {
            Ok(response) => Score::pass(Self::ID).label(response.text),
            Err(error) => Score::fail(Self::ID, format!("{error:?}")),
        })
    }
}

export_scorers!(AskModel; capabilities = [Capability::Model]);
