//! The `process` policy: which programs a store may run, and which
//! environment variables a plugin may set for them.
//!
//! Programs compare exactly (`python3` is not `Python3`, and no `*`): a
//! program runs only if requested, within the pack's ceiling, and granted
//! by the run. A plugin may set variables of its own, but not one that
//! swaps the program or what it loads, nor one the host passes the program
//! itself (its login, endpoint, proxy, certificates).

use std::collections::BTreeSet;

use super::{Origin, Requested};
use crate::plugin::grants::Grants;

/// Which programs one store may run, and which variables it may not set.
#[derive(Debug, Clone)]
pub struct ProcessPolicy {
    origin: Origin,
    requested: BTreeSet<String>,
    granted: BTreeSet<String>,
    /// Variables of the host's environment the run passes granted
    /// programs ([`Grants::program_env`]): the host's, not the plugin's.
    host_env: Vec<String>,
}

impl ProcessPolicy {
    pub fn new(origin: Origin, requested: &Requested, grants: &Grants) -> Self {
        Self {
            requested: requested
                .programs()
                .filter(|p| {
                    requested.within_ceiling(&crate::pack::Capability::Process((*p).clone()))
                })
                .cloned()
                .collect(),
            granted: grants.programs.iter().cloned().collect(),
            host_env: grants.program_env.clone(),
            origin,
        }
    }

    /// Whether `program` may run; the refusal otherwise.
    pub fn allows(&self, program: &str) -> Result<(), String> {
        if !self.requested.contains(program) {
            return Err(self.origin.not_requested(&format!("process:{program}")));
        }
        if !self.granted.contains(program) {
            return Err(format!("this run does not grant running `{program}`"));
        }
        Ok(())
    }

    /// Whether a plugin may set the variables `env` for a program; the
    /// refusal (naming the first variable it may not set) otherwise.
    pub fn allows_env(&self, env: &[(String, String)]) -> Result<(), String> {
        if let Some((key, _)) = env.iter().find(|(key, _)| is_loader_variable(key)) {
            return Err(format!(
                "plugins may not set `{key}`: it changes which program runs or what it loads"
            ));
        }
        // A plugin setting one of the host's variables could send the
        // inherited key elsewhere.
        if let Some((key, _)) = env.iter().find(|(key, _)| {
            self.host_env
                .iter()
                .any(|inherited| inherited.eq_ignore_ascii_case(key))
                || is_trust_variable(key)
        }) {
            return Err(format!(
                "plugins may not set `{key}`: the host sets where the program connects and what it trusts"
            ));
        }
        Ok(())
    }
}

/// Environment variables that would let a plugin swap the granted program
/// or inject code into it.
fn is_loader_variable(key: &str) -> bool {
    let key = key.to_ascii_uppercase();
    key == "PATH"
        || key.starts_with("LD_")
        || key.starts_with("DYLD_")
        || [
            "BASH_ENV",
            "ENV",
            "IFS",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
        ]
        .contains(&key.as_str())
        || key.starts_with("GIT_CONFIG")
}

/// Variables that change where a program connects or what it trusts.
fn is_trust_variable(key: &str) -> bool {
    let key = key.to_ascii_uppercase();
    key.ends_with("_PROXY")
        || key.ends_with("_BASE_URL")
        || [
            "NODE_TLS_REJECT_UNAUTHORIZED",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
        ]
        .contains(&key.as_str())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Granted, not_requested, origin, packed, plain};
    use super::*;
    use crate::plugin::bindings::types::Capability as Asked;

    fn programs(list: &[&str]) -> Asked {
        Asked::Process(list.iter().map(|p| p.to_string()).collect())
    }

    fn grant(list: &[&str]) -> Grants {
        Grants {
            programs: list.iter().map(|p| p.to_string()).collect(),
            program_env: vec!["OPENAI_API_KEY".into()],
            ..Grants::default()
        }
    }

    const NO_GRANT: &str = "this run does not grant running `sh`";

    #[test]
    fn a_program_needs_the_request_the_pack_and_the_run() {
        let refused = |r: &Requested| Some(not_requested(r, "process:sh"));
        // (requested, run grant, program asked, None = allowed / Some(refusal))
        let rows: Vec<(Requested, Grants, &str, Option<String>)> = vec![
            (plain(vec![programs(&["sh"])]), grant(&["sh"]), "sh", None),
            (
                plain(vec![programs(&["python3"]), programs(&["sh"])]),
                grant(&["sh"]),
                "sh",
                None,
            ),
            (
                plain(vec![programs(&["sh"])]),
                grant(&[]),
                "sh",
                Some(NO_GRANT.into()),
            ),
            (
                plain(vec![programs(&["sh"])]),
                grant(&["python3"]),
                "sh",
                Some(NO_GRANT.into()),
            ),
            // Exact: case matters, and `*` is no wildcard.
            (
                plain(vec![programs(&["SH"])]),
                grant(&["sh"]),
                "sh",
                refused(&plain(vec![])),
            ),
            (
                plain(vec![programs(&["sh"])]),
                grant(&["SH"]),
                "sh",
                Some(NO_GRANT.into()),
            ),
            (
                plain(vec![programs(&["*"])]),
                grant(&["sh"]),
                "sh",
                refused(&plain(vec![])),
            ),
            (
                plain(vec![Asked::Http(vec!["sh".into()]), Asked::Model]),
                grant(&["sh"]),
                "sh",
                refused(&plain(vec![])),
            ),
            // A pack's ceiling narrows the request.
            (
                packed(vec![programs(&["sh"])], vec![Granted::Process("sh".into())]),
                grant(&["sh"]),
                "sh",
                None,
            ),
            (
                packed(
                    vec![programs(&["sh", "python3"])],
                    vec![Granted::Process("python3".into())],
                ),
                grant(&["sh", "python3"]),
                "sh",
                refused(&packed(vec![], vec![])),
            ),
            (
                packed(vec![programs(&["sh"])], vec![]),
                grant(&["sh"]),
                "sh",
                refused(&packed(vec![], vec![])),
            ),
            (
                packed(vec![], vec![Granted::Process("sh".into())]),
                grant(&["sh"]),
                "sh",
                refused(&packed(vec![], vec![])),
            ),
        ];
        for (requested, grants, program, expected) in rows {
            let policy = ProcessPolicy::new(origin(&requested), &requested, &grants);
            assert_eq!(
                policy.allows(program).err(),
                expected,
                "{requested:?} with {:?} running {program}",
                grants.programs
            );
        }
    }

    #[test]
    fn a_plugin_sets_only_its_own_variables() {
        let requested = plain(vec![programs(&["sh"])]);
        let policy = ProcessPolicy::new(origin(&requested), &requested, &grant(&["sh"]));
        type Env = Vec<(String, String)>;
        let env = |pairs: &[&str]| -> Env {
            pairs
                .iter()
                .map(|k| (k.to_string(), "x".to_string()))
                .collect()
        };
        let loader = |k: &str| {
            format!("plugins may not set `{k}`: it changes which program runs or what it loads")
        };
        let trust = |k: &str| {
            format!(
                "plugins may not set `{k}`: the host sets where the program connects and what it trusts"
            )
        };
        let rows: Vec<(Env, Option<String>)> = vec![
            (env(&[]), None),
            (env(&["LANG", "NO_COLOR", "MY_FLAG"]), None),
            (env(&["LANG", "ld_preload"]), Some(loader("ld_preload"))),
            (env(&["PATH"]), Some(loader("PATH"))),
            // The host's own variable, in any case.
            (env(&["openai_api_key"]), Some(trust("openai_api_key"))),
            (env(&["HTTPS_PROXY"]), Some(trust("HTTPS_PROXY"))),
            // Loader variables are named first, wherever they stand.
            (env(&["HTTPS_PROXY", "BASH_ENV"]), Some(loader("BASH_ENV"))),
        ];
        for (env, expected) in rows {
            assert_eq!(policy.allows_env(&env).err(), expected, "{env:?}");
        }
    }

    #[test]
    fn trust_variables_are_the_hosts() {
        for key in [
            "HTTPS_PROXY",
            "all_proxy",
            "ANTHROPIC_BASE_URL",
            "NODE_TLS_REJECT_UNAUTHORIZED",
        ] {
            assert!(is_trust_variable(key), "{key}");
        }
        assert!(!is_trust_variable("NO_COLOR"));
    }

    #[test]
    fn loader_variables_are_refused() {
        for key in [
            "PATH",
            "ld_preload",
            "DYLD_INSERT_LIBRARIES",
            "BASH_ENV",
            "GIT_CONFIG_GLOBAL",
        ] {
            assert!(is_loader_variable(key), "{key}");
        }
        assert!(!is_loader_variable("LANG"));
    }
}
