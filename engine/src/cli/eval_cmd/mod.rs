//! `cautilus eval …`: the clap enum of the subcommands and the dispatch,
//! one file per subcommand (`test` in test_args.rs (its flags) and test.rs,
//! with project_run.rs for a run without `--fixture`; evaluate.rs,
//! validate.rs, compare.rs, list.rs, promote.rs, merge.rs, state.rs), and how a
//! finished run is printed and turned into an exit status (summary.rs).

use std::process::ExitCode;

use clap::Subcommand;

mod compare;
mod evaluate;
mod list;
mod merge;
mod project_run;
mod promote;
mod state;
mod summary;
mod test;
mod test_args;
mod validate;

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Run a fixture's cases through a provider and score them
    #[command(after_help = test_args::TEST_EXAMPLES)]
    Test(Box<test_args::TestArgs>),
    /// Score an observed packet produced by any runner
    #[command(after_help = evaluate::EXAMPLES)]
    Evaluate(evaluate::EvaluateArgs),
    /// Check a fixture offline (schema, taxonomy, preset case shape); runs nothing
    #[command(after_help = validate::EXAMPLES)]
    Validate(validate::ValidateArgs),
    /// Compare two runs: which cases changed verdict (regressed, fixed,
    /// new, removed), and the cross-runtime rules between their harnesses
    #[command(after_help = compare::EXAMPLES)]
    Compare(compare::CompareArgs),
    /// List the project's suites (its cautilus.toml's fixtures) without running them
    #[command(after_help = list::LIST_EXAMPLES)]
    List(list::ListArgs),
    /// Make a finished run the suite's committed baseline
    /// (<records>/baselines/<suiteId>.json); later runs compare with it
    #[command(after_help = promote::EXAMPLES)]
    Promote(promote::PromoteArgs),
    /// Join the shard runs of one experiment (`--shard K/N`) into one record
    #[command(after_help = merge::EXAMPLES)]
    Merge(merge::MergeArgs),
    /// Say whether a run directory holds no run, an unfinished one
    /// (`--resume` continues it) or a completed one
    #[command(after_help = state::EXAMPLES)]
    State(state::StateArgs),
}

pub fn run(command: EvalCommand) -> anyhow::Result<ExitCode> {
    match command {
        EvalCommand::Test(args) => test::test(*args),
        EvalCommand::Evaluate(args) => evaluate::evaluate(args),
        EvalCommand::Validate(args) => validate::validate(args),
        EvalCommand::Compare(args) => compare::compare(args),
        EvalCommand::List(args) => list::list(args),
        EvalCommand::Promote(args) => promote::promote(args),
        EvalCommand::Merge(args) => merge::merge(args),
        EvalCommand::State(args) => state::state(args),
    }
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;
    use clap::{CommandFactory, Parser};

    use super::*;

    /// `cautilus eval …` as the root command parses it.
    #[derive(Debug, Parser)]
    struct Eval {
        #[command(subcommand)]
        command: EvalCommand,
    }

    fn parse(args: &[&str]) -> Result<EvalCommand, clap::Error> {
        Eval::try_parse_from(std::iter::once("eval").chain(args.iter().copied()))
            .map(|eval| eval.command)
    }

    fn test_args(args: &[&str]) -> test_args::TestArgs {
        match parse(&[&["test"], args].concat()) {
            Ok(EvalCommand::Test(args)) => *args,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn the_subcommands_are_well_formed() {
        // Conflicts and flattened flags name arguments that exist.
        Eval::command().debug_assert();
    }

    #[test]
    fn test_flags_parse_into_their_values() {
        let args = test_args(&[
            "--fixture",
            "f.json",
            "--shard",
            "2/4",
            "--judge",
            "openai/gpt-5-mini",
            "--variant",
            "a",
            "--variant",
            "b*",
        ]);
        assert_eq!(args.shard, Some((2, 4)));
        assert_eq!(args.judge, Some(("openai".into(), "gpt-5-mini".into())));
        assert_eq!(args.variant, ["a", "b*"]);
        let args = test_args(&["--resume", "runs/1", "--quiet"]);
        assert!(args.resume.is_some() && args.fixture.is_none() && args.quiet);
    }

    #[test]
    fn conflicting_test_flags_are_refused() {
        for flags in [
            ["--resume", "r", "--fixture", "f"],
            ["--resume", "r", "--provider", "openai"],
            ["--resume", "r", "--case", "c"],
            ["--suite", "s", "--fixture", "f"],
            ["--reuse-outputs", "r", "--provider", "openai"],
            ["--reuse-outputs", "r", "--replay", "refresh"],
        ] {
            let error = parse(&[&["test"], &flags[..]].concat()).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::ArgumentConflict, "{flags:?}");
        }
    }

    #[test]
    fn bad_values_and_missing_arguments_are_refused() {
        for args in [
            &["test", "--shard", "5/4"][..],
            &["test", "--jobs", "0"],
            &["test", "--trials", "101"],
            &["test", "--judge", "gpt-5-mini"],
            &["test", "--replay", "sometimes"],
        ] {
            let error = parse(args).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::ValueValidation, "{args:?}");
        }
        for args in [
            &["evaluate"][..],
            &["validate"],
            &["compare", "old"],
            &["promote"],
            &["merge"],
            &["state"],
        ] {
            let error = parse(args).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::MissingRequiredArgument, "{args:?}");
        }
    }

    #[test]
    fn each_subcommand_dispatches_to_its_args() {
        assert!(matches!(
            parse(&["evaluate", "--input", "p.json"]),
            Ok(EvalCommand::Evaluate(_))
        ));
        assert!(matches!(
            parse(&["validate", "--fixture", "f.json"]),
            Ok(EvalCommand::Validate(_))
        ));
        assert!(matches!(
            parse(&["compare", "a", "latest"]),
            Ok(EvalCommand::Compare(_))
        ));
        assert!(matches!(parse(&["list"]), Ok(EvalCommand::List(_))));
        assert!(matches!(
            parse(&["promote", "latest"]),
            Ok(EvalCommand::Promote(_))
        ));
        assert!(matches!(
            parse(&["merge", "a", "b"]),
            Ok(EvalCommand::Merge(_))
        ));
        assert!(matches!(
            parse(&["state", "shard-1"]),
            Ok(EvalCommand::State(_))
        ));
    }
}
