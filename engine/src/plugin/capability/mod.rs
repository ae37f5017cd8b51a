//! One policy per capability: what a plugin's store may do through each
//! host import, decided once when the store is made.
//!
//! Three things bound a plugin, and a call needs all three:
//! - what it **requested** in its `describe` (`plugin-info.capabilities`);
//! - for a pack's plugin, what its pack was **granted at install**
//!   ([`Ceiling`], from the project's `cautilus.lock`);
//! - what the **run grants** ([`Grants`]: the suite, `cautilus.toml`, the CLI).
//!
//! Each module turns those three into one typed policy with an `allows`
//! that answers yes or the refusal message the guest gets as a `denied`
//! error: [`http::HttpPolicy`] (host names), [`process::ProcessPolicy`]
//! (programs, and the variables a plugin may set), [`model::ModelPolicy`]
//! (the run's model); [`log::LogSink`] is the one capability every plugin
//! has, bounded per store. The host imports ([`super::imports`]) see only
//! their own policy.
//!
//! The comparison rules, one per kind of name: host names compare
//! case-insensitively (they are DNS names; every side is lowercased once,
//! here, as a pack manifest's `http:<host>` already is), and `*` in a
//! request means "whichever hosts the run grants" (within the pack's
//! ceiling); programs compare exactly (`python3` is not `Python3`).
//!
//! A new capability gets a module here (its policy and a table test of
//! allowed and denied rows), a field in [`Grants`] if the run grants it,
//! and a host import in [`super::imports`] holding the policy in its own
//! context.

pub mod http;
pub mod log;
pub mod model;
pub mod process;

use std::sync::Arc;

use super::bindings::types::Capability;
use super::grants::Grants;

/// What a pack's user granted it at install (its `--grant`s), and the
/// pack's `name@version` to say so when a call is refused.
#[derive(Debug, Clone)]
pub struct Ceiling {
    pub granted: Vec<crate::pack::Capability>,
    pub pack: String,
}

/// The plugin's side of every policy: what it asked for in `describe`
/// and, for a pack's plugin, its pack's ceiling.
#[derive(Debug, Default, Clone)]
pub struct Requested {
    pub asked: Vec<Capability>,
    pub ceiling: Option<Ceiling>,
}

impl Requested {
    /// Whether the plugin may call a model at all (requested, and within
    /// its pack's ceiling); the run's grant still decides.
    pub fn model(&self) -> bool {
        model::requested(self)
    }

    /// The host names requested: `*` entries kept as they are.
    fn hosts(&self) -> impl Iterator<Item = &String> {
        self.asked.iter().flat_map(|c| match c {
            Capability::Http(hosts) => hosts.as_slice(),
            _ => &[],
        })
    }

    /// The programs requested.
    fn programs(&self) -> impl Iterator<Item = &String> {
        self.asked.iter().flat_map(|c| match c {
            Capability::Process(programs) => programs.as_slice(),
            _ => &[],
        })
    }

    /// Whether the pack's ceiling (if any) holds `capability`.
    fn within_ceiling(&self, capability: &crate::pack::Capability) -> bool {
        self.ceiling
            .as_ref()
            .is_none_or(|c| c.granted.contains(capability))
    }
}

/// Whom a refusal names: the plugin, and its pack if it has one.
#[derive(Debug, Clone)]
pub struct Origin {
    plugin: Arc<str>,
    pack: Option<String>,
}

impl Origin {
    pub fn new(plugin: Arc<str>, requested: &Requested) -> Self {
        Self {
            plugin,
            pack: requested.ceiling.as_ref().map(|c| c.pack.clone()),
        }
    }

    /// Why a call needing `capability` (`model`, `http:<host>`,
    /// `process:<program>`) is refused before the run's grants are looked at.
    pub fn not_requested(&self, capability: &str) -> String {
        let plugin = &self.plugin;
        match &self.pack {
            None => format!("plugin `{plugin}` did not request `{capability}` in its describe"),
            Some(pack) => format!(
                "plugin `{plugin}` may not use `{capability}`: it did not request it, or its pack {pack} was not granted it at install (`cautilus pack install <source> --grant {capability}`)"
            ),
        }
    }
}

/// The policies of one store, each built once from the three sides.
pub struct Policies {
    pub model: model::ModelPolicy,
    pub http: http::HttpPolicy,
    pub process: process::ProcessPolicy,
}

impl Policies {
    pub fn new(plugin: Arc<str>, requested: &Requested, grants: &Grants) -> Self {
        let origin = Origin::new(plugin, requested);
        Self {
            model: model::ModelPolicy::new(origin.clone(), requested, grants),
            http: http::HttpPolicy::new(origin.clone(), requested, grants),
            process: process::ProcessPolicy::new(origin, requested, grants),
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Shared builders of the policies' table tests.
    use super::*;
    pub use crate::pack::Capability as Granted;

    pub fn plain(asked: Vec<Capability>) -> Requested {
        Requested {
            asked,
            ceiling: None,
        }
    }

    pub fn packed(asked: Vec<Capability>, granted: Vec<Granted>) -> Requested {
        Requested {
            asked,
            ceiling: Some(Ceiling {
                granted,
                pack: "acme@1.0.0".into(),
            }),
        }
    }

    pub fn origin(requested: &Requested) -> Origin {
        Origin::new("p".into(), requested)
    }

    /// The refusal of a call that was not requested, as the plugin `p` gets it.
    pub fn not_requested(requested: &Requested, capability: &str) -> String {
        origin(requested).not_requested(capability)
    }

    #[test]
    fn refusals_name_the_plugin_and_its_pack() {
        assert_eq!(
            not_requested(&plain(vec![]), "model"),
            "plugin `p` did not request `model` in its describe"
        );
        assert_eq!(
            not_requested(&packed(vec![], vec![]), "http:a.com"),
            "plugin `p` may not use `http:a.com`: it did not request it, or its pack acme@1.0.0 was not granted it at install (`cautilus pack install <source> --grant http:a.com`)"
        );
    }
}
