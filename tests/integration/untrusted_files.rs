//! Files a user is handed (a cassette or baseline in a pull request, a pack
//! archive from a registry, an answer from a provider) and ids a fixture
//! chooses, through the binary: an oversized cassette is refused by its
//! size, a large one replays in memory near its size, an edited entry
//! errors its case; long and colliding suite ids name bounded, distinct
//! files and a baseline of another suite is refused; JSON answers nested
//! past a parser's limit get the right verdict; a pack whose installed
//! manifest changed is refused by the lock, and a zero-bomb pack entry is
//! refused before it is unpacked.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{cautilus, component, input, output, peak_rss_kib, read_json, score, session};

// ---------------------------------------------------------------- helpers

/// A two-case app/prompt suite answered by canned results, in `dir`.
fn suite(dir: &Path, suite_id: &str, file: &str, cases: &[(&str, &str)]) -> PathBuf {
    let fixture = dir.join(file);
    let answers = format!("{file}.answers.json");
    let canned: serde_json::Map<String, Value> = cases
        .iter()
        .map(|(id, answer)| (id.to_string(), json!(answer)))
        .collect();
    std::fs::write(dir.join(&answers), Value::Object(canned).to_string()).unwrap();
    let body = json!({
        "schemaVersion": "cautilus.evaluation_input.v1",
        "surface": "app", "preset": "prompt", "suiteId": suite_id,
        "provider": "openai", "model": "m1",
        "fixtureResults": answers,
        "assertions": [{"type": "levenshtein", "name": "similar", "value": "Hello Ada", "threshold": 0.0}],
        "gates": {"scores": {"similar": {"minDeltaVsBaseline": -1.0}}},
        "cases": cases.iter().map(|(id, answer)| json!({
            "caseId": id, "input": format!("Say {id}"), "expected": {"finalText": answer}
        })).collect::<Vec<_>>(),
    });
    std::fs::write(&fixture, body.to_string()).unwrap();
    fixture
}

/// `eval test` of `fixture` with `dir` as workspace and current directory;
/// records in `<dir>/<out>` when `out` is given, else in a new run
/// directory under `.cautilus/runs`. (exit code, stdout, stderr, the
/// summary packet or null).
fn eval(
    dir: &Path,
    fixture: &Path,
    out: Option<&str>,
    args: &[&str],
) -> (i32, String, String, Value) {
    let mut command = cautilus();
    command
        .current_dir(dir)
        .args(["eval", "test", "--fixture"])
        .arg(fixture)
        .arg("--workspace")
        .arg(dir)
        .args(args)
        .env("PATH", "/usr/bin:/bin");
    if let Some(out) = out {
        command.arg("--output-dir").arg(dir.join(out));
    }
    let (code, stdout, stderr) = output(command.output().unwrap());
    let summary = out
        .map(|o| dir.join(o).join("eval-summary.json"))
        .filter(|p| p.exists())
        .map_or(Value::Null, |p| read_json(&p));
    (code, stdout, stderr, summary)
}

fn promote(dir: &Path) -> (i32, String, String) {
    output(
        cautilus()
            .current_dir(dir)
            .args(["eval", "promote", "latest"])
            .output()
            .unwrap(),
    )
}

/// The files in `dir` (names only).
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------- cassettes

/// A suite recorded once (`record-new`) into `.cautilus/cassettes/<id>.json`;
/// returns (fixture, cassette path).
fn recorded(dir: &Path, suite_id: &str) -> (PathBuf, PathBuf) {
    let fixture = suite(
        dir,
        suite_id,
        "suite.fixture.json",
        &[("a", "Hello Ada"), ("b", "Hello Bo")],
    );
    let (code, stdout, stderr, _) =
        eval(dir, &fixture, Some("record"), &["--replay", "record-new"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let cassette = dir
        .join(".cautilus/cassettes")
        .join(format!("{suite_id}.json"));
    assert!(
        cassette.exists(),
        "{:?}",
        names(&dir.join(".cautilus/cassettes"))
    );
    (fixture, cassette)
}

/// Adds `count` entries (never hit) of about `each` bytes to a cassette, as
/// nested observations of many short members (what a transcript looks
/// like), and returns the file's size.
fn pad(cassette: &Path, count: usize, each: usize) -> u64 {
    let text = std::fs::read_to_string(cassette).unwrap();
    let cut = text.rfind("\n  }\n}").expect("the cassette's entries end");
    let mut padded = String::with_capacity(count * (each + 200) + text.len());
    padded.push_str(&text[..cut]);
    let messages: Vec<Value> = (0..each / 40)
        .map(|i| json!({"role": "tool", "content": format!("line {i}")}))
        .collect();
    let filler = json!({
        "recordedAt": "2026-01-01T00:00:00.000Z",
        "request": {"kind": "provider", "adapter": "fixture", "input": "filler"},
        "observation": {"finalText": "filler", "messages": messages},
    })
    .to_string();
    for i in 0..count {
        padded.push_str(&format!(",\n    \"{i:064x}\": {filler}"));
    }
    padded.push_str(&text[cut..]);
    std::fs::write(cassette, padded).unwrap();
    std::fs::metadata(cassette).unwrap().len()
}

#[test]
fn an_oversized_cassette_is_refused_naming_its_size_the_cap_and_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, cassette) = recorded(dir.path(), "capped");
    let size = pad(&cassette, 40, 60_000);
    assert!(size > 2 << 20, "{size}");

    let (code, _, stderr, _) = eval(
        dir.path(),
        &fixture,
        Some("small-cap"),
        &["--replay", "replay-strict", "--max-cassette-mib", "1"],
    );
    assert_eq!(code, 2, "{stderr}");
    for needle in [
        "capped.json",
        &format!("{size} bytes"),
        "1 MiB",
        "--max-cassette-mib",
    ] {
        assert!(stderr.contains(needle), "`{needle}` in {stderr}");
    }
    // The flag raises the cap.
    let (code, stdout, stderr, summary) = eval(
        dir.path(),
        &fixture,
        Some("raised"),
        &["--replay", "replay-strict", "--max-cassette-mib", "8"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(summary["evaluations"][0]["status"], "passed");

    // The default cap holds for a file far past it (sparse: refused by its
    // size, not read), and a device is no cassette (it never ends).
    let huge = std::fs::File::create(&cassette).unwrap();
    huge.set_len(300 << 20).unwrap();
    drop(huge);
    let (code, _, stderr, _) = eval(
        dir.path(),
        &fixture,
        Some("huge"),
        &["--replay", "replay-strict"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("256 MiB") && stderr.contains("--max-cassette-mib"),
        "{stderr}"
    );
    // A link to a device is refused as a link; a pipe is never waited on.
    std::fs::remove_file(&cassette).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &cassette).unwrap();
    let (code, _, stderr, _) = eval(
        dir.path(),
        &fixture,
        Some("device"),
        &["--replay", "record-new", "--max-cassette-mib", "1"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("capped.json") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    std::fs::remove_file(&cassette).unwrap();
    let fifo = std::ffi::CString::new(cassette.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) reads the NUL-terminated path only.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let (code, _, stderr, _) = eval(
        dir.path(),
        &fixture,
        Some("pipe"),
        &["--replay", "record-new", "--max-cassette-mib", "1"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("capped.json") && stderr.contains("not a regular file"),
        "{stderr}"
    );
}

#[test]
fn replaying_two_cases_from_a_large_cassette_takes_memory_near_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, cassette) = recorded(dir.path(), "large");
    let replay = |out: &str| {
        let mut command = cautilus();
        command
            .current_dir(dir.path())
            .args(["eval", "test", "--json", "--fixture"])
            .arg(&fixture)
            .arg("--workspace")
            .arg(dir.path())
            .arg("--output-dir")
            .arg(dir.path().join(out))
            .args(["--replay", "replay-strict", "--max-cassette-mib", "1024"]);
        peak_rss_kib(&command, &dir.path().join(format!("{out}.log")))
    };
    let (code, small_kib) = replay("small");
    assert_eq!(code, 0);
    let size = pad(&cassette, 1_000, 100_000);
    let size_kib = i64::try_from(size >> 10).unwrap();
    let (code, large_kib) = replay("large");
    let log = std::fs::read_to_string(dir.path().join("large.log")).unwrap();
    assert_eq!(code, 0, "{log}");
    let summary = read_json(&dir.path().join("large/eval-summary.json"));
    assert_eq!(summary["evaluationCounts"]["passed"], 2, "{summary}");
    // Held as a JSON tree, the entries took about 17 times the file; held
    // as their text, about the file once (and an index).
    let grown = large_kib - small_kib;
    assert!(
        grown < 2 * size_kib,
        "a {size_kib} KiB cassette: {small_kib} KiB before, {large_kib} KiB after (+{grown} KiB)"
    );
}

/// The key of the entry whose stored request mentions `needle`.
fn key_of(cassette: &Value, needle: &str) -> String {
    cassette["entries"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, entry)| entry["request"].to_string().contains(needle))
        .map(|(key, _)| key.clone())
        .unwrap_or_else(|| panic!("no entry for {needle}: {cassette}"))
}

#[test]
fn a_cassette_entry_whose_request_was_edited_errors_its_case() {
    let dir = tempfile::tempdir().unwrap();
    let (fixture, cassette) = recorded(dir.path(), "edited");
    let original = read_json(&cassette);
    let (a, b) = (key_of(&original, "Say a"), key_of(&original, "Say b"));
    let replay = |out: &str| {
        eval(
            dir.path(),
            &fixture,
            Some(out),
            &["--replay", "replay-strict"],
        )
    };
    let write = |value: &Value| {
        std::fs::write(&cassette, serde_json::to_string_pretty(value).unwrap()).unwrap()
    };
    let errored_naming = |summary: &Value, index: usize, key: &str| {
        let evaluation = &summary["evaluations"][index];
        assert_eq!(evaluation["status"], "errored", "{evaluation}");
        let text = evaluation.to_string();
        assert!(
            text.contains(key) && text.contains("edited") && text.contains("--replay refresh"),
            "{text}"
        );
    };

    // The stored request of `a` changed, its key kept.
    let mut edited = original.clone();
    let request = &mut edited["entries"][&a]["request"];
    *request = serde_json::from_str(&request.to_string().replace("Say a", "Say z")).unwrap();
    write(&edited);
    let (code, _, _, summary) = replay("request");
    assert_ne!(code, 0);
    errored_naming(&summary, 0, &a);
    assert_eq!(summary["evaluations"][1]["status"], "passed", "{summary}");

    // `b`'s entry moved under `a`'s key: `a` would get `b`'s answer.
    let mut moved = original.clone();
    moved["entries"][&a] = original["entries"][&b].clone();
    write(&moved);
    let (code, _, _, summary) = replay("moved");
    assert_ne!(code, 0);
    errored_naming(&summary, 0, &a);

    // `b`'s entry under `a`'s key with its request written `[redacted]`
    // by hand: a whole request never redacts to that, so it is no match.
    let mut blanked = original.clone();
    blanked["entries"][&a] = original["entries"][&b].clone();
    blanked["entries"][&a]["request"] = json!("[redacted]");
    write(&blanked);
    let (code, _, _, summary) = replay("blanked");
    assert_ne!(code, 0);
    errored_naming(&summary, 0, &a);

    // ... or with only its texts written `[redacted]`: they stand for
    // nothing else either.
    let mut texts = original.clone();
    texts["entries"][&a] = original["entries"][&b].clone();
    let request = &mut texts["entries"][&a]["request"];
    *request = serde_json::from_str(&request.to_string().replace("Say b", "[redacted]")).unwrap();
    write(&texts);
    let (code, _, _, summary) = replay("texts");
    assert_ne!(code, 0);
    errored_naming(&summary, 0, &a);

    // A key changed in the file: the entry no longer answers its request
    // (a miss), and is not taken for another.
    let mut rekeyed = original.clone();
    let entries = rekeyed["entries"].as_object_mut().unwrap();
    let entry = entries.remove(&a).unwrap();
    entries.insert("0".repeat(64), entry);
    write(&rekeyed);
    let (_, _, _, summary) = replay("rekeyed");
    assert!(
        summary["evaluations"][0]
            .to_string()
            .contains("no recorded answer"),
        "{summary}"
    );

    // By design: an edited observation under its own request is replayed
    // (the cassette records answers; it does not sign them).
    let mut answered = original.clone();
    answered["entries"][&a]["observation"]["finalText"] = json!("Hello Ada, edited");
    write(&answered);
    let (_, _, _, summary) = replay("observation");
    assert!(
        summary["evaluations"][0]
            .to_string()
            .contains("Hello Ada, edited"),
        "{summary}"
    );

    // `--replay refresh` records every call again.
    write(&edited);
    let (code, stdout, stderr, _) = eval(
        dir.path(),
        &fixture,
        Some("refresh"),
        &["--replay", "refresh"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr, _) = replay("refreshed");
    assert_eq!(code, 0, "{stdout}{stderr}");
}

// ------------------------------------------------------- names from ids

#[test]
fn a_300_character_suite_id_records_a_cassette_and_promotes_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let id = format!("long-{}", "x".repeat(295));
    let fixture = suite(dir.path(), &id, "long.fixture.json", &[("a", "Hello Ada")]);
    let (code, stdout, stderr, _) = eval(dir.path(), &fixture, None, &["--replay", "record-new"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let cassettes = names(&dir.path().join(".cautilus/cassettes"));
    assert_eq!(cassettes.len(), 1, "{cassettes:?}");
    assert!(cassettes[0].len() <= 80, "{cassettes:?}");
    let (code, stdout, stderr) = promote(dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let baselines = names(&dir.path().join(".cautilus/baselines"));
    assert!(
        baselines.len() == 1 && baselines[0].len() <= 80,
        "{baselines:?}"
    );
    let baseline = read_json(&dir.path().join(".cautilus/baselines").join(&baselines[0]));
    assert_eq!(baseline["suiteId"], id.as_str());
    let (code, stdout, stderr, _) =
        eval(dir.path(), &fixture, None, &["--replay", "replay-strict"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("vs the committed baseline"), "{stdout}");
}

#[test]
fn suites_whose_ids_sanitize_alike_keep_their_own_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let slash = suite(root, "a/b", "slash.fixture.json", &[("x1", "Hello Ada")]);
    let underscore = suite(
        root,
        "a_b",
        "underscore.fixture.json",
        &[("y1", "Hello Ada"), ("y2", "Hello Bo")],
    );
    for fixture in [&slash, &underscore] {
        let (code, stdout, stderr, _) = eval(root, fixture, None, &[]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        let (code, stdout, stderr) = promote(root);
        assert_eq!(code, 0, "{stdout}{stderr}");
    }
    let baselines = names(&root.join(".cautilus/baselines"));
    assert_eq!(baselines.len(), 2, "{baselines:?}");
    let (code, stdout, stderr, _) = eval(root, &slash, None, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("(1 paired cells"),
        "a/b against its own: {stdout}"
    );
    let (code, stdout, stderr, _) = eval(root, &underscore, None, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("(2 paired cells"),
        "a_b against its own: {stdout}"
    );

    // Another suite's baseline under this suite's name is refused.
    let other = suite(root, "other", "other.fixture.json", &[("y1", "Hello Ada")]);
    std::fs::copy(
        root.join(".cautilus/baselines/a_b.json"),
        root.join(".cautilus/baselines/other.json"),
    )
    .unwrap();
    let (code, stdout, stderr, _) = eval(root, &other, None, &[]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("`a_b`") && stderr.contains("`other`") && stderr.contains("other.json"),
        "{stderr}"
    );
}

#[test]
fn a_baseline_under_its_legacy_name_is_read_only_when_it_names_its_suite() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let fixture = suite(root, "My Suite", "mine.fixture.json", &[("a", "Hello Ada")]);
    assert_eq!(eval(root, &fixture, None, &[]).0, 0);
    let (code, stdout, stderr) = promote(root);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let baselines = root.join(".cautilus/baselines");
    let written = names(&baselines);
    assert_eq!(written.len(), 1);
    // Where earlier versions wrote it.
    let legacy = baselines.join("My_Suite.json");
    std::fs::rename(baselines.join(&written[0]), &legacy).unwrap();
    let (code, stdout, stderr, _) = eval(root, &fixture, None, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("vs the committed baseline"), "{stdout}");

    // A legacy file of another suite (`My_Suite`, or `My/Suite`, which
    // shared that name) is not this suite's baseline.
    let mut other = read_json(&legacy);
    other["suiteId"] = json!("My/Suite");
    std::fs::write(&legacy, other.to_string()).unwrap();
    let (code, stdout, stderr, _) = eval(root, &fixture, None, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("no baseline to compare with yet"),
        "{stdout}"
    );
}

// ------------------------------------------------------- deep JSON answers

/// `depth` nested arrays around `inner`.
fn nested(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn json_answers_nested_past_the_parsers_limit_get_the_right_verdict() {
    for depth in [127, 128, 129, 1_000, 10_000, 100_000] {
        let deep = nested(depth, "1");
        let verdict = score("is-json", json!({}), &deep, None);
        assert_eq!(verdict.passed, Some(true), "depth {depth}: {verdict:?}");
        // Objects and lists alternating: twice as deep.
        let objects = format!("{}1{}", "{\"a\":[".repeat(depth), "]}".repeat(depth));
        let verdict = score("is-json", json!({}), &objects, None);
        assert_eq!(verdict.passed, Some(true), "objects {depth}: {verdict:?}");
        for broken in [
            nested(depth, "1,"),
            format!("{}{}", "[".repeat(depth), "]".repeat(depth - 1)),
            format!("{}]", nested(depth, "")),
            nested(depth, "\"unterminated"),
            nested(depth, "01"),
            format!("{} x", nested(depth, "")),
        ] {
            let verdict = score("is-json", json!({}), &broken, None);
            assert_eq!(verdict.passed, Some(false), "depth {depth}: {verdict:?}");
            assert!(verdict.detail.unwrap().contains("not JSON"));
        }
    }
    // Through the binary: `score` passes it (exit 0), and a check that
    // needs the value is an error naming why, never a `FAIL` verdict.
    let dir = tempfile::tempdir().unwrap();
    for depth in [128, 10_000] {
        let answer = dir.path().join(format!("deep-{depth}.json"));
        std::fs::write(&answer, nested(depth, "1")).unwrap();
        let at = format!("@{}", answer.display());
        let (code, stdout, stderr) =
            crate::support::run(&["score", "--scorer", "is-json", "--output", &at]);
        assert_eq!(code, 0, "depth {depth}: {stdout}{stderr}");
        let (code, stdout, stderr) = crate::support::run(&[
            "score",
            "--scorer",
            "is-json",
            "--output",
            &at,
            "--config",
            r#"{"value": {"type": "array"}}"#,
        ]);
        assert_ne!(code, 0, "schema at depth {depth}: {stdout}{stderr}");
        assert!(
            !stdout.contains("FAIL") && stderr.contains("cannot be checked"),
            "schema at depth {depth}: {stdout}{stderr}"
        );
    }

    // A schema needs the parsed value: past the parser's limit the check is
    // errored with the reason, never failed (nor passed).
    let mut schema = session("is-json", json!({"value": {"type": "array"}})).unwrap();
    assert_eq!(
        schema
            .score(&input(&nested(100, "1"), None))
            .unwrap()
            .passed,
        Some(true)
    );
    let error = schema
        .score(&input(&nested(10_000, "1"), None))
        .unwrap_err()
        .to_string();
    assert!(error.contains("nest"), "{error}");
    assert_eq!(
        schema
            .score(&input(&nested(10_000, "1,"), None))
            .unwrap()
            .passed,
        Some(false),
        "broken JSON still fails"
    );

    // json-diff compares parsed values: the same rule.
    let mut diff = session("json-diff", json!({"value": [[1]]})).unwrap();
    assert_eq!(
        diff.score(&input("[[1]]", None)).unwrap().passed,
        Some(true)
    );
    let error = diff
        .score(&input(&nested(10_000, "1"), None))
        .unwrap_err()
        .to_string();
    assert!(error.contains("nest"), "{error}");
    assert_eq!(
        diff.score(&input(&nested(10_000, "1,"), None))
            .unwrap()
            .passed,
        Some(false)
    );
    // equals with a JSON reference: deep JSON is JSON, and not the reference.
    let verdict = score(
        "equals",
        json!({"value": {"a": 1}}),
        &nested(10_000, "1"),
        None,
    );
    assert_eq!(verdict.passed, Some(false));
    assert!(!verdict.detail.unwrap().contains("not JSON"));
}

// ---------------------------------------------------------------- packs

/// A pack home, a project (with cautilus.toml) and a pack source directory
/// whose one scorer is the `hostile` test component.
struct Packs {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    source: PathBuf,
}

impl Packs {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (home, project, source) = (
            dir.path().join("home"),
            dir.path().join("project"),
            dir.path().join("pack"),
        );
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&source).unwrap();
        std::fs::write(project.join("cautilus.toml"), "").unwrap();
        std::fs::write(
            source.join("cautilus-pack.toml"),
            format!(
                "[pack]\nname = \"lock-probe\"\nversion = \"0.1.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"components/hostile.wasm\"\nkind = \"scorer\"\nids = [\"hostile\"]\nbuild = \"mkdir -p out && cp '{}' out/hostile.wasm\"\nsource = \"out/hostile.wasm\"\n",
                component("hostile")
            ),
        )
        .unwrap();
        std::fs::write(
            project.join("suite.fixture.yaml"),
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: pack-suite\nprovider: fixture\nmodel: canned\ncases:\n  - caseId: fine\n    input: answer ok\n    assertions: [{type: lock-probe/hostile}]\n",
        )
        .unwrap();
        std::fs::write(project.join("canned.json"), r#"{"fine": "ok"}"#).unwrap();
        Self {
            _dir: dir,
            home,
            project,
            source,
        }
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = cautilus();
        command
            .args(args)
            .current_dir(&self.project)
            .env("CAUTILUS_HOME", &self.home);
        command
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        output(self.command(args).output().unwrap())
    }

    fn eval(&self, out: &str) -> (i32, String, String) {
        self.run(&[
            "eval",
            "test",
            "--fixture",
            "suite.fixture.yaml",
            "--fixture-results",
            "canned.json",
            "--output-dir",
            out,
        ])
    }
}

#[test]
fn a_pack_whose_installed_manifest_changed_is_refused_by_the_lock() {
    let packs = Packs::new();
    let archive = packs.project.join("p.tgz");
    let (code, stdout, stderr) = packs.run(&[
        "pack",
        "build",
        packs.source.to_str().unwrap(),
        "-o",
        archive.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = packs.run(&["pack", "install", archive.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let lock_path = packs.project.join("cautilus.lock");
    let lock = std::fs::read_to_string(&lock_path).unwrap();
    assert!(lock.contains("manifest = \""), "{lock}");
    let (code, stdout, stderr) = packs.eval("ok");
    assert_eq!(code, 0, "{stdout}{stderr}");

    // The installed manifest changes (its component now also serves
    // `equals`); every file is as locked.
    let manifest = packs.home.join("packs/lock-probe/0.1.0/cautilus-pack.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let changed = text.replace(r#"ids = ["hostile"]"#, r#"ids = ["hostile", "equals"]"#);
    assert_ne!(text, changed);
    std::fs::write(&manifest, &changed).unwrap();
    let (code, stdout, stderr) = packs.eval("changed");
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("lock-probe@0.1.0")
            && stderr.contains("cautilus-pack.toml")
            && stderr.contains("cautilus pack install"),
        "{stderr}"
    );
    let (code, _, stderr) = packs.run(&["pack", "verify"]);
    assert_eq!(code, 2, "{stderr}");

    // A lock written before manifests were pinned still works, with a
    // warning to pin again.
    std::fs::write(&manifest, &text).unwrap();
    let old: String = lock
        .lines()
        .filter(|l| !l.starts_with("manifest = "))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("version = 2", "version = 1");
    std::fs::write(&lock_path, old).unwrap();
    let (code, stdout, stderr) = packs.eval("old-lock");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("lock-probe") && stderr.contains("manifest"),
        "{stderr}"
    );
}

/// A gzip-compressed tar with a valid manifest listing one component, then
/// that component's header declaring `declared` bytes followed by `zeros`
/// bytes of zeros (written as repeated deflate blocks, so the file stays
/// small and quick to make), and no end.
fn zero_bomb(declared: u64, zeros_mib: usize) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let manifest = "[pack]\nname = \"bomb\"\nversion = \"0.1.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"components/x.wasm\"\nkind = \"scorer\"\nids = [\"x\"]\nsha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n";
    let header = |path: &str, size: u64| {
        let mut header = tar::Header::new_gnu();
        header.set_path(path).unwrap();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        header.as_bytes().to_vec()
    };
    // No end-of-archive blocks: the entry's data runs on.
    let mut head = header("cautilus-pack.toml", manifest.len() as u64);
    head.extend_from_slice(manifest.as_bytes());
    head.resize(head.len().next_multiple_of(512), 0);
    head.extend(header("components/x.wasm", declared));

    let deflate = |data: &[u8]| {
        let mut compress = Compress::new(Compression::fast(), false);
        let mut out = Vec::with_capacity(data.len() + 1024);
        compress
            .compress_vec(data, &mut out, FlushCompress::Sync)
            .unwrap();
        assert_eq!(compress.total_in(), data.len() as u64);
        out
    };
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    gz.extend(deflate(&head));
    let block = deflate(&vec![0u8; 1 << 20]);
    for _ in 0..zeros_mib {
        gz.extend_from_slice(&block);
    }
    gz
}

#[test]
fn a_zero_bomb_pack_entry_is_refused_before_it_is_unpacked() {
    let packs = Packs::new();
    let bomb = packs.project.join("bomb.tgz");
    std::fs::write(&bomb, zero_bomb(2 << 30, 700)).unwrap();
    assert!(std::fs::metadata(&bomb).unwrap().len() < 8 << 20);
    let log = packs.project.join("bomb.log");
    let (code, peak_kib) = peak_rss_kib(
        &packs.command(&["pack", "install", bomb.to_str().unwrap(), "--no-lock"]),
        &log,
    );
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("components/x.wasm")
            && stderr.contains("2048 MiB")
            && stderr.contains("MiB a pack entry may hold"),
        "{stderr}"
    );
    assert!(peak_kib < 200 * 1024, "peak {peak_kib} KiB");
    assert!(!packs.home.join("packs/bomb").exists());
}

#[cfg(unix)]
#[test]
fn records_directories_committed_as_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let fixture = suite(&project, "package", "s.fixture.json", &[("a", "Hello Ada")]);
    // A pull request commits `.cautilus/cassettes` (or `.cautilus/runs`, or
    // `.cautilus` itself) as a link out of the repository.
    for link in [".cautilus/cassettes", ".cautilus/runs", ".cautilus"] {
        let _ = std::fs::remove_dir_all(project.join(".cautilus"));
        let _ = std::fs::remove_file(project.join(".cautilus"));
        std::fs::create_dir_all(project.join(link).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, project.join(link)).unwrap();
        let (code, stdout, stderr, _) = eval(&project, &fixture, None, &["--replay", "record-new"]);
        assert_eq!(code, 2, "{link}: {stdout}{stderr}");
        assert!(
            stderr.contains("is a symbolic link") && stderr.contains(link),
            "{link}: {stderr}"
        );
        assert_eq!(
            std::fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "{link}: nothing written through the link"
        );
    }
    // A cassette file that is a link (to a cassette outside) is not read.
    let _ = std::fs::remove_file(project.join(".cautilus"));
    let (code, stdout, stderr, _) = eval(&project, &fixture, None, &["--replay", "record-new"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let cassette = project.join(".cautilus/cassettes/package.json");
    std::fs::rename(&cassette, elsewhere.join("c.json")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("c.json"), &cassette).unwrap();
    let (code, stdout, stderr, _) = eval(
        &project,
        &fixture,
        Some("strict"),
        &["--replay", "replay-strict"],
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
}
