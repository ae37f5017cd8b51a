//! The `http` policy: which host names a store may reach.
//!
//! Host names compare case-insensitively: every side is lowercased once
//! here ([`host_key`]), and an asked host is lowercased before it is looked
//! up. A `*` in the request means "whichever hosts the run grants" (an API
//! provider whose endpoint the user chooses); for a pack's plugin, the
//! pack's install grant narrows it to the hosts granted there.

use std::collections::BTreeSet;

use super::{Origin, Requested};
use crate::plugin::grants::Grants;

/// The one way host names are compared: ASCII case folded.
pub fn host_key(host: &str) -> String {
    host.to_ascii_lowercase()
}

/// The hosts a plugin requested (within its pack's ceiling).
#[derive(Debug, Clone, PartialEq)]
enum Hosts {
    /// `*` without a pack ceiling: whatever the run grants.
    Any,
    Only(BTreeSet<String>),
}

/// Which hosts one store may reach over `http`.
#[derive(Debug, Clone)]
pub struct HttpPolicy {
    origin: Origin,
    requested: Hosts,
    granted: BTreeSet<String>,
}

impl HttpPolicy {
    pub fn new(origin: Origin, requested: &Requested, grants: &Grants) -> Self {
        let any = requested.hosts().any(|h| h == "*");
        let asked: BTreeSet<String> = requested.hosts().map(|h| host_key(h)).collect();
        let requested = match &requested.ceiling {
            None if any => Hosts::Any,
            None => Hosts::Only(asked),
            Some(ceiling) => Hosts::Only(
                ceiling
                    .granted
                    .iter()
                    .filter_map(|g| match g {
                        crate::pack::Capability::Http(host) => Some(host_key(host)),
                        _ => None,
                    })
                    .filter(|host| any || asked.contains(host))
                    .collect(),
            ),
        };
        Self {
            origin,
            requested,
            granted: grants.http_hosts.iter().map(|h| host_key(h)).collect(),
        }
    }

    /// Whether a request to `host` may be sent; the refusal otherwise.
    pub fn allows(&self, host: &str) -> Result<(), String> {
        let host = host_key(host);
        let requested = match &self.requested {
            Hosts::Any => true,
            Hosts::Only(hosts) => hosts.contains(&host),
        };
        if !requested {
            return Err(self.origin.not_requested(&format!("http:{host}")));
        }
        if !self.granted.contains(&host) {
            return Err(format!("this run does not grant http access to `{host}`"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Granted, not_requested, origin, packed, plain};
    use super::*;
    use crate::plugin::bindings::types::Capability as Asked;

    fn hosts(list: &[&str]) -> Asked {
        Asked::Http(list.iter().map(|h| h.to_string()).collect())
    }

    fn grant(list: &[&str]) -> Grants {
        Grants {
            http_hosts: list.iter().map(|h| h.to_string()).collect(),
            ..Grants::default()
        }
    }

    const NO_GRANT: &str = "this run does not grant http access to `api.a.com`";

    #[test]
    fn a_host_needs_the_request_the_pack_and_the_run() {
        let a = "api.a.com";
        // (requested, run grant, host asked, None = allowed / Some(refusal))
        let rows: Vec<(Requested, Grants, &str, Option<String>)> = vec![
            (plain(vec![hosts(&[a])]), grant(&[a]), a, None),
            // Case never matters, on any side.
            (plain(vec![hosts(&["API.A.com"])]), grant(&[a]), a, None),
            (plain(vec![hosts(&[a])]), grant(&["Api.A.COM"]), a, None),
            (plain(vec![hosts(&[a])]), grant(&[a]), "API.A.COM", None),
            // `*` asks for whatever the run grants, and no more.
            (plain(vec![hosts(&["*"])]), grant(&[a]), a, None),
            (
                plain(vec![hosts(&["*"])]),
                grant(&["api.b.com"]),
                a,
                Some(NO_GRANT.into()),
            ),
            (
                plain(vec![hosts(&["*"])]),
                grant(&[]),
                a,
                Some(NO_GRANT.into()),
            ),
            // Not requested: refused before the grant is looked at.
            (
                plain(vec![hosts(&["api.b.com"])]),
                grant(&[a]),
                a,
                Some(not_requested(&plain(vec![]), "http:api.a.com")),
            ),
            (
                plain(vec![Asked::Model, Asked::Process(vec![a.into()])]),
                grant(&[a]),
                a,
                Some(not_requested(&plain(vec![]), "http:api.a.com")),
            ),
            (
                plain(vec![hosts(&[a])]),
                grant(&[]),
                a,
                Some(NO_GRANT.into()),
            ),
            (
                plain(vec![hosts(&["a.com"])]),
                grant(&["a.com"]),
                "api.a.com",
                Some(not_requested(&plain(vec![]), "http:api.a.com")),
            ),
        ];
        for (requested, grants, host, expected) in rows {
            let policy = HttpPolicy::new(origin(&requested), &requested, &grants);
            assert_eq!(
                policy.allows(host).err(),
                expected,
                "{requested:?} with {:?} asking {host}",
                grants.http_hosts
            );
        }
    }

    #[test]
    fn a_pack_ceiling_narrows_the_request() {
        let a = "api.a.com";
        let refused = |requested: &Requested| Some(not_requested(requested, "http:api.a.com"));
        // (requested within its pack's grants, host asked, expected)
        let rows: Vec<(Requested, &str, bool)> = vec![
            (
                packed(vec![hosts(&[a])], vec![Granted::Http(a.into())]),
                a,
                true,
            ),
            (
                packed(vec![hosts(&["API.A.COM"])], vec![Granted::Http(a.into())]),
                a,
                true,
            ),
            // Asked, but the pack was granted another host, or nothing.
            (
                packed(vec![hosts(&[a])], vec![Granted::Http("api.b.com".into())]),
                a,
                false,
            ),
            (packed(vec![hosts(&[a])], vec![]), a, false),
            (packed(vec![hosts(&[a])], vec![Granted::Model]), a, false),
            // Granted at install but never asked.
            (
                packed(vec![hosts(&["api.b.com"])], vec![Granted::Http(a.into())]),
                a,
                false,
            ),
            // `*` gets the hosts the pack was granted, no more.
            (
                packed(vec![hosts(&["*"])], vec![Granted::Http(a.into())]),
                a,
                true,
            ),
            (
                packed(vec![hosts(&["*"])], vec![Granted::Http("api.b.com".into())]),
                a,
                false,
            ),
        ];
        let grants = grant(&[a, "api.b.com"]);
        for (requested, host, allowed) in rows {
            let policy = HttpPolicy::new(origin(&requested), &requested, &grants);
            let expected = if allowed { None } else { refused(&requested) };
            assert_eq!(policy.allows(host).err(), expected, "{requested:?}");
        }
    }
}
