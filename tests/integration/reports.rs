//! Reports of a run: the HTML page (loaded in headless Chromium: what a
//! person sees, the search and the filter, injected markup left inert),
//! JUnit (validated against the schema Jenkins reads), the Markdown
//! summary, `cautilus report`, and the live progress bar (under a
//! pseudo-terminal, and absent when stderr is not one).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{cautilus, eval_run, output, repo, run};

fn release_notes() -> PathBuf {
    repo().join("fixtures/eval/reports/release-notes.fixture.yaml")
}

/// Runs the release-notes suite (two variants, a failing snapshot, an
/// answer full of markup) writing all three reports into `out`.
fn reported_run(out: &Path) -> crate::support::EvalRun {
    let (html, junit, markdown) = (
        out.join("report.html"),
        out.join("junit.xml"),
        out.join("summary.md"),
    );
    let run = eval_run(
        &release_notes(),
        &[
            "--html",
            html.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--markdown",
            markdown.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run
}

const MARKUP: &str = "<script>window.__pwned = true;";

#[test]
fn a_run_writes_html_junit_and_markdown_with_untrusted_text_escaped() {
    let out = tempfile::tempdir().unwrap();
    reported_run(out.path());
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    // Self-contained: nothing is fetched, and only the report's own script
    // and style may run (by hash).
    // (The one URL in it is the SVG namespace, an identifier.)
    let page = html.replace("\"http://www.w3.org/2000/svg\"", "");
    for remote in ["http://", "https://", "src=\"", "href=\"", "url("] {
        assert!(!page.contains(remote), "the report refers to {remote}");
    }
    assert!(html.contains("Content-Security-Policy"));
    assert!(html.contains("script-src 'sha256-"));
    // The answer's markup is in the data only as escaped JSON text.
    assert!(
        !html.contains(MARKUP),
        "raw markup from an answer in the page"
    );
    assert!(html.contains("\\u003cscript\\u003ewindow.__pwned = true;"));
    assert_eq!(
        html.matches("<script").count(),
        2,
        "only the data block and the report's script"
    );

    let junit = std::fs::read_to_string(out.path().join("junit.xml")).unwrap();
    assert!(junit.contains(
        r#"<testcase name="changelog-entry (trial 1)" classname="cautilus.release-notes.candidate""#
    ));
    assert!(junit.contains("<failure type=\"failed\" message=\"final text differs from snapshot"));
    assert!(junit.contains("-- Faster start-up\n+- Slower start-up"));
    assert!(junit.contains(r#"<testsuite name="release-notes gates" tests="3" failures="0""#));
    assert!(!junit.contains("<script"), "markup must be escaped in XML");
    assert!(junit.contains("&lt;script&gt;window.__pwned") || !junit.contains("__pwned"));

    let markdown = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(
        markdown.starts_with("## cautilus: Release notes writer — passed"),
        "{markdown}"
    );
    assert!(
        markdown.contains("**6** cells: 1 failed, 5 passed"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| ✅ | candidate | passRate.min | 0.6667 | 0.6000 |"),
        "{markdown}"
    );
    // What each variant changes, so a prompt A/B says which prompt won.
    assert!(
        markdown.contains(
            "| current (baseline) | model: notes-v1; fixtureResults: answers-current.json | 3 |"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("| candidate | model: notes-v2; system: You write release notes. Be brief.; fixtureResults: answers-candidate.json | 3 |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| candidate | current | 3 | -0.333 (-1.000..+0.000) |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| changelog-entry \\[candidate, trial 1\\] | failed | final text differs from snapshot ./golden/changelog-entry.md \\(text-equality\\): |"),
        "{markdown}"
    );
}

/// Validates `xml` against Jenkins' JUnit schema with xmllint.
fn validate_junit(xml: &Path) -> Option<(bool, String)> {
    let schema = repo().join("tests/schemas/jenkins-junit-10.xsd");
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(xml)
        .output()
        .ok()?;
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn junit_validates_against_the_schema_ci_systems_read() {
    let out = tempfile::tempdir().unwrap();
    reported_run(out.path());
    let Some((valid, said)) = validate_junit(&out.path().join("junit.xml")) else {
        eprintln!(
            "skipping: `xmllint` is not installed (apt-get install libxml2-utils; .ci/run installs it)"
        );
        return;
    };
    assert!(valid, "{said}");
    // A plain run (no variants; a failing case; control characters and
    // markup in an answer) validates too, and a broken file does not.
    let fixture = out.path().join("plain.fixture.json");
    std::fs::write(
        &fixture,
        serde_json::json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "plain",
            "provider": "fixture", "model": "m",
            "assertions": [{"type": "contains"}],
            "cases": [
                {"caseId": "ok", "input": "a", "expected": {"finalText": "yes"}},
                {"caseId": "bad \"one\" <&>", "input": "b", "expected": {"finalText": "yes"}}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let answers = out.path().join("answers.json");
    std::fs::write(
        &answers,
        serde_json::json!({"ok": "yes", "bad \"one\" <&>": "no\u{1}\u{7} <b>&amp;</b> ]]>"})
            .to_string(),
    )
    .unwrap();
    let junit = out.path().join("plain.xml");
    let run = eval_run(
        &fixture,
        &[
            "--fixture-results",
            answers.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let (valid, said) = validate_junit(&junit).unwrap();
    assert!(
        valid,
        "{said}\n{}",
        std::fs::read_to_string(&junit).unwrap()
    );
    let text = std::fs::read_to_string(&junit).unwrap();
    assert!(
        text.contains(r#"<testcase name="bad &quot;one&quot; &lt;&amp;&gt;""#),
        "{text}"
    );
    // The summary's excerpt spells control characters out; the markup is
    // escaped (the XML-invalid characters themselves: junit's unit tests).
    assert!(
        text.contains(r"no\u{1}\u{7} &lt;b&gt;&amp;amp;&lt;/b&gt; ]]&gt;"),
        "{text}"
    );
    let broken = out.path().join("broken.xml");
    std::fs::write(
        &broken,
        text.replace("<testsuite name=\"plain\"", "<testsuite"),
    )
    .unwrap();
    assert!(
        !validate_junit(&broken).unwrap().0,
        "the schema check must be able to fail"
    );
}

#[test]
fn report_command_reads_a_finished_run_and_names_what_is_wrong() {
    let plain = eval_run(
        &repo().join("fixtures/eval/app/prompt/tagline.fixture.json"),
        &[],
    );
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let dir = plain.dir.path().to_str().unwrap().to_string();
    let (code, markdown, stderr) = run(&["report", "markdown", &dir]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        markdown.starts_with("## cautilus: Cautilus Tagline — accept-now"),
        "{markdown}"
    );
    assert!(markdown.contains("**2** cases: 2 passed"), "{markdown}");
    assert!(markdown.contains("Every case passed."));
    let html = plain.dir.path().join("r.html");
    let (code, _, stderr) = run(&["report", "html", &dir, "-o", html.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("Cautilus Tagline — cautilus report")
    );
    let (code, junit, _) = run(&["report", "junit", &format!("{dir}/eval-summary.json")]);
    assert_eq!(code, 0);
    assert!(
        junit.contains(r#"<testsuite name="cautilus-tagline" tests="2" failures="0""#),
        "{junit}"
    );

    let empty = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&["report", "html", empty.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not a run directory"), "{stderr}");
    assert!(stderr.contains(empty.path().to_str().unwrap()), "{stderr}");
}

/// Where playwright-core is: `CAUTILUS_NODE_MODULES`, else the directory
/// `.ci/run` installs the npm tools into.
pub(crate) fn node_modules() -> Option<PathBuf> {
    let dir = std::env::var_os("CAUTILUS_NODE_MODULES")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/cautilus-ci/agents/node_modules"))
        })?;
    dir.join("playwright-core").is_dir().then_some(dir)
}

pub(crate) fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    path.is_file().then_some(path)
}

/// Opens `html` in headless Chromium and returns what the page showed.
fn browse(html: &Path, screenshot: &Path, search: &str, open: &str) -> Option<Value> {
    let (Some(chromium), Some(modules)) = (chromium(), node_modules()) else {
        eprintln!(
            "skipping: headless Chromium is not available (apt-get install chromium; npm install playwright-core, found through CAUTILUS_NODE_MODULES; .ci/run installs both)"
        );
        return None;
    };
    let out = Command::new("node")
        .arg(repo().join("tests/browser/report-check.cjs"))
        .arg(html)
        .arg(screenshot)
        .arg(search)
        .arg(open)
        .env("NODE_PATH", modules)
        .env("CHROMIUM", chromium)
        .output()
        .expect("run node");
    let (code, stdout, stderr) = output(out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    Some(serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}")))
}

fn ids(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}:{}",
                r["id"].as_str().unwrap(),
                r["status"].as_str().unwrap()
            )
        })
        .collect()
}

/// The screenshot artifacts of the browser tests, kept for review.
pub(crate) fn artifact(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn html_report_in_headless_chromium_shows_the_run_and_runs_nothing_from_it() {
    let out = tempfile::tempdir().unwrap();
    reported_run(out.path());
    let shot = artifact("release-notes.png");
    let Some(seen) = browse(
        &out.path().join("report.html"),
        &shot,
        "markup",
        "changelog-entry:failed",
    ) else {
        return;
    };
    eprintln!("screenshot: {}", shot.display());
    assert_eq!(seen["consoleErrors"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["pageErrors"], serde_json::json!([]), "{seen}");
    assert_eq!(
        seen["requests"],
        serde_json::json!([]),
        "nothing may be fetched: {seen}"
    );
    assert_eq!(
        seen["dialogs"],
        serde_json::json!([]),
        "an answer's script ran: {seen}"
    );
    assert_eq!(seen["pwned"], false, "an answer's script ran: {seen}");
    assert_eq!(seen["title"], "Release notes writer — cautilus report");
    // What each variant changes, shown as text.
    assert_eq!(
        seen["variantChanges"],
        serde_json::json!([
            ["model: notes-v1", "fixtureResults: answers-current.json"],
            [
                "model: notes-v2",
                "system: You write release notes. Be brief.",
                "fixtureResults: answers-candidate.json"
            ]
        ]),
        "{seen}"
    );
    assert_eq!(seen["verdict"], "passed");
    assert_eq!(
        seen["sections"],
        serde_json::json!([
            "Gates",
            "Variants",
            "Against the baseline",
            "At a glance",
            "Cases"
        ])
    );
    assert_eq!(
        ids(&seen["rows"]),
        [
            "summary-line:passed",
            "changelog-entry:passed",
            "untrusted-markup:passed",
            "summary-line:passed",
            "changelog-entry:failed",
            "untrusted-markup:passed"
        ]
    );
    assert_eq!(seen["shown"], "6 of 6 shown");
    // Search finds the answer text; the status filter keeps the failure.
    assert_eq!(
        ids(&seen["searchRows"]),
        ["untrusted-markup:passed", "untrusted-markup:passed"]
    );
    assert_eq!(seen["searchShown"], "2 of 6 shown");
    assert_eq!(ids(&seen["failedRows"]), ["changelog-entry:failed"]);
    let detail = &seen["detail"];
    assert!(
        detail["answer"]
            .as_str()
            .unwrap()
            .contains("- Slower start-up"),
        "{detail}"
    );
    assert!(
        detail["expected"]
            .as_str()
            .unwrap()
            .contains("- Faster start-up"),
        "{detail}"
    );
    let diff = detail["diff"].as_str().unwrap();
    assert!(
        diff.contains("-- Faster start-up\n+- Slower start-up"),
        "{diff}"
    );
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "a real screenshot"
    );

    // The markup case opened: its answer is shown as the text it is.
    let seen = browse(
        &out.path().join("report.html"),
        &artifact("release-notes-markup.png"),
        "markup",
        "untrusted-markup",
    )
    .unwrap();
    let answer = seen["detail"]["answer"].as_str().unwrap();
    assert!(answer.contains(MARKUP), "{answer}");
    assert!(answer.contains("<img src=x onerror="), "{answer}");
    assert_eq!(
        seen["detail"]["injectedElements"], 0,
        "markup became elements"
    );
    assert_eq!(seen["pwned"], false);
    assert_eq!(seen["dialogs"], serde_json::json!([]));
}

#[test]
fn html_report_of_ten_thousand_cases_pages_searches_and_filters() {
    if chromium().is_none() || node_modules().is_none() {
        eprintln!("skipping: headless Chromium is not available (see the test above)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases.jsonl");
    let mut lines = String::new();
    let mut answers = serde_json::Map::new();
    for i in 0..10_000 {
        let id = format!("case-{i:05}");
        lines.push_str(
            &serde_json::json!({"caseId": id, "input": format!("question {i}"), "expected": {"finalText": "ok"}})
                .to_string(),
        );
        lines.push('\n');
        let answer = if i % 1000 == 7 { "no" } else { "ok, fine" };
        answers.insert(id, Value::String(answer.into()));
    }
    std::fs::write(&cases, lines).unwrap();
    let fixture = dir.path().join("big.fixture.json");
    std::fs::write(
        &fixture,
        serde_json::json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app", "preset": "prompt", "suiteId": "big",
            "provider": "fixture", "model": "m",
            "assertions": [{"type": "contains"}],
            "cases": "cases.jsonl"
        })
        .to_string(),
    )
    .unwrap();
    let results = dir.path().join("answers.json");
    std::fs::write(&results, Value::Object(answers).to_string()).unwrap();
    let html = dir.path().join("big.html");
    let run = eval_run(
        &fixture,
        &[
            "--fixture-results",
            results.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let seen = browse(
        &html,
        &artifact("ten-thousand.png"),
        "case-09007",
        "case-09007",
    )
    .unwrap();
    assert_eq!(
        seen["consoleErrors"],
        serde_json::json!([]),
        "{}",
        seen["consoleErrors"]
    );
    assert_eq!(seen["shown"], "10000 of 10000 shown");
    assert_eq!(
        seen["rows"].as_array().unwrap().len(),
        100,
        "one page of rows"
    );
    assert_eq!(ids(&seen["searchRows"]), ["case-09007:failed"]);
    assert_eq!(seen["failedRows"].as_array().unwrap().len(), 10);
    assert_eq!(seen["detail"]["answer"], "no");
}

/// `cautilus eval test` under a pseudo-terminal (`script`), its output as
/// the terminal received it.
fn under_pty(args: &[&str]) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipping: `script` (util-linux) is not installed");
        return None;
    }
    let mut line = format!(
        "CAUTILUS_CACHE_DIR={} {}",
        crate::support::shared_cache_dir().display(),
        env!("CARGO_BIN_EXE_cautilus")
    );
    for arg in args {
        line.push_str(&format!(" '{}'", arg.replace('\'', r"'\''")));
    }
    let out = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn progress_shows_on_a_terminal_and_never_in_piped_output() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = release_notes();
    let records = dir.path().join("run");
    let base = [
        "eval",
        "test",
        "--fixture",
        fixture.to_str().unwrap(),
        "--provider",
        "fixture",
        "--output-dir",
        records.to_str().unwrap(),
    ];
    let Some(screen) = under_pty(&base) else {
        return;
    };
    // The bar was drawn (cases done/total, counts, ETA) and replaced by one
    // summary line; the case lines are still there.
    assert!(screen.contains("/6 cases · "), "{screen:?}");
    assert!(screen.contains("ETA"), "{screen:?}");
    assert!(screen.contains("6 of 6 cases in "), "{screen:?}");
    assert!(screen.contains(": 5 passed, 1 failed"), "{screen:?}");
    assert!(screen.contains("FAIL  changelog-entry"), "{screen:?}");
    assert!(screen.contains("experiment passed"), "{screen:?}");

    // --quiet and --json: no bar, no case lines, even on a terminal.
    let records = dir.path().join("quiet");
    let mut quiet = base.to_vec();
    quiet[7] = records.to_str().unwrap();
    quiet.push("--quiet");
    let screen = under_pty(&quiet).unwrap();
    assert!(!screen.contains("cases · "), "{screen:?}");
    assert!(!screen.contains("FAIL  changelog-entry"), "{screen:?}");
    assert!(screen.contains("experiment passed"), "{screen:?}");

    // Piped: no bar, no escape sequences, no summary line on stderr.
    let records = dir.path().join("piped");
    let out = cautilus().args(&base[..7]).arg(&records).output().unwrap();
    let (code, stdout, stderr) = output(out);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stderr.contains("cases in") && !stderr.contains('\u{1b}'),
        "{stderr:?}"
    );
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(stdout.contains("FAIL  changelog-entry"));
}
