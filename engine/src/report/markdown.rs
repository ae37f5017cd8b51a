//! A Markdown summary for a CI job's page (GitHub's `$GITHUB_STEP_SUMMARY`,
//! GitLab, a pull-request comment): the verdict and totals, the gates, the
//! variants and their comparison with the baseline, and the cases that did
//! not pass with their reasons.
//!
//! Case text is untrusted: table cells are escaped so an answer can neither
//! break the table nor inject HTML (which those pages render).

use std::fmt::Write;

use serde_json::Value;

use super::model::Report;

/// Failed cases listed; the rest are counted.
const FAILED_SHOWN: usize = 50;
/// Characters of a reason shown in a cell.
const REASON_CHARS: usize = 240;

pub fn render(report: &Report) -> String {
    let h = &report.header;
    let mut out = String::new();
    let verdict = match (h.passed, &h.recommendation) {
        (Some(true), _) => "passed".to_string(),
        (Some(false), _) => "failed".to_string(),
        (None, Some(r)) => r.clone(),
        (None, None) => h.status.clone(),
    };
    let _ = writeln!(
        out,
        "## cautilus: {} — {}\n",
        cell(&h.title),
        cell(&verdict)
    );
    let counts: Vec<String> = h
        .counts
        .iter()
        .filter(|(k, _)| *k != "total")
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    let unit = if h.kind == "experiment" {
        "cells"
    } else {
        "cases"
    };
    let _ = writeln!(
        out,
        "**{}** {unit}: {}{}  ",
        h.counts.get("total").copied().unwrap_or(0),
        counts.join(", "),
        if report.skipped.is_empty() {
            String::new()
        } else {
            format!(", {} skipped by the fixture", report.skipped.len())
        }
    );
    let _ = writeln!(
        out,
        "Suite {} · {}/{} · {}{}\n",
        cell(&h.suite_id),
        cell(&h.surface),
        cell(&h.preset),
        cell(&h.targets.join(", ")),
        h.cost_usd
            .map(|c| format!(" · cost ${c:.4}"))
            .unwrap_or_default()
    );
    if h.status != "completed" && !h.status.is_empty() {
        let _ = writeln!(
            out,
            "> **The run did not complete ({}).** Only the finished cases are counted.\n",
            cell(&h.status)
        );
    }
    gates(&mut out, report);
    variants(&mut out, report);
    comparison(&mut out, report);
    failed(&mut out, report);
    out
}

/// One suite of a project run, as its summary table shows it.
pub struct ProjectRow {
    pub id: String,
    /// Its recommendation and counts, or why it could not run.
    pub outcome: String,
    pub duration_ms: u64,
}

/// A project run: the verdict, one row per suite, then each suite's own
/// summary.
pub fn render_project(recommendation: &str, rows: &[ProjectRow], reports: &[Report]) -> String {
    let mut out = format!(
        "# cautilus project — {}\n\n| suite | result | duration |\n|---|---|---:|\n",
        cell(recommendation)
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} s |",
            cell(&row.id),
            cell(&row.outcome),
            row.duration_ms as f64 / 1000.0
        );
    }
    for report in reports {
        out.push('\n');
        out.push_str(&render(report));
    }
    out
}

fn gates(out: &mut String, report: &Report) {
    if report.gates.is_empty() {
        return;
    }
    out.push_str(
        "### Gates\n\n| | variant | gate | value | threshold | |\n|---|---|---|---:|---:|---|\n",
    );
    for g in &report.gates {
        let mark = match (g.passed, g.informational) {
            (true, _) => "✅",
            (false, true) => "ℹ️",
            (false, false) => "❌",
        };
        let _ = writeln!(
            out,
            "| {mark} | {} | {} | {} | {} | {} |",
            cell(&g.variant),
            cell(&g.gate),
            g.value.map_or("—".into(), |v| format!("{v:.4}")),
            g.threshold.map_or("—".into(), |v| format!("{v:.4}")),
            cell(&g.message)
        );
    }
    out.push('\n');
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_f64()
}

fn variants(out: &mut String, report: &Report) {
    if report.variants.is_empty() {
        return;
    }
    out.push_str("### Variants\n\n| variant | changes | cells | pass rate | scores | p50 latency | cost |\n|---|---|---:|---:|---|---:|---:|\n");
    for v in &report.variants {
        let a = &v.aggregate;
        let scores: Vec<String> = a["scores"]
            .as_object()
            .map(|s| {
                s.iter()
                    .map(|(name, s)| {
                        format!("{} {:.3}", cell(name), s["mean"].as_f64().unwrap_or(0.0))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {}{} | {} | {} | {} | {} | {} | {} |",
            cell(&v.name),
            if v.baseline { " (baseline)" } else { "" },
            changes(v),
            a["cells"].as_u64().unwrap_or(0),
            num(a, &["passRate"]).map_or("—".into(), |r| format!("{r:.3}")),
            scores.join(", "),
            latency(a),
            num(a, &["cost", "totalUsd"]).map_or("—".into(), |c| format!("${c:.4}")),
        );
    }
    out.push('\n');
}

/// A variant's p50 latency, with its p50 time to first byte when the
/// cells have one.
fn latency(a: &Value) -> String {
    let Some(whole) = num(a, &["latency", "p50Ms"]) else {
        return "—".into();
    };
    match num(a, &["firstByte", "p50Ms"]) {
        Some(first) => format!("{whole:.0} ms (first byte {first:.0} ms)"),
        None => format!("{whole:.0} ms"),
    }
}

/// What a variant sets, one `field: value` per override, each cut to a
/// table cell's length; `—` for the suite as written.
fn changes(variant: &super::model::Variant) -> String {
    let lines = variant.override_lines();
    if lines.is_empty() {
        return "—".into();
    }
    lines.iter().map(|l| cell(l)).collect::<Vec<_>>().join("; ")
}

fn delta(d: &Value) -> String {
    match (
        d["meanDelta"].as_f64(),
        d["ciLow"].as_f64(),
        d["ciHigh"].as_f64(),
    ) {
        (Some(m), Some(lo), Some(hi)) => format!("{m:+.3} ({lo:+.3}..{hi:+.3})"),
        (Some(m), _, _) => format!("{m:+.3}"),
        _ => "—".into(),
    }
}

fn comparison(out: &mut String, report: &Report) {
    if report.comparison.is_empty() {
        return;
    }
    out.push_str("### Against the baseline (95% CI)\n\n| candidate | baseline | pairs | pass rate Δ | McNemar p | scores Δ |\n|---|---|---:|---|---:|---|\n");
    for c in &report.comparison {
        let scores: Vec<String> = c["scores"]
            .as_object()
            .map(|s| {
                s.iter()
                    .map(|(name, d)| format!("{} {}", cell(name), delta(d)))
                    .collect()
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {}{} | {} | {} | {} | {} |",
            cell(c["candidate"].as_str().unwrap_or("?")),
            cell(c["baseline"].as_str().unwrap_or("?")),
            if c["informational"].as_bool() == Some(true) {
                " (informational)"
            } else {
                ""
            },
            c["pairs"].as_u64().unwrap_or(0),
            delta(&c["passRate"]),
            num(c, &["mcnemar", "pValue"]).map_or("—".into(), |p| format!("{p:.3}")),
            scores.join(", ")
        );
    }
    out.push('\n');
}

fn failed(out: &mut String, report: &Report) {
    let failed: Vec<_> = report.cases.iter().filter(|c| !c.passed()).collect();
    if failed.is_empty() {
        out.push_str("Every case passed.\n");
        return;
    }
    let _ = writeln!(
        out,
        "### Not passed ({})\n\n| case | status | why |\n|---|---|---|",
        failed.len()
    );
    for case in failed.iter().take(FAILED_SHOWN) {
        // The first line: a snapshot's diff and other detail are in the
        // HTML report.
        let mut why = case.summary.lines().next().unwrap_or_default().to_string();
        if let Some(a) = case
            .assertions
            .iter()
            .find(|a| a.passed == Some(false) && a.detail.is_some())
        {
            let _ = write!(
                why,
                " ({}: {})",
                a.name,
                a.detail.as_deref().unwrap_or_default()
            );
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell(&case.label()),
            cell(&case.status),
            cell(&why)
        );
    }
    if failed.len() > FAILED_SHOWN {
        let _ = writeln!(
            out,
            "\n…and {} more (see the HTML report or the records).",
            failed.len() - FAILED_SHOWN
        );
    }
}

/// Text safe inside a table cell: one line, bounded, and inert: no table,
/// HTML or Markdown syntax of its own (links, images, emphasis), no
/// autolinked URL and no `@mention` that would notify anyone.
fn cell(value: &str) -> String {
    let mut out = String::new();
    let mut previous = ' ';
    for (n, c) in value.chars().enumerate() {
        if n == REASON_CHARS {
            out.push('…');
            break;
        }
        match c {
            '|' | '[' | ']' | '(' | ')' | '!' | '*' | '_' | '~' | '\\' | '#' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push('\''),
            // A zero-width space keeps `@team` and `https://…` as text.
            '@' => out.push_str("@\u{200B}"),
            '/' if previous == ':' => out.push_str("\u{200B}/"),
            '\n' | '\r' | '\t' => out.push(' '),
            // Controls and bidi marks (which reorder what is shown) are
            // dropped.
            c if crate::term::is_unsafe(c) => {}
            c => out.push(c),
        }
        previous = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_shows_the_first_byte_when_there_is_one() {
        let a = serde_json::json!({"latency": {"p50Ms": 1882.4}, "firstByte": {"p50Ms": 1286.0}});
        assert_eq!(latency(&a), "1882 ms (first byte 1286 ms)");
        let a = serde_json::json!({"latency": {"p50Ms": 12.0}, "firstByte": null});
        assert_eq!(latency(&a), "12 ms");
        assert_eq!(latency(&serde_json::json!({"latency": null})), "—");
    }

    #[test]
    fn cells_cannot_break_the_table_or_inject_html() {
        assert_eq!(cell("a|b\nc<script>`x`"), "a\\|b c&lt;script&gt;'x'");
        assert_eq!(
            cell("![x](https://evil/?q) *hi* @org/team"),
            "\\!\\[x\\]\\(https:\u{200B}//evil/?q\\) \\*hi\\* @\u{200B}org/team"
        );
        assert_eq!(cell(&"x".repeat(300)).chars().count(), REASON_CHARS + 1);
        assert_eq!(cell("a\u{1b}[2K\u{9b}\u{202e}b\u{2066}"), "a\\[2Kb");
    }
}
