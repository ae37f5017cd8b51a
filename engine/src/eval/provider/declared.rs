//! What the built-in providers declare (`provider-needs`), for the
//! decisions the host makes before any provider runs: which provider
//! answers a fixture naming one this machine cannot reach (the one named,
//! else a built-in standing in for it: [`Declared::family`], [`available`]),
//! what to say when none can ([`way_to_run`]), which coding agent a repo
//! suite gets ([`Declared::agents`]), and what a project's
//! `[providers.<id>]` table may set ([`Declared::endpoints`]).
//!
//! The host keeps the policy and none of the data: only built-in providers
//! (compiled into this binary) are read here, so a component from a file or
//! a pack is never picked in place of another nor configured by the
//! project; their order is the built-in pack's.

use crate::plugin::bindings::provider_needs::{Endpoint, Needs, PriceFamily, Program};
use crate::plugin::{Description, PluginError, PluginSource, Registry};

/// The built-in providers and what each declares, in the built-in pack's
/// order.
#[derive(Debug, Clone)]
pub struct Declared {
    providers: Vec<(String, Needs)>,
}

impl Declared {
    /// What the built-in providers of `registry` declare (loading the
    /// built-in pack if it is not loaded yet).
    pub fn builtin(registry: &Registry) -> Result<Self, PluginError> {
        let providers = registry
            .builtins()?
            .iter()
            .filter_map(|plugin| match (&plugin.source, &plugin.description) {
                (PluginSource::Builtin(_), Description::Provider(provider)) => {
                    Some((plugin.id().to_string(), provider.needs.clone()))
                }
                _ => None,
            })
            .collect();
        Ok(Self { providers })
    }

    /// Declarations given as they are (tests).
    #[cfg(test)]
    pub fn new(providers: Vec<(String, Needs)>) -> Self {
        Self { providers }
    }

    /// The providers that may answer a fixture naming `asked`: `asked`
    /// itself when it is a built-in, then each built-in standing in for it,
    /// in order; `None` when nothing stands in for it (it is used as
    /// named, wherever it comes from).
    pub fn family(&self, asked: &str) -> Option<Vec<(&str, &Needs)>> {
        let stand_ins = || {
            self.providers
                .iter()
                .filter(|(id, needs)| id != asked && needs.stands_in_for.as_deref() == Some(asked))
        };
        stand_ins().next()?;
        let named = self.providers.iter().filter(|(id, _)| id == asked);
        Some(
            named
                .chain(stand_ins())
                .map(|(id, needs)| (id.as_str(), needs))
                .collect(),
        )
    }

    /// What built-in provider `id` declares (`None`: no built-in has
    /// that id).
    pub fn needs_of(&self, id: &str) -> Option<&Needs> {
        self.providers
            .iter()
            .find(|(provider, _)| provider == id)
            .map(|(_, needs)| needs)
    }

    /// The coding agents (a program working in copies of the workspace),
    /// in order.
    pub fn agents(&self) -> impl Iterator<Item = (&str, &Program)> {
        self.providers.iter().filter_map(|(id, needs)| {
            needs
                .program
                .as_ref()
                .filter(|program| program.agent)
                .map(|program| (id.as_str(), program))
        })
    }

    /// The providers calling a model API, with the price family of their
    /// calls, in order.
    pub fn endpoints(&self) -> impl Iterator<Item = (&str, &Endpoint, Option<&PriceFamily>)> {
        self.providers.iter().filter_map(|(id, needs)| {
            needs
                .endpoint
                .as_ref()
                .map(|endpoint| (id.as_str(), endpoint, needs.prices.as_ref()))
        })
    }
}

/// Whether a provider declaring `needs` can run here: its API's key is set
/// (or its base URL, for an API that needs no key), and its program is on
/// PATH.
pub fn available(needs: &Needs, env: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    let endpoint = needs.endpoint.as_ref().is_none_or(|endpoint| {
        set(&endpoint.key_variable) || (!endpoint.key_required && set(&endpoint.url_variable))
    });
    let program = needs
        .program
        .as_ref()
        .is_none_or(|program| super::setup::on_path(&program.name, env));
    endpoint && program
}

/// What makes provider `id` able to run here, as a refusal listing the
/// ways to run a suite says it: its declared setup hint, else what its
/// endpoint or program asks for, with the provider it gives.
pub fn way_to_run(id: &str, needs: &Needs) -> String {
    let hint = needs.setup_hint.clone().unwrap_or_else(|| {
        let endpoint = needs.endpoint.as_ref().map(|endpoint| {
            if endpoint.key_required {
                format!("set {}", endpoint.key_variable)
            } else {
                format!(
                    "set {}, or {} for a server that needs no key",
                    endpoint.key_variable, endpoint.url_variable
                )
            }
        });
        let program = needs
            .program
            .as_ref()
            .map(|program| format!("put `{}` on PATH", program.name));
        endpoint
            .into_iter()
            .chain(program)
            .collect::<Vec<_>>()
            .join(" and ")
    });
    if needs.endpoint.is_some() {
        format!("{hint} (the `{id}` API provider)")
    } else {
        format!("{hint} (`{id}`)")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::plugin::bindings::provider_needs::Program;

    pub(crate) use crate::plugin::declares_nothing as nothing;

    pub(crate) fn api(id: &str, key_required: bool) -> (String, Needs) {
        let upper = id.to_ascii_uppercase();
        (
            id.into(),
            Needs {
                endpoint: Some(Endpoint {
                    url_variable: format!("{upper}_BASE_URL"),
                    default_url: format!("https://api.{id}.test"),
                    key_variable: format!("{upper}_API_KEY"),
                    key_required,
                    stream_variable: None,
                }),
                ..nothing()
            },
        )
    }

    pub(crate) fn cli(
        id: &str,
        program: &str,
        agent: bool,
        stands_in_for: Option<&str>,
    ) -> (String, Needs) {
        (
            id.into(),
            Needs {
                program: Some(Program {
                    name: program.into(),
                    environment: vec!["HOME".into()],
                    install_hint: format!("install {program}"),
                    agent,
                    home: None,
                }),
                stands_in_for: stands_in_for.map(String::from),
                ..nothing()
            },
        )
    }

    use crate::eval::provider::endpoint::tests::env_of;

    #[test]
    fn a_family_is_the_named_provider_then_its_stand_ins_in_order() {
        let declared = Declared::new(vec![
            cli("early", "e", false, Some("acme")),
            api("acme", true),
            cli("acme-cli", "a", false, Some("acme")),
            cli("agent", "a", true, None),
            cli("other", "o", false, Some("elsewhere")),
        ]);
        let ids = |asked: &str| {
            declared.family(asked).map(|family| {
                family
                    .iter()
                    .map(|(id, _)| id.to_string())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            ids("acme"),
            Some(vec!["acme".into(), "early".into(), "acme-cli".into()])
        );
        assert_eq!(ids("agent"), None, "nothing stands in for it");
        assert_eq!(ids("./p.wasm"), None);
        // A stand-in for what is no built-in: only the stand-ins.
        assert_eq!(ids("elsewhere"), Some(vec!["other".into()]));
        assert_eq!(
            declared.agents().map(|(id, _)| id).collect::<Vec<_>>(),
            ["agent"]
        );
        assert_eq!(
            declared.endpoints().map(|(id, ..)| id).collect::<Vec<_>>(),
            ["acme"]
        );
    }

    #[test]
    fn availability_follows_the_declared_endpoint_and_program() {
        let (_, keyed) = api("acme", true);
        let (_, keyless) = api("acme", false);
        for (needs, pairs, expected) in [
            (&keyed, &[][..], false),
            (&keyed, &[("ACME_API_KEY", "k")][..], true),
            (&keyed, &[("ACME_API_KEY", " ")][..], false),
            (&keyed, &[("ACME_BASE_URL", "http://x")][..], false),
            (&keyless, &[("ACME_BASE_URL", "http://x")][..], true),
            (&keyless, &[("ACME_API_KEY", "k")][..], true),
            (&keyless, &[][..], false),
        ] {
            let pairs: &'static [(&'static str, &'static str)] =
                Box::leak(Box::new(pairs.to_vec()));
            assert_eq!(available(needs, &env_of(pairs)), expected, "{pairs:?}");
        }
        let (_, missing) = cli("x", "surely-not-a-program-here", false, None);
        assert!(!available(&missing, &env_of(&[("PATH", "/nonexistent")])));
        assert!(available(&nothing(), &env_of(&[])));
    }

    #[test]
    fn the_way_to_run_a_provider_is_its_hint_else_said_from_its_declaration() {
        let (_, keyed) = api("acme", true);
        assert_eq!(
            way_to_run("acme", &keyed),
            "set ACME_API_KEY (the `acme` API provider)"
        );
        let (_, keyless) = api("acme", false);
        assert_eq!(
            way_to_run("acme", &keyless),
            "set ACME_API_KEY, or ACME_BASE_URL for a server that needs no key (the `acme` API provider)"
        );
        let (_, mut program) = cli("acme-cli", "acme", false, Some("acme"));
        assert_eq!(
            way_to_run("acme-cli", &program),
            "put `acme` on PATH (`acme-cli`)"
        );
        program.setup_hint = Some("install Acme so `acme` is on PATH".into());
        assert_eq!(
            way_to_run("acme-cli", &program),
            "install Acme so `acme` is on PATH (`acme-cli`)"
        );
    }
}
