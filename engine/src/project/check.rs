//! Every suite of a project checked before any runs: `eval list` says
//! which fixtures are invalid, and `eval test` over the project runs
//! nothing (no provider set up, no model called, no records written) while
//! one of the suites it would run is. The check is the one `eval test`
//! makes of a single fixture before running it
//! ([`crate::quality::check`]).

use super::config::Loaded;
use super::manifest::{InvalidSuite, Manifest};
use crate::plugin::Registry;
use crate::quality::check::{CheckOptions, check_fixture};

/// Checks each suite of `manifest` (those `keep` selects) and moves every
/// invalid one from `suites` to `invalid`, in path order with the fixtures
/// that did not load.
pub fn check_suites(
    registry: &Registry,
    loaded: &Loaded,
    manifest: &mut Manifest,
    options: &CheckOptions<'_>,
    keep: impl Fn(&super::manifest::SuiteEntry) -> bool,
) {
    let suites = std::mem::take(&mut manifest.suites);
    for suite in suites {
        if !keep(&suite) {
            manifest.suites.push(suite);
            continue;
        }
        match check_fixture(registry, &loaded.root.join(&suite.path), options) {
            Ok(_) => manifest.suites.push(suite),
            Err(error) => manifest.invalid.push(InvalidSuite {
                path: suite.path.clone(),
                id: Some(suite.id.clone()),
                lines_are_ours: error.lines_are_ours(),
                error: error.to_string(),
            }),
        }
    }
    manifest.invalid.sort_by(|a, b| a.path.cmp(&b.path));
}

/// The invalid suites as the terminal shows them: a line per fixture, its
/// problems indented below it; every text escaped.
pub fn print_invalid(
    out: &mut impl std::io::Write,
    invalid: &[InvalidSuite],
) -> std::io::Result<()> {
    for suite in invalid {
        let error = if suite.lines_are_ours {
            crate::term::lines(&suite.error).into_owned()
        } else {
            crate::term::inline(&suite.error).into_owned()
        };
        let id = suite
            .id
            .as_deref()
            .map(|id| format!(" (suite `{}`)", crate::term::inline(id)))
            .unwrap_or_default();
        writeln!(out, "  {}{id}:", crate::term::inline(&suite.path))?;
        for line in error.lines() {
            writeln!(out, "    {line}")?;
        }
    }
    Ok(())
}
