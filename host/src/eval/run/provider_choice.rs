//! A run's provider, decided once before anything runs: which one (the
//! `--provider` flag, else what the fixture's `provider` asks for and this
//! machine can reach, else what the cassette was recorded with), what it is
//! granted ([`crate::eval::provider::setup`]), and the cassette its calls go
//! through (`--replay`, else the fixture's `replay`).

use std::sync::Arc;

use serde_json::Value;

use crate::eval::EvalError;
use crate::eval::options::TestOptions;
use crate::eval::provider::cassette::{Cassette, ReplayMode};
use crate::eval::provider::setup::{self, ProviderSetup, on_path};
use crate::fixture::Suite;
use crate::plugin::{Grants, Registry};

/// The provider of a run and how its calls are made.
pub struct RunProvider {
    /// The provider id or path the run uses (recorded in run.json).
    pub reference: String,
    pub setup: ProviderSetup,
    pub cassette: Option<Arc<Cassette>>,
    /// The replay mode the run uses (flag, else fixture, else config).
    pub replay: ReplayMode,
}

impl RunProvider {
    /// Decides the provider of a run of `suite`.
    pub fn for_suite(
        registry: &Registry,
        options: &TestOptions,
        suite: &Suite,
    ) -> Result<Self, EvalError> {
        let body = &suite.body;
        let env = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .or_else(|| options.provider_env.get(name).cloned())
        };
        let replay = match options.replay {
            Some(mode) => mode,
            // Checked when the fixture was loaded.
            None => body
                .get("replay")
                .and_then(Value::as_str)
                .and_then(|mode| ReplayMode::parse(mode).ok())
                .or(options.default_replay)
                .unwrap_or_default(),
        };
        let cassette = match replay {
            ReplayMode::Live => None,
            mode => {
                let name = options.cassette.clone().unwrap_or_else(|| {
                    body.get("suiteId")
                        .and_then(Value::as_str)
                        .unwrap_or("suite")
                        .to_string()
                });
                let records = options.records_root();
                Some(Cassette::open(
                    crate::eval::provider::cassette::default_path(&records, &name),
                    crate::eval::provider::cassette::legacy_path(&records, &name),
                    mode,
                    Vec::new(),
                    options.redact.clone(),
                    options.max_cassette_bytes(),
                )?)
            }
        };
        let strict = replay == ReplayMode::ReplayStrict;
        // A component the fixture names by path lies next to it, inside its root.
        let fixture_provider =
            body.get("provider")
                .and_then(Value::as_str)
                .map(|reference| {
                    let base = suite.file.parent().unwrap_or(std::path::Path::new(""));
                    crate::eval::cases::origins::plugin_reference(&suite.root, base, reference)
                        .map_err(|message| EvalError::Cases {
                            file: suite.file.clone(),
                            problems: vec![("provider".into(), message)],
                        })
                })
                .transpose()?;
        let fixture_provider = fixture_provider.as_deref();
        let canned = options.fixture_results.is_some();
        // The repo surface names no provider: its cases go to the coding
        // agent this machine has.
        let repo = body.get("surface").and_then(Value::as_str) == Some("repo") && !canned;
        // A flag, then the fixture, then the project config's default.
        let fixture_provider = fixture_provider
            .filter(|p| !p.trim().is_empty())
            .or(options.default_provider.as_deref());
        let flag_or_default = options.provider.clone().or_else(|| {
            // Only where the fixture names no provider (a repo suite).
            body.get("provider")
                .is_none()
                .then(|| options.default_provider.clone())
                .flatten()
        });
        let reference = match (&flag_or_default, &cassette) {
            (Some(reference), _) => reference.clone(),
            (None, Some(cassette)) if strict && repo => choose_recorded_agent(&cassette.adapters()),
            (None, Some(cassette)) if strict => {
                choose_recorded(fixture_provider, canned, &cassette.adapters())?
            }
            (None, _) if repo => choose_agent(&env),
            (None, _) => choose(fixture_provider, canned, &env)?,
        };
        let setup = if strict {
            // Every answer comes from the cassette: the provider is granted
            // nothing and never called.
            setup::denied(registry, &reference)?
        } else {
            setup::setup(
                registry,
                &reference,
                &options.grants,
                u64::try_from(options.limits.timeout.as_millis()).unwrap_or(u64::MAX),
                &env,
            )?
        };
        let mut setup = setup;
        crate::eval::provider::exec::prepare(
            &mut setup,
            suite,
            !strict,
            u64::try_from(options.limits.timeout.as_millis()).unwrap_or(u64::MAX),
            &env,
        )?;
        let isolated = body
            .get("agent")
            .and_then(|a| a.get("codexHome"))
            .and_then(Value::as_str)
            == Some("isolated");
        if isolated && !strict {
            setup::isolate_home(&mut setup, &reference, &env)?;
        }
        if let Some(cassette) = &cassette {
            cassette.add_secrets(setup.secret_values());
        }
        let cassette = cassette.map(Arc::new);
        Ok(Self {
            reference,
            setup,
            cassette,
            replay,
        })
    }

    /// The grants of the run's provider sessions: a messaging CLI runs in
    /// its own empty directory, anything else in the workspace.
    pub fn grants(&self, workspace: &std::path::Path) -> Arc<Grants> {
        let mut grants = self.setup.grants.clone();
        grants.workspace = grants.workspace.or_else(|| Some(workspace.to_path_buf()));
        Arc::new(grants)
    }
}

/// The provider a run uses when `--provider` does not name one: the fixture
/// backend for canned results (`--fixture-results`); else what the
/// fixture's `provider` asks for and this machine can reach: `anthropic`
/// with `ANTHROPIC_API_KEY` set, else `claude-cli` when `claude` is on
/// PATH; `openai` with `OPENAI_API_KEY` or `OPENAI_BASE_URL` set, else
/// `codex-cli` when `codex` is on PATH; any other
/// id or path as it is. Nothing usable is a definition error listing each
/// way to run the suite.
pub fn choose(
    fixture_provider: Option<&str>,
    canned: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, EvalError> {
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    let asked = match fixture_provider.map(str::trim).filter(|p| !p.is_empty()) {
        _ if canned => return Ok("fixture".into()),
        None => return Ok("fixture".into()),
        Some(asked) => asked,
    };
    let (ways, found) = match asked {
        "anthropic" => (
            "set ANTHROPIC_API_KEY (the `anthropic` API provider), or install and log in to Claude Code so `claude` is on PATH (`claude-cli`)",
            if set("ANTHROPIC_API_KEY") {
                Some("anthropic")
            } else if on_path("claude", env) {
                Some("claude-cli")
            } else {
                None
            },
        ),
        "openai" => (
            "set OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server such as llama.cpp, vLLM or Ollama (the `openai` API provider), or install and log in to Codex so `codex` is on PATH (`codex-cli`)",
            if set("OPENAI_API_KEY") || set("OPENAI_BASE_URL") {
                Some("openai")
            } else if on_path("codex", env) {
                Some("codex-cli")
            } else {
                None
            },
        ),
        other => return Ok(other.to_string()),
    };
    found.map(str::to_string).ok_or_else(|| EvalError::Provider {
        provider: asked.to_string(),
        message: format!(
            "the fixture asks for `{asked}` and nothing here can reach it: {ways}; or run without a model: `--provider fixture`"
        ),
    })
}

/// The coding agent of a repo suite without `--provider`: `claude-code`
/// when `claude` is on PATH, else `codex` when `codex` is, else the fixture backend (whose cases are then
/// blocked for want of canned observations, saying so).
pub fn choose_agent(env: &dyn Fn(&str) -> Option<String>) -> String {
    if on_path("claude", env) {
        "claude-code".into()
    } else if on_path("codex", env) {
        "codex".into()
    } else {
        "fixture".into()
    }
}

/// The coding agent whose calls a `replay-strict` repo run's cassette holds.
pub fn choose_recorded_agent(recorded: &std::collections::BTreeSet<String>) -> String {
    ["claude-code", "codex"]
        .into_iter()
        .find(|id| recorded.contains(*id))
        .unwrap_or("fixture")
        .to_string()
}

/// The provider of a `replay-strict` run without `--provider`: the one of
/// the fixture's provider family (`anthropic`: the API or `claude-cli`;
/// `openai`: the API or `codex-cli`) whose calls the cassette holds.
pub fn choose_recorded(
    fixture_provider: Option<&str>,
    canned: bool,
    recorded: &std::collections::BTreeSet<String>,
) -> Result<String, EvalError> {
    let asked = match fixture_provider.map(str::trim).filter(|p| !p.is_empty()) {
        _ if canned => return Ok("fixture".into()),
        None => return Ok("fixture".into()),
        Some(asked) => asked,
    };
    let family: &[&str] = match asked {
        "anthropic" => &["anthropic", "claude-cli"],
        "openai" => &["openai", "codex-cli"],
        other => return Ok(other.to_string()),
    };
    family
        .iter()
        .find(|id| recorded.contains(**id))
        .map(|id| id.to_string())
        .ok_or_else(|| EvalError::Provider {
            provider: asked.to_string(),
            message: format!(
                "the cassette holds no calls of {}; record them with `--replay record-new`, or name the provider with `--provider`",
                family.join(" or ")
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_provider_picks_what_this_machine_can_reach() {
        let bin = tempfile::tempdir().unwrap();
        let claude = bin.path().join("claude");
        std::fs::write(&claude, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = bin.path().display().to_string();
        let with = |pairs: Vec<(&'static str, String)>| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            }
        };
        let pick = |asked: Option<&str>, canned: bool, env: &dyn Fn(&str) -> Option<String>| {
            choose(asked, canned, env).map_err(|e| e.to_string())
        };
        let none = with(vec![]);
        assert_eq!(
            pick(Some("anthropic"), true, &none).unwrap(),
            "fixture",
            "canned results"
        );
        assert_eq!(pick(None, false, &none).unwrap(), "fixture");
        assert_eq!(choose_agent(&none), "fixture", "no agent installed");
        assert_eq!(pick(Some("./p.wasm"), false, &none).unwrap(), "./p.wasm");

        let key = with(vec![
            ("ANTHROPIC_API_KEY", "k".into()),
            ("PATH", path.clone()),
        ]);
        assert_eq!(pick(Some("anthropic"), false, &key).unwrap(), "anthropic");
        let cli = with(vec![("PATH", path.clone())]);
        assert_eq!(pick(Some("anthropic"), false, &cli).unwrap(), "claude-cli");
        assert_eq!(choose_agent(&cli), "claude-code", "a repo suite's agent");
        let refused = pick(Some("anthropic"), false, &none).unwrap_err();
        assert!(refused.contains("set ANTHROPIC_API_KEY"), "{refused}");
        assert!(refused.contains("--provider fixture"), "{refused}");

        let local = with(vec![("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1".into())]);
        assert_eq!(pick(Some("openai"), false, &local).unwrap(), "openai");
        let refused = pick(Some("openai"), false, &none).unwrap_err();
        assert!(refused.contains("OPENAI_BASE_URL"), "{refused}");
        assert!(refused.contains("`codex-cli`"), "{refused}");
    }
}
