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
use crate::eval::provider::declared::{Declared, available, way_to_run};
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
        let env = |name: &str| env_of(options, name);
        let replay = replay_mode(options, body);
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
        let declared = || Declared::builtin(registry).map_err(EvalError::from);
        let reference = match (&flag_or_default, &cassette) {
            (Some(reference), _) => reference.clone(),
            (None, Some(cassette)) if strict && repo => {
                choose_recorded_agent(&declared, &cassette.adapters())?
            }
            (None, Some(cassette)) if strict => {
                choose_recorded(&declared, fixture_provider, canned, &cassette.adapters())?
            }
            (None, _) if repo => choose_agent(&declared, &env)?,
            (None, _) => choose(&declared, fixture_provider, canned, &env)?,
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
        crate::eval::provider::http::prepare(
            &mut setup,
            suite,
            !strict,
            u64::try_from(options.limits.timeout.as_millis()).unwrap_or(u64::MAX),
            &options.grants.http_hosts,
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

/// A variable of the environment a provider may read: the process's, else
/// the project config's `[providers]` values.
fn env_of(options: &TestOptions, name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| options.provider_env.get(name).cloned())
}

/// The replay mode of a run of the suite `body`: the flag, else the
/// fixture's (checked when it was loaded), else the config's, else live.
fn replay_mode(options: &TestOptions, body: &serde_json::Map<String, Value>) -> ReplayMode {
    options.replay.unwrap_or_else(|| {
        body.get("replay")
            .and_then(Value::as_str)
            .and_then(|mode| ReplayMode::parse(mode).ok())
            .or(options.default_replay)
            .unwrap_or_default()
    })
}

/// Checks, without making the provider, what a run of `suite` would give
/// a built-in provider that runs the suite's program (`exec`: the program,
/// resolved and granted) or calls the suite's service (`http`: the secrets
/// its headers name sent only where granted), as the provider declares
/// (`runs-suite-program`, `calls-suite-service`), when the run goes to one
/// (the flag's provider, else the fixture's, else the config's; answers
/// given beforehand go to the fixture backend). An experiment checks every
/// variant with it before the first one runs, so a variant refused at its
/// turn does not come after others ran.
pub fn check_service(
    registry: &Registry,
    options: &TestOptions,
    suite: &Suite,
    canned: bool,
) -> Result<(), EvalError> {
    if canned || options.fixture_results.is_some() || options.reuse_outputs.is_some() {
        return Ok(());
    }
    let body = &suite.body;
    let reference = options
        .provider
        .clone()
        .or_else(|| {
            body.get("provider")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .or_else(|| options.default_provider.clone());
    let Some(reference) = reference else {
        return Ok(());
    };
    let declared = Declared::builtin(registry)?;
    let Some(needs) = declared.needs_of(&reference) else {
        return Ok(());
    };
    let live = replay_mode(options, body) != ReplayMode::ReplayStrict;
    let env = |name: &str| env_of(options, name);
    if needs.runs_suite_program {
        crate::eval::provider::exec::check(suite, live, &options.grants.programs, &env)?;
    }
    if needs.calls_suite_service {
        crate::eval::provider::http::check(
            suite,
            live,
            &|name| options.grants.secrets.contains_key(name),
            &options.grants.http_hosts,
        )?;
    }
    Ok(())
}

/// What the built-in providers declare, read when a choice needs it.
pub type Declarations<'a> = dyn Fn() -> Result<Declared, EvalError> + 'a;

/// The provider a run uses when `--provider` does not name one: the fixture
/// backend for canned results (`--fixture-results`); else what the
/// fixture's `provider` asks for and this machine can reach: the provider
/// named when it can run here (an API's key set, or its base URL for one
/// that needs no key), else the first built-in standing in for it whose
/// program is on PATH (`anthropic`: `claude-cli`; `openai`: `codex-cli`);
/// any id nothing stands in for, or a path, as it is. Nothing usable is a
/// definition error listing each way to run the suite.
pub fn choose(
    declared: &Declarations,
    fixture_provider: Option<&str>,
    canned: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, EvalError> {
    let asked = match fixture_provider.map(str::trim).filter(|p| !p.is_empty()) {
        _ if canned => return Ok("fixture".into()),
        None => return Ok("fixture".into()),
        Some(asked) => asked,
    };
    if !plain_id(asked) {
        return Ok(asked.to_string());
    }
    let declared = declared()?;
    let Some(family) = declared.family(asked) else {
        return Ok(asked.to_string());
    };
    if let Some((id, _)) = family.iter().find(|(_, needs)| available(needs, env)) {
        return Ok(id.to_string());
    }
    let ways = family
        .iter()
        .map(|(id, needs)| way_to_run(id, needs))
        .collect::<Vec<_>>()
        .join(", or ");
    Err(EvalError::Provider {
        provider: asked.to_string(),
        message: format!(
            "the fixture asks for `{asked}` and nothing here can reach it: {ways}; or run without a model: `--provider fixture`"
        ),
    })
}

/// Whether `reference` names a provider by id (not a `.wasm` path nor a
/// pack's `<pack>/<id>`): only such a name can have stand-ins.
fn plain_id(reference: &str) -> bool {
    crate::plugin::split_path_reference(reference).is_none() && !reference.contains('/')
}

/// The coding agent of a repo suite without `--provider`: the first
/// built-in coding agent whose program is on PATH, in the built-in pack's
/// order (`claude-code`, then `codex`), else the fixture backend (whose
/// cases are then blocked for want of canned observations, saying so).
pub fn choose_agent(
    declared: &Declarations,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, EvalError> {
    let declared = declared()?;
    Ok(declared
        .agents()
        .find(|(_, program)| on_path(&program.name, env))
        .map_or("fixture", |(id, _)| id)
        .to_string())
}

/// The coding agent whose calls a `replay-strict` repo run's cassette holds
/// (the first built-in coding agent, in order, it holds calls of).
pub fn choose_recorded_agent(
    declared: &Declarations,
    recorded: &std::collections::BTreeSet<String>,
) -> Result<String, EvalError> {
    let declared = declared()?;
    Ok(declared
        .agents()
        .find(|(id, _)| recorded.contains(*id))
        .map_or("fixture", |(id, _)| id)
        .to_string())
}

/// The provider of a `replay-strict` run without `--provider`: the one of
/// the fixture's provider and its stand-ins (`anthropic`: the API or
/// `claude-cli`; `openai`: the API or `codex-cli`) whose calls the cassette
/// holds.
pub fn choose_recorded(
    declared: &Declarations,
    fixture_provider: Option<&str>,
    canned: bool,
    recorded: &std::collections::BTreeSet<String>,
) -> Result<String, EvalError> {
    let asked = match fixture_provider.map(str::trim).filter(|p| !p.is_empty()) {
        _ if canned => return Ok("fixture".into()),
        None => return Ok("fixture".into()),
        Some(asked) => asked,
    };
    if !plain_id(asked) {
        return Ok(asked.to_string());
    }
    let declared = declared()?;
    let Some(family) = declared.family(asked) else {
        return Ok(asked.to_string());
    };
    let ids: Vec<&str> = family.iter().map(|(id, _)| *id).collect();
    ids.iter()
        .find(|id| recorded.contains(**id))
        .map(|id| id.to_string())
        .ok_or_else(|| EvalError::Provider {
            provider: asked.to_string(),
            message: format!(
                "the cassette holds no calls of {}; record them with `--replay record-new`, or name the provider with `--provider`",
                ids.join(" or ")
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::provider::declared::tests::{api, cli};
    use crate::plugin::registry::test_registry as builtin_registry;

    /// What the providers compiled into this binary declare.
    fn builtin() -> Result<Declared, EvalError> {
        Ok(Declared::builtin(builtin_registry())?)
    }

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
            choose(&builtin, asked, canned, env).map_err(|e| e.to_string())
        };
        let choose_agent =
            |env: &dyn Fn(&str) -> Option<String>| choose_agent(&builtin, env).unwrap();
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

    /// The choices and refusals of the built-in providers, as the host said
    /// them when it named the providers itself.
    #[test]
    fn the_built_in_declarations_give_the_choices_and_words_they_always_did() {
        let none = |_: &str| None;
        let refused = |asked: &str| {
            choose(&builtin, Some(asked), false, &none)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused("anthropic"),
            "provider `anthropic`: the fixture asks for `anthropic` and nothing here can reach it: set ANTHROPIC_API_KEY (the `anthropic` API provider), or install and log in to Claude Code so `claude` is on PATH (`claude-cli`); or run without a model: `--provider fixture`"
        );
        assert_eq!(
            refused("openai"),
            "provider `openai`: the fixture asks for `openai` and nothing here can reach it: set OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server such as llama.cpp, vLLM or Ollama (the `openai` API provider), or install and log in to Codex so `codex` is on PATH (`codex-cli`); or run without a model: `--provider fixture`"
        );
        // Nothing stands in for any other provider: it is used as named.
        for named in [
            "claude-cli",
            "codex-cli",
            "claude-code",
            "codex",
            "fixture",
            "acme/p",
            "nope",
        ] {
            assert_eq!(choose(&builtin, Some(named), false, &none).unwrap(), named);
        }
        let key = |name: &str| (name == "OPENAI_API_KEY").then(|| "k".to_string());
        assert_eq!(
            choose(&builtin, Some("openai"), false, &key).unwrap(),
            "openai"
        );
        assert_eq!(
            refused_recorded(&builtin, "anthropic", &[]),
            "provider `anthropic`: the cassette holds no calls of anthropic or claude-cli; record them with `--replay record-new`, or name the provider with `--provider`"
        );
        assert_eq!(
            refused_recorded(&builtin, "openai", &["codex"]),
            "provider `openai`: the cassette holds no calls of openai or codex-cli; record them with `--replay record-new`, or name the provider with `--provider`"
        );
        let recorded = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect();
        for (asked, held, expected) in [
            ("anthropic", &["claude-cli"][..], "claude-cli"),
            ("anthropic", &["claude-cli", "anthropic"][..], "anthropic"),
            ("openai", &["codex-cli", "openai"][..], "openai"),
            ("openai", &["codex-cli"][..], "codex-cli"),
            ("claude-cli", &[][..], "claude-cli"),
        ] {
            assert_eq!(
                choose_recorded(&builtin, Some(asked), false, &recorded(held)).unwrap(),
                expected,
                "{asked} {held:?}"
            );
        }
        for (held, expected) in [
            (&["codex", "claude-code"][..], "claude-code"),
            (&["codex", "openai"][..], "codex"),
            (&["claude-cli"][..], "fixture"),
        ] {
            assert_eq!(
                choose_recorded_agent(&builtin, &recorded(held)).unwrap(),
                expected
            );
        }
    }

    fn refused_recorded(declared: &Declarations, asked: &str, held: &[&str]) -> String {
        choose_recorded(
            declared,
            Some(asked),
            false,
            &held.iter().map(|id| id.to_string()).collect(),
        )
        .unwrap_err()
        .to_string()
    }

    /// Any provider may be declared a stand-in; the host holds none of
    /// their names, variables or programs.
    #[test]
    fn stand_ins_and_agents_follow_the_declarations_in_order() {
        let declared = || {
            Ok(Declared::new(vec![
                api("acme", false),
                cli("acme-cli", "acme-bin", false, Some("acme")),
                cli("zeta-agent", "zeta", true, None),
                cli("acme-agent", "acme-bin", true, None),
            ]))
        };
        let bin = tempfile::tempdir().unwrap();
        for program in ["acme-bin", "zeta"] {
            let file = bin.path().join(program);
            std::fs::write(&file, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        let path = bin.path().display().to_string();
        let on_path = |name: &str| (name == "PATH").then(|| path.clone());
        let url = |name: &str| (name == "ACME_BASE_URL").then(|| "http://127.0.0.1:9".to_string());
        let none = |_: &str| None;
        assert_eq!(
            choose(&declared, Some("acme"), false, &url).unwrap(),
            "acme"
        );
        assert_eq!(
            choose(&declared, Some("acme"), false, &on_path).unwrap(),
            "acme-cli"
        );
        let refused = choose(&declared, Some("acme"), false, &none)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains(
                "set ACME_API_KEY, or ACME_BASE_URL for a server that needs no key (the `acme` API provider), or put `acme-bin` on PATH (`acme-cli`); or run without a model"
            ),
            "{refused}"
        );
        assert_eq!(choose_agent(&declared, &on_path).unwrap(), "zeta-agent");
        assert_eq!(choose_agent(&declared, &none).unwrap(), "fixture");
        // A path or a pack's provider is never looked up.
        let unread = || -> Result<Declared, EvalError> { panic!("read the declarations") };
        for reference in ["./p.wasm", "acme/p"] {
            assert_eq!(
                choose(&unread, Some(reference), false, &none).unwrap(),
                reference
            );
        }
        assert_eq!(
            choose(&unread, Some("acme"), true, &none).unwrap(),
            "fixture"
        );
    }
}
