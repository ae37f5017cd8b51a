//! `cautilus eval validate`: check a fixture offline; runs nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::cli::registry;
use crate::quality::check::Checked;
use crate::term::shown;

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus eval validate --fixture fixtures/eval/app/prompt/tagline.fixture.json

Exit status: 0 valid, 2 invalid (the error names the file and JSON path).";

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The fixture to check
    #[arg(long, value_name = "FILE")]
    pub(super) fixture: PathBuf,
    /// Every path the fixture names must lie inside DIR (see `eval test`)
    #[arg(long, value_name = "DIR")]
    pub(super) path_root: Option<PathBuf>,
}

pub(super) fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let registry = registry()?;
    let _preloading = registry.preload_builtins();
    // The project's `[judge]` stands in where the fixture names none.
    let cwd = std::env::current_dir()?;
    let (project, config) = crate::project::open(&cwd, None)?;
    // Its `[providers.<id>]` tables are checked as `eval test` checks them.
    crate::cli::provider_env(registry, &project)?;
    let default_judge = config
        .and(project.config.judge.as_ref())
        .map(crate::project::config::ConfigJudge::to_fixture_value);
    let checked = crate::quality::check::check_fixture(
        registry,
        &args.fixture,
        &crate::quality::check::CheckOptions {
            path_root: args.path_root.as_deref(),
            default_judge: default_judge.as_ref(),
            ..Default::default()
        },
    )?;
    crate::outln!("{}: {}", shown(args.fixture.display()), described(&checked));
    Ok(ExitCode::SUCCESS)
}

/// What a valid fixture is, in one line: its kind, id and size.
fn described(checked: &Checked) -> String {
    match checked.steps {
        Some(steps) => format!(
            "valid steps fixture `{}` with {steps} step(s)",
            shown(&checked.suite_id)
        ),
        None => {
            let variants = if checked.variants == 0 {
                String::new()
            } else {
                format!(", {} variant(s)", checked.variants)
            };
            format!(
                "valid {} fixture `{}` with {} case(s){variants}",
                checked.pair,
                shown(&checked.suite_id),
                checked.cases
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(cases: usize, variants: usize, steps: Option<usize>) -> Checked {
        Checked {
            suite_id: "support".into(),
            pair: "app/chat".into(),
            cases,
            variants,
            steps,
        }
    }

    #[test]
    fn a_valid_fixture_is_described_by_kind_id_and_size() {
        assert_eq!(
            described(&checked(3, 0, None)),
            "valid app/chat fixture `support` with 3 case(s)"
        );
        assert_eq!(
            described(&checked(1, 2, None)),
            "valid app/chat fixture `support` with 1 case(s), 2 variant(s)"
        );
        // A steps fixture counts its steps, whatever its cases and variants.
        for variants in [0, 2] {
            assert_eq!(
                described(&checked(0, variants, Some(4))),
                "valid steps fixture `support` with 4 step(s)"
            );
        }
    }

    #[test]
    fn a_hostile_suite_id_is_shown_escaped() {
        let mut hostile = checked(1, 0, None);
        hostile.suite_id = "evil\u{1b}[2J\nline".into();
        for steps in [None, Some(1)] {
            hostile.steps = steps;
            let line = described(&hostile);
            assert!(!line.contains(['\u{1b}', '\n']), "{line:?}");
            assert!(line.contains("evil"), "{line:?}");
        }
    }
}
