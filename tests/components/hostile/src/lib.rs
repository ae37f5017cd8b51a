//! A scorer that misbehaves on request; the output text picks the behaviour.
//!
//! `ok` passes; `spin` loops forever; `burn` loops for a long finite time
//! (fuel); `bomb` allocates until memory runs out; `panic` panics; `huge`
//! returns 2 MiB of detail; `read-file` / `read-env` probe ambient WASI
//! authority; `ask-model` calls the model import without requesting it.

use cautilus_sdk::{PluginError, Score, ScoreInput, Scorer, export_scorers, model};
use std::hint::black_box;

pub struct Hostile;

impl Scorer for Hostile {
    const ID: &'static str = "hostile";
    const DESCRIPTION: &'static str = "misbehaves as the output says";
    type Config = serde_json::Value;

    fn new(_: serde_json::Value) -> Result<Self, PluginError> {
        Ok(Self)
    }

    fn score(&self, input: &ScoreInput) -> Result<Score, PluginError> {
        match input.output() {
            "ok" => Ok(Score::pass(Self::ID)),
            "spin" => {
                let mut n: u64 = 0;
                loop {
                    n = black_box(n.wrapping_add(1));
                }
            }
            "burn" => {
                let mut n: u64 = 0;
                for i in 0..50_000_000_000u64 {
                    n = black_box(n ^ i);
                }
                Ok(Score::new(Self::ID, (n % 2) as f64))
            }
            "bomb" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(black_box(vec![7u8; 1 << 20]));
                }
            }
            "panic" => panic!("boom: the hostile scorer was asked to panic"),
            "huge" => Ok(Score::pass(Self::ID).detail("x".repeat(2 * 1024 * 1024))),
            "fail" => Err(PluginError::failed("the hostile scorer refuses")),
            "read-file" => {
                let file = std::fs::read_to_string("/etc/hostname");
                let dir = std::fs::read_dir("/").map(|d| d.count());
                let cwd = std::env::current_dir();
                Ok(
                    Score::check(Self::ID, file.is_err() && dir.is_err(), String::new)
                        .detail(format!("file={file:?} dir={dir:?} cwd={cwd:?}")),
                )
            }
            "read-env" => {
                let vars: Vec<(String, String)> = std::env::vars().collect();
                let args: Vec<String> = std::env::args().collect();
                let secret = std::env::var("CAUTILUS_TEST_SECRET");
                Ok(
                    Score::check(Self::ID, vars.is_empty() && secret.is_err(), String::new)
                        .detail(format!("vars={vars:?} args={args:?} secret={secret:?}")),
                )
            }
            "ask-model" => Ok(ask_model(Self::ID)),
            other => Err(PluginError::input(
                "output",
                format!("unknown behaviour {other:?}"),
            )),
        }
    }
}

pub fn ask_model(id: &str) -> Score {
    let request = model::GenerateRequest {
        model: None,
        system: None,
        messages: vec![cautilus_sdk::Message {
            role: "user".into(),
            content: "hello".into(),
        }],
        max_tokens: None,
        temperature: None,
        response_schema: None,
    };
    match model::generate(&request) {
        Ok(response) => Score::pass(id).label(response.text),
        Err(error) => Score::fail(id, format!("{error:?}")),
    }
}

export_scorers!(Hostile);
