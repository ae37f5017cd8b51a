//! Hostile components hit every limit and get a typed error naming the
//! plugin and the cause; the next call on the same session succeeds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cautilus::plugin::{Grants, Limits, PluginError, ScorerSession};
use serde_json::json;

use crate::support::{component, input, metered_registry, run, session_with};

fn hostile(limits: Limits) -> cautilus::plugin::ScorerSession {
    session_with(&component("hostile"), json!({}), limits, Grants::default())
        .expect("hostile loads")
}

fn assert_healthy(session: &mut cautilus::plugin::ScorerSession) {
    let after = session
        .score(&input("ok", None))
        .expect("the next call succeeds");
    assert_eq!(after.passed, Some(true));
}

#[test]
fn infinite_loop_hits_the_deadline_then_the_host_recovers() {
    let deadline = Duration::from_millis(300);
    let mut session = hostile(Limits {
        timeout: deadline,
        ..Limits::default()
    });
    let started = Instant::now();
    let error = session.score(&input("spin", None)).unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        matches!(error, PluginError::Deadline { limit_ms: 300, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("hostile"),
        "names the plugin: {error}"
    );
    // The error says the deadline stopped it; the bound only catches a
    // stop far past it (a loaded machine, e.g. several builds on two
    // cores, has taken 1.5 s to get there).
    assert!(
        elapsed < deadline * 10,
        "stopped after {elapsed:?}, more than ten times the {deadline:?} deadline"
    );
    assert_healthy(&mut session);
}

#[test]
fn memory_bomb_hits_the_memory_limit() {
    let mut session = hostile(Limits {
        memory_bytes: 32 * 1024 * 1024,
        ..Limits::default()
    });
    let error = session.score(&input("bomb", None)).unwrap_err();
    assert!(
        matches!(error, PluginError::MemoryLimit { limit_bytes, .. } if limit_bytes == 32 * 1024 * 1024),
        "{error}"
    );
    assert!(
        error.to_string().contains("memory limit of 32 MiB"),
        "{error}"
    );
    assert_healthy(&mut session);
}

#[test]
fn panic_reports_the_panic_message() {
    let mut session = hostile(Limits::default());
    let error = session.score(&input("panic", None)).unwrap_err();
    match &error {
        PluginError::Panic { plugin, message } => {
            assert_eq!(plugin, "hostile");
            assert!(
                message.contains("boom: the hostile scorer was asked to panic"),
                "{message}"
            );
        }
        other => panic!("expected a panic error, got {other}"),
    }
    assert_healthy(&mut session);
}

#[test]
fn fuel_budget_is_enforced() {
    let limits = Limits {
        fuel: Some(5_000_000),
        ..Limits::default()
    };
    let (plugin, scorer) = metered_registry()
        .resolve_scorer(&component("hostile"))
        .expect("hostile loads");
    let mut session = ScorerSession::new(
        plugin,
        &scorer,
        &json!({}),
        limits,
        Arc::new(Grants::default()),
    )
    .expect("hostile loads");
    let error = session.score(&input("burn", None)).unwrap_err();
    assert!(
        matches!(
            error,
            PluginError::FuelExhausted {
                fuel: 5_000_000,
                ..
            }
        ),
        "{error}"
    );
    assert_healthy(&mut session);
}

#[test]
fn output_over_the_limit_is_refused() {
    let mut session = hostile(Limits {
        output_bytes: 1024 * 1024,
        ..Limits::default()
    });
    let error = session.score(&input("huge", None)).unwrap_err();
    assert!(
        matches!(
            error,
            PluginError::OutputTooLarge {
                limit: 1_048_576,
                ..
            }
        ),
        "{error}"
    );
    assert_healthy(&mut session);
}

#[test]
fn guest_returned_errors_are_typed() {
    let mut session = hostile(Limits::default());
    let error = session.score(&input("fail", None)).unwrap_err();
    assert!(
        matches!(&error, PluginError::Guest { message, .. } if message == "the hostile scorer refuses"),
        "{error}"
    );
    let error = session.score(&input("unheard-of", None)).unwrap_err();
    assert!(matches!(error, PluginError::InvalidInput { .. }), "{error}");
    assert_healthy(&mut session);
}

#[test]
fn no_host_files_are_visible() {
    let mut session = hostile(Limits::default());
    let score = session.score(&input("read-file", None)).unwrap();
    let detail = score.detail.unwrap();
    assert_eq!(
        score.passed,
        Some(true),
        "the plugin saw something: {detail}"
    );
    assert!(detail.contains("file=Err"), "{detail}");
    assert!(detail.contains("dir=Err"), "{detail}");
}

#[test]
fn no_environment_or_arguments_are_visible() {
    // Through the real binary, with a secret in its environment.
    let mut command = crate::support::cautilus();
    command
        .args([
            "score",
            "--scorer",
            &component("hostile"),
            "--output",
            "read-env",
            "--json",
        ])
        .env("CAUTILUS_TEST_SECRET", "hunter2");
    let (code, stdout, stderr) = crate::support::output(command.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("vars=[]"), "{stdout}");
    assert!(stdout.contains("args=[]"), "{stdout}");
    assert!(!stdout.contains("hunter2"), "{stdout}");
}

#[test]
fn a_trap_through_the_cli_exits_1_with_the_cause() {
    let (code, _, stderr) = run(&[
        "score",
        "--scorer",
        &component("hostile"),
        "--output",
        "spin",
        "--timeout-ms",
        "200",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("plugin `hostile` exceeded its deadline of 200 ms"),
        "{stderr}"
    );
}

#[test]
fn a_fuel_budget_without_fuel_metering_is_refused_not_ignored() {
    // A runtime built without fuel counting cannot enforce a budget: the
    // session must not start rather than run unmetered.
    let error = session_with(
        &component("hostile"),
        json!({}),
        Limits {
            fuel: Some(5_000_000),
            ..Limits::default()
        },
        Grants::default(),
    )
    .and_then(|mut session| session.score(&input("burn", None)))
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("was given a fuel budget") && message.contains("counts no fuel"),
        "{message}"
    );
}

#[test]
fn fuel_budgets_from_the_command_line_are_enforced() {
    // `--fuel` builds a metered engine: a call past its budget is stopped,
    // one within it runs; without `--fuel` nothing counts fuel.
    let hostile = component("hostile");
    let score = |output: &str, fuel: Option<&str>| {
        let mut args = vec!["score", "--scorer", &hostile, "--output", output];
        if let Some(fuel) = fuel {
            args.extend(["--fuel", fuel]);
        }
        run(&args)
    };
    let (code, _, stderr) = score("burn", Some("5000000"));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("used up its fuel budget of 5000000 units"),
        "{stderr}"
    );
    let (code, stdout, stderr) = score("ok", Some("5000000"));
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Unmetered, the same loop runs until the deadline stops it.
    let (code, _, stderr) = run(&[
        "score",
        "--scorer",
        &hostile,
        "--output",
        "burn",
        "--timeout-ms",
        "300",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("exceeded its deadline of 300 ms") && !stderr.contains("fuel"),
        "{stderr}"
    );
}

#[test]
fn eval_test_with_a_fuel_budget_runs_on_a_metered_engine() {
    // The providers' calls get the budget: an ample one runs the suite (an
    // unmetered engine would refuse it), a tiny one stops the provider.
    let fixture = crate::support::repo().join("fixtures/eval/app/prompt/tagline.fixture.json");
    let ample = crate::support::eval_run(&fixture, &["--fuel", "10000000000"]);
    assert_eq!(ample.code, 0, "{}{}", ample.stdout, ample.stderr);
    assert!(ample.stdout.contains("2 passed"), "{}", ample.stdout);
    let tiny = crate::support::eval_run(&fixture, &["--fuel", "1000"]);
    let said = format!("{}{}", tiny.stdout, tiny.stderr);
    assert_ne!(tiny.code, 0, "{said}");
    assert!(
        said.contains("used up its fuel budget of 1000 units"),
        "{said}"
    );
}
