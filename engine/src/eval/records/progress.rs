//! Live progress on a terminal: a bar on stderr with cases done / total,
//! passed and failed so far, elapsed time, ETA and cost so far, then one
//! summary line when the run ends.
//!
//! It exists only when the CLI turns it on ([`enable`]: stderr is a
//! terminal, and neither `--json` nor `--quiet`); everywhere else every
//! call here is a no-op, so piped output and records never see it. The
//! run's case lines (stdout) are printed through [`print`], which lifts
//! the bar while they are written.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::plugin::bindings::preset_api::CaseStatus;

static PROGRESS: OnceLock<Progress> = OnceLock::new();

struct Progress {
    bar: ProgressBar,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    passed: u64,
    failed: u64,
    cost_usd: f64,
    costed: bool,
    /// Groups an experiment will run (`None`: one plain run).
    planned_groups: Option<usize>,
    started_groups: usize,
    /// Cases of the groups started so far.
    known: u64,
    finished: bool,
    /// Several suites share the bar (a project run): the total is what
    /// the started suites hold, never an estimate.
    open_ended: bool,
}

impl State {
    fn message(&self) -> String {
        let mut text = format!("{} passed, {} failed", self.passed, self.failed);
        if self.costed {
            text.push_str(&format!(", ${:.4}", self.cost_usd));
        }
        text
    }
}

/// Turns the progress bar on for this process (the CLI decides when).
pub fn enable() {
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr_with_hz(10));
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} cases · {msg} · ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let _ = PROGRESS.set(Progress {
        bar,
        state: Mutex::new(State::default()),
    });
}

fn with(f: impl FnOnce(&ProgressBar, &mut State)) {
    if let Some(p) = PROGRESS.get() {
        let mut state = p.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&p.bar, &mut state);
    }
}

/// An experiment is about to run `groups` groups of cases (the total is
/// estimated from the first groups' sizes until all have started).
pub fn plan_groups(groups: usize) {
    with(|_, s| {
        if !s.open_ended {
            s.planned_groups = Some(groups);
        }
    });
}

/// Several suites will share the bar: count only what has started.
pub fn open_ended() {
    with(|_, s| s.open_ended = true);
}

/// A suite run (one group) starts with `cases` cases.
pub fn add_cases(cases: u64) {
    with(|bar, s| {
        s.started_groups += 1;
        s.known += cases;
        let left = s
            .planned_groups
            .map_or(0, |planned| planned.saturating_sub(s.started_groups));
        bar.set_length(s.known + cases * left as u64);
    });
}

/// A case was written with `status` (and, when it reported one, its cost).
pub fn case_done(status: CaseStatus, cost_usd: Option<f64>) {
    with(|bar, s| {
        match status {
            CaseStatus::Passed => s.passed += 1,
            _ => s.failed += 1,
        }
        if let Some(cost) = cost_usd {
            s.cost_usd += cost;
            s.costed = true;
        }
        bar.set_message(s.message());
        bar.inc(1);
    });
}

/// Runs `print` (which writes case lines to stdout) with the bar lifted.
pub fn print(print: impl FnOnce()) {
    match PROGRESS.get() {
        Some(p) => p.bar.suspend(print),
        None => print(),
    }
}

/// Writes a notice line to stderr with the bar lifted (the plugin
/// runtime's notices, [`crate::plugin::notice::set_sink`]).
pub fn notice(line: &str) {
    print(|| crate::term_eprintln!("{line}"));
}

/// Clears the bar and leaves one summary line on stderr (once; later
/// calls do nothing).
pub fn finish() {
    with(|bar, s| {
        if std::mem::replace(&mut s.finished, true) {
            return;
        }
        bar.finish_and_clear();
        eprintln!(
            "{} of {} cases in {:.1} s: {}",
            bar.position(),
            bar.length().unwrap_or(0),
            bar.elapsed().as_secs_f64(),
            s.message()
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_counts_and_costs() {
        let mut s = State::default();
        assert_eq!(s.message(), "0 passed, 0 failed");
        s.passed = 3;
        s.failed = 1;
        s.cost_usd = 0.01234;
        s.costed = true;
        assert_eq!(s.message(), "3 passed, 1 failed, $0.0123");
    }
}
