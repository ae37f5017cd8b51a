//! JUnit XML, as CI systems read it (Jenkins' `junit-10.xsd`, which
//! GitLab, GitHub actions and Azure also accept): one `testsuite` per run
//! with one `testcase` per case (per cell of an experiment), and, for an
//! experiment, a second `testsuite` with one `testcase` per gate, so a
//! failing gate fails the build the same way a failing case does.
//!
//! Everything in the file comes from cases and outputs, which are untrusted
//! text: it is escaped, and characters XML 1.0 cannot carry are replaced.

use std::fmt::Write;

use super::model::{CaseRow, Report};

/// Counts of a `testsuites` root.
#[derive(Default)]
struct Totals {
    tests: usize,
    failures: usize,
    errors: usize,
    /// The sum of the suites' times.
    millis: f64,
    /// The earliest start and latest finish over the suites that recorded
    /// both (Unix milliseconds).
    span: Option<(i64, i64)>,
}

/// When `report`'s run started and finished (Unix milliseconds), when it
/// recorded both in order.
fn span(report: &Report) -> Option<(i64, i64)> {
    let at = |t: &Option<String>| t.as_deref().and_then(crate::eval::files::rfc3339_millis);
    let (start, end) = (
        at(&report.header.started_at)?,
        at(&report.header.finished_at)?,
    );
    (end >= start).then_some((start, end))
}

fn wall_millis(report: &Report) -> Option<f64> {
    span(report).map(|(start, end)| (end - start) as f64)
}

/// The JUnit document of `report`.
pub fn render(report: &Report) -> String {
    render_project(std::slice::from_ref(report), &[])
}

/// One JUnit document for a project run: the `testsuite`s of each
/// suite's report, and for each suite that could not run (`broken`:
/// id and why), a `testsuite` with one errored `testcase`.
pub fn render_project(reports: &[Report], broken: &[(String, String)]) -> String {
    let mut totals = Totals::default();
    let mut body = String::new();
    for report in reports {
        suite_elements(&mut body, report, &mut totals);
    }
    for (id, why) in broken {
        totals.tests += 1;
        totals.errors += 1;
        let _ = writeln!(
            body,
            "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0\">\n    <testcase name=\"the suite could not run\" classname=\"{}\" time=\"0\">\n      <error type=\"definition\" message=\"{}\">{}</error>\n    </testcase>\n  </testsuite>",
            attr(id),
            attr(&classname(id, None)),
            attr(why),
            text(why)
        );
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"cautilus\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
        totals.tests,
        totals.failures,
        totals.errors,
        // The whole run's wall time when every suite recorded its own.
        seconds(match totals.span {
            Some((start, end)) if reports.iter().all(|r| span(r).is_some()) => {
                (end - start) as f64
            }
            _ => totals.millis,
        })
    );
    out.push_str(&body);
    out.push_str("</testsuites>\n");
    out
}

/// The `testsuite` of `report` (and of its gates), added to `totals`.
fn suite_elements(out: &mut String, report: &Report, totals: &mut Totals) {
    let header = &report.header;
    let mut cases = String::new();
    let (mut failures, mut errors, mut skipped, mut millis) = (0usize, 0usize, 0usize, 0f64);
    let suite = if header.suite_id.is_empty() {
        "cautilus"
    } else {
        &header.suite_id
    };
    for case in &report.cases {
        millis += case.duration_ms.unwrap_or(0.0);
        match outcome(case) {
            Outcome::Failure => failures += 1,
            Outcome::Error => errors += 1,
            Outcome::Skipped => skipped += 1,
            Outcome::Passed => {}
        }
        testcase(&mut cases, suite, case);
    }
    for skip in &report.skipped {
        skipped += 1;
        let id = skip["caseId"].as_str().unwrap_or("?");
        let reason = skip["reason"].as_str().unwrap_or("skipped by the fixture");
        let _ = writeln!(
            cases,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"0\">\n      <skipped message=\"{}\"/>\n    </testcase>",
            attr(id),
            attr(&classname(suite, None)),
            attr(if reason.is_empty() {
                "skipped by the fixture"
            } else {
                reason
            })
        );
    }
    // A suite's time is its wall time, not the sum of its cases (which
    // overlap under `--concurrency`); the sum when the run did not record
    // when it started and finished.
    let millis = wall_millis(report).unwrap_or(millis);
    let tests = report.cases.len() + report.skipped.len();
    let gate_failures = report.gates.iter().filter(|g| g.blocks()).count();
    totals.tests += tests + report.gates.len();
    totals.failures += failures + gate_failures;
    totals.errors += errors;
    totals.millis += millis;
    if let Some((start, end)) = span(report) {
        totals.span = Some(match totals.span {
            Some((s, e)) => (s.min(start), e.max(end)),
            None => (start, end),
        });
    }
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\"{}>",
        attr(suite),
        seconds(millis),
        header
            .started_at
            .as_deref()
            .map(|t| format!(" timestamp=\"{}\"", attr(t.trim_end_matches('Z'))))
            .unwrap_or_default()
    );
    out.push_str("    <properties>\n");
    let mut property = |name: &str, value: &str| {
        if !value.is_empty() {
            let _ = writeln!(
                out,
                "      <property name=\"{}\" value=\"{}\"/>",
                attr(name),
                attr(value)
            );
        }
    };
    property("surface", &header.surface);
    property("preset", &header.preset);
    property("fixtureRef", &header.fixture_ref);
    property("targets", &header.targets.join(", "));
    if let Some(r) = &header.recommendation {
        property("recommendation", r);
    }
    if let Some(c) = header.cost_usd {
        property("costUsd", &format!("{c:.6}"));
    }
    out.push_str("    </properties>\n");
    out.push_str(&cases);
    out.push_str("  </testsuite>\n");
    if !report.gates.is_empty() {
        gates(out, suite, report, gate_failures);
    }
}

fn gates(out: &mut String, suite: &str, report: &Report, failures: usize) {
    let _ = writeln!(
        out,
        "  <testsuite name=\"{} gates\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"0\">",
        attr(suite),
        report.gates.len()
    );
    for gate in &report.gates {
        let _ = write!(
            out,
            "    <testcase name=\"{} {}\" classname=\"{}\" time=\"0\"",
            attr(&gate.variant),
            attr(&gate.gate),
            attr(&format!("cautilus.{suite}.gates"))
        );
        if !gate.blocks() {
            out.push_str("/>\n");
        } else {
            let _ = writeln!(
                out,
                ">\n      <failure type=\"gate\" message=\"{}\">{}</failure>\n    </testcase>",
                attr(&gate.message),
                text(&gate.message)
            );
        }
    }
    out.push_str("  </testsuite>\n");
}

enum Outcome {
    Passed,
    Failure,
    Error,
    Skipped,
}

fn outcome(case: &CaseRow) -> Outcome {
    match case.status.as_str() {
        "passed" => Outcome::Passed,
        "errored" | "blocked" => Outcome::Error,
        "unchecked" => Outcome::Skipped,
        _ => Outcome::Failure,
    }
}

fn classname(suite: &str, variant: Option<&str>) -> String {
    match variant {
        Some(v) => format!("cautilus.{suite}.{v}"),
        None => format!("cautilus.{suite}"),
    }
}

fn testcase(out: &mut String, suite: &str, case: &CaseRow) {
    let name = match case.trial {
        Some(t) if case.variant.is_some() => format!("{} (trial {t})", case.id),
        _ => case.id.clone(),
    };
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        attr(&name),
        attr(&classname(suite, case.variant.as_deref())),
        seconds(case.duration_ms.unwrap_or(0.0))
    );
    let element = match outcome(case) {
        Outcome::Passed => {
            out.push_str("/>\n");
            return;
        }
        Outcome::Failure => "failure",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
    };
    let mut body = case.summary.clone();
    for a in case.assertions.iter().filter(|a| a.passed != Some(true)) {
        let _ = write!(body, "\n{}: {}", a.name, a.status);
        if let Some(detail) = &a.detail {
            let _ = write!(body, " — {detail}");
        }
    }
    let _ = writeln!(
        out,
        ">\n      <{element} type=\"{}\" message=\"{}\">{}</{element}>\n    </testcase>",
        attr(&case.status),
        attr(&case.summary),
        text(&body)
    );
}

/// Milliseconds as JUnit's seconds (`0.012`).
fn seconds(millis: f64) -> String {
    format!("{:.3}", (millis.max(0.0)) / 1000.0)
}

/// A character XML 1.0 can carry.
fn allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
}

/// Element text: markup escaped, characters XML cannot hold replaced.
fn text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // What a terminal would act on (the report is printed to
            // stdout by `cautilus report junit`) as a character reference,
            // which XML reads as the same character.
            c if allowed(c) && crate::term::is_unsafe(c) && c != '\n' && c != '\t' => {
                out.push_str(&format!("&#x{:x};", u32::from(c)));
            }
            c if allowed(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// An attribute value (double-quoted): as [`text`], plus quotes and the
/// whitespace an attribute would otherwise normalize away.
fn attr(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push_str(&text(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_is_escaped_and_made_representable() {
        assert_eq!(text("a<b>&c"), "a&lt;b&gt;&amp;c");
        assert_eq!(text("bell\u{7}end\u{FFFF}"), "bell\u{FFFD}end\u{FFFD}");
        assert_eq!(attr("say \"hi\"\nnow"), "say &quot;hi&quot;&#10;now");
        // What a terminal acts on (the report can be printed) is a
        // character reference: XML reads back the same character.
        assert_eq!(
            text("x\rPASS\u{9b}2K\u{202e}y\u{7f}"),
            "x&#xd;PASS&#x9b;2K&#x202e;y&#x7f;"
        );
        assert_eq!(seconds(12.0), "0.012");
    }

    fn report(started: Option<&str>, finished: Option<&str>) -> Report {
        let case = |id: &str| {
            let mut row = super::super::case_rows::case_row(
                serde_json::json!({"caseId": id, "status": "passed", "durationMs": 1000}),
                std::path::Path::new("."),
                None,
                None,
                None,
            );
            row.duration_ms = Some(1000.0);
            row
        };
        Report {
            header: super::super::model::Header {
                suite_id: "s".into(),
                started_at: started.map(Into::into),
                finished_at: finished.map(Into::into),
                ..Default::default()
            },
            cases: vec![case("a"), case("b")],
            variants: Vec::new(),
            comparison: Vec::new(),
            gates: Vec::new(),
            skipped: Vec::new(),
        }
    }

    #[test]
    fn a_suite_takes_its_wall_time_not_the_sum_of_overlapping_cases() {
        // Two 1 s cases run at once: the suite took 1.5 s, not 2 s.
        let concurrent = report(
            Some("2026-11-26T10:00:00.000Z"),
            Some("2026-11-26T10:00:01.500Z"),
        );
        let xml = render(&concurrent);
        assert!(
            xml.contains(
                r#"<testsuites name="cautilus" tests="2" failures="0" errors="0" time="1.500">"#
            ),
            "{xml}"
        );
        assert!(xml.contains(r#"skipped="0" time="1.500""#), "{xml}");
        assert!(
            xml.contains(r#"<testcase name="a" classname="cautilus.s" time="1.000"/>"#),
            "{xml}"
        );

        // Suites of a project run: the root spans the first start to the last finish.
        let later = report(
            Some("2026-11-26T10:00:01.000Z"),
            Some("2026-11-26T10:00:04.000Z"),
        );
        let xml = render_project(&[concurrent.clone(), later], &[]);
        assert!(xml.contains(r#"errors="0" time="4.000">"#), "{xml}");

        // Without both timestamps (or out of order), the sum of the cases.
        for (started, finished) in [
            (None, None),
            (Some("2026-11-26T10:00:00.000Z"), None),
            (
                Some("2026-11-26T10:00:02.000Z"),
                Some("2026-11-26T10:00:01.000Z"),
            ),
            (Some("yesterday"), Some("2026-11-26T10:00:01.000Z")),
        ] {
            let xml = render(&report(started, finished));
            assert!(
                xml.contains(r#"skipped="0" time="2.000""#),
                "{started:?} {finished:?}: {xml}"
            );
            assert!(xml.contains(r#"errors="0" time="2.000">"#), "{xml}");
        }
    }
}
