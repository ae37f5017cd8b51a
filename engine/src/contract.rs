//! The plugin contract's identity and its compatibility rule, shared by the
//! runtime (which loads components) and packs (which declare the contract
//! their components use).
//!
//! Below 1.0, a release line is `0.<minor>`: additive changes bump the
//! patch, breaking ones the minor. A host implementing `0.1.x` serves every
//! component built against `0.1.0` ..= `0.1.x` (wasmtime resolves their
//! imports and exports across patch versions); a component built against a
//! newer patch may use what this host lacks, and one of another line
//! cannot be served.

/// The WIT package every plugin is built against.
pub const WIT_PACKAGE: &str = "cautilus:plugin";
/// The WIT version this host implements.
pub const WIT_VERSION: &str = "0.1.1";

/// Whether a component built against contract `found` can run on a host
/// implementing `host`; `Err` says why not and what to do.
pub fn compatible(found: &str, host: &str) -> Result<(), String> {
    let host = semver::Version::parse(host).expect("the host's version is valid");
    let Ok(version) = semver::Version::parse(found) else {
        return Err(format!(
            "`{found}` is not a version; rebuild it against cautilus-sdk {host}"
        ));
    };
    let same_line = version.major == host.major && (host.major > 0 || version.minor == host.minor);
    if !same_line {
        return Err(format!(
            "cautilus:plugin@{found} is not compatible with this host's {host} (it serves {}); rebuild it against cautilus-sdk {host}",
            line(&host)
        ));
    }
    if version > host {
        return Err(format!(
            "cautilus:plugin@{found} is newer than this host's {host}; upgrade cautilus"
        ));
    }
    Ok(())
}

fn line(host: &semver::Version) -> String {
    if host.major == 0 {
        format!("0.{}.0 to {host}", host.minor)
    } else {
        format!("{}.0.0 to {host}", host.major)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_patches_of_the_same_line_are_served() {
        let table = [
            ("0.1.0", "0.1.0", true),
            ("0.1.0", "0.1.3", true),
            ("0.1.2", "0.1.3", true),
            ("0.1.4", "0.1.3", false),
            ("0.2.0", "0.1.3", false),
            ("0.0.9", "0.1.3", false),
            ("1.0.0", "1.2.0", true),
            ("1.3.0", "1.2.0", false),
            ("2.0.0", "1.2.0", false),
            ("x", "0.1.0", false),
        ];
        for (found, host, ok) in table {
            assert_eq!(compatible(found, host).is_ok(), ok, "{found} on {host}");
        }
        assert!(
            compatible("0.1.4", "0.1.3")
                .unwrap_err()
                .contains("upgrade cautilus")
        );
        assert!(
            compatible("0.2.0", "0.1.3")
                .unwrap_err()
                .contains("0.1.0 to 0.1.3")
        );
    }
}
