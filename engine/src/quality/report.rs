//! The readable summary of an experiment: per variant its pass rate and
//! scores, each candidate against the baseline, every gate with its value
//! and threshold, and the verdict. Variant, score and gate names are the
//! fixture's: each line is escaped for the terminal as a whole
//! ([`crate::term::inline`]), so none can start a line of its own.

use std::io::Write;

use super::aggregate::Aggregate;
use super::experiment::ExperimentOutcome;
use super::stats::Paired;
use crate::term::{inline, shown};

fn signed(value: f64) -> String {
    format!("{value:+.3}")
}

fn interval(p: &Paired) -> String {
    format!(
        "{} ± {} (95% CI {}..{})",
        signed(p.mean_delta),
        p.sem.map_or("—".into(), |s| format!("{s:.3}")),
        signed(p.ci_low),
        signed(p.ci_high)
    )
}

fn variant_line(name: &str, baseline: bool, a: &Aggregate) -> String {
    let mut parts = vec![format!(
        "pass rate {} ({}/{} cells)",
        a.pass_rate.map_or("—".into(), |r| format!("{r:.3}")),
        a.count("passed"),
        a.cells
    )];
    for (score, s) in &a.scores {
        let dropped = a.dropped(score);
        parts.push(format!(
            "{score} {:.3}{}{}",
            s.mean,
            s.sem.map_or(String::new(), |e| format!(" ± {e:.3}")),
            if dropped > 0 {
                format!(
                    " ({dropped} cell{} gave no score)",
                    if dropped == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        ));
    }
    // A score no cell gave is shown too: it errored everywhere.
    for (score, dropped) in &a.dropped {
        if a.score(score).is_none() {
            parts.push(format!(
                "{score} — (no cell gave a score; {dropped} dropped)"
            ));
        }
    }
    if a.trials > 1 {
        if let Some((k, v)) = a.pass_at_k.last() {
            parts.push(format!("pass@{k} {v:.3}"));
        }
        if let Some((k, v)) = a.pass_hat_k.last() {
            parts.push(format!("pass^{k} {v:.3}"));
        }
    }
    if let Some(l) = &a.latency {
        parts.push(format!("p50 {:.0} ms, p95 {:.0} ms", l.p50_ms, l.p95_ms));
    }
    if let Some(c) = &a.cost {
        parts.push(format!("cost ${:.4}", c.total_usd));
    }
    format!(
        "  {name}{}: {}",
        if baseline { " (baseline)" } else { "" },
        parts.join(", ")
    )
}

/// What a filtered or sharded run's exit code means: its declared gates
/// measure the whole suite, so they only inform; without declared gates,
/// every cell that ran and did not pass fails it (as it fails the whole
/// run); an errored cell always does.
fn filtered_note(outcome: &ExperimentOutcome) -> &'static str {
    if !outcome.filtered {
        return "";
    }
    let declared = outcome
        .gates
        .iter()
        .any(|g| g.gate != "errored" && g.gate != "assertions");
    if declared {
        " (filtered: its declared gates are informational; an errored cell still fails it)"
    } else {
        " (filtered: no gates declared, so a cell that ran and did not pass fails it)"
    }
}

/// Prints the experiment's summary.
pub fn print(out: &mut (impl Write + ?Sized), outcome: &ExperimentOutcome) -> std::io::Result<()> {
    let trials = outcome
        .variants
        .iter()
        .map(|(_, a)| a.trials)
        .max()
        .unwrap_or(1);
    writeln!(
        out,
        "experiment: {} variant{} × up to {trials} trial{}, {} cells{}",
        outcome.variants.len(),
        if outcome.variants.len() == 1 { "" } else { "s" },
        if trials == 1 { "" } else { "s" },
        outcome.cells,
        filtered_note(outcome)
    )?;
    for (name, aggregate) in &outcome.variants {
        let baseline = outcome.baseline.as_deref() == Some(name);
        writeln!(out, "{}", inline(&variant_line(name, baseline, aggregate)))?;
    }
    for c in &outcome.comparisons {
        let mut parts = Vec::new();
        if let Some(p) = &c.pass_rate {
            parts.push(format!("pass rate {}", interval(p)));
        }
        parts.push(format!(
            "McNemar p = {:.3} ({} improved, {} regressed)",
            c.mcnemar.p_value, c.mcnemar.improvements, c.mcnemar.regressions
        ));
        for (score, p) in &c.scores {
            parts.push(format!("{score} {}", interval(p)));
        }
        let against = if c.source == "committed" {
            format!("the committed baseline (`{}`)", c.baseline)
        } else {
            c.baseline.clone()
        };
        let line = format!(
            "  {} vs {against} ({} paired cells{}): {}",
            c.candidate,
            c.pairs,
            if c.informational {
                ", informational"
            } else {
                ""
            },
            parts.join("; ")
        );
        writeln!(out, "{}", inline(&line))?;
    }
    if !outcome.gates.is_empty() {
        writeln!(out, "gates:")?;
        for gate in &outcome.gates {
            let tag = match (gate.passed, gate.informational) {
                (true, _) => "PASS",
                (false, true) => "INFO",
                (false, false) => "FAIL",
            };
            let line = format!("  {tag}  {} {} — {}", gate.variant, gate.gate, gate.message);
            writeln!(out, "{}", inline(&line))?;
        }
    }
    let verdict = match (outcome.interrupted, outcome.passed) {
        (Some(signal), _) => format!("interrupted by {signal}"),
        (None, true) => "passed".into(),
        (None, false) => "failed".into(),
    };
    writeln!(out, "experiment {verdict}")?;
    writeln!(out, "records: {}", shown(outcome.output_dir.display()))
}
