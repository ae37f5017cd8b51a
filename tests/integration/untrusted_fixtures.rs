//! Fixtures written by an attacker (they arrive in pull requests), through
//! the real binary: host-internal keys mean nothing when a fixture writes
//! them, every path a fixture names stays inside its root (`..` and
//! symbolic links included, for reading and for writing), case workspace
//! templates follow no link out and open no pipe, golden files keep their
//! mode and links, and encodings (byte order marks, duplicate CSV columns)
//! are read as a user means them. Each attack is built in a temporary
//! project next to an `outside/` directory holding a file whose text must
//! never reach a record and which must never change.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{all_text, cautilus, output};

/// The text of the file outside the project.
const SECRET: &str = "OUTSIDE-TEXT-7f3a91";

/// A project directory inside a temporary directory that also holds
/// `outside/victim.txt`.
struct Layout {
    dir: tempfile::TempDir,
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside/b")).unwrap();
        std::fs::write(dir.path().join("outside/victim.txt"), SECRET).unwrap();
        std::fs::write(
            dir.path().join("outside/b/case.yaml"),
            format!("input: {SECRET}\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("outside/cases.jsonl"),
            format!("{{\"caseId\": \"x\", \"input\": \"{SECRET}\"}}\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("outside/base.fixture.json"),
            json!({"system": SECRET}).to_string(),
        )
        .unwrap();
        Self { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.project().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// An app/chat fixture in the project with `fields` over a plain one.
    fn fixture(&self, name: &str, fields: Value) -> PathBuf {
        let mut fixture = json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "surface": "app",
            "preset": "chat",
            "suiteId": "attack",
            "provider": "fixture",
            "model": "m",
            "cases": [{"caseId": "a", "messages": [{"role": "user", "content": "hi"}]}]
        });
        for (key, value) in fields.as_object().unwrap() {
            fixture[key] = value.clone();
        }
        self.write(name, &fixture.to_string())
    }

    /// The outside files are as they were.
    fn assert_outside_untouched(&self, what: &str) {
        assert_eq!(
            std::fs::read_to_string(self.outside().join("victim.txt")).unwrap(),
            SECRET,
            "{what}: the outside file changed"
        );
        let names: Vec<String> = std::fs::read_dir(self.outside())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 4, "{what}: files appeared outside: {names:?}");
    }
}

/// `eval validate` and `eval test --update-snapshots` of `fixture` (from
/// the project directory): both must refuse it with exit 2 and an error
/// containing `expected`, write nothing outside, and copy nothing of it.
fn assert_refused(layout: &Layout, fixture: &Path, expected: &str, extra: &[&str]) {
    assert_refused_as(layout, fixture, expected, expected, extra);
}

/// [`assert_refused`], with what each command's error must contain.
fn assert_refused_as(
    layout: &Layout,
    fixture: &Path,
    validate_says: &str,
    test_says: &str,
    extra: &[&str],
) {
    let what = format!("{} ({test_says})", fixture.display());
    let expected = validate_says;
    let (code, stdout, stderr) = output(
        cautilus()
            .current_dir(layout.project())
            .args(["eval", "validate", "--fixture"])
            .arg(fixture)
            .args(extra)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{what}: {stdout}{stderr}");
    assert!(stderr.contains(expected), "{what}: {stderr}");
    let out = tempfile::tempdir().unwrap();
    let run_dir = out.path().join("run");
    let (code, stdout, stderr) = output(
        cautilus()
            .current_dir(layout.project())
            .args([
                "eval",
                "test",
                "--provider",
                "fixture",
                "--update-snapshots",
            ])
            .arg("--fixture")
            .arg(fixture)
            .arg("--output-dir")
            .arg(&run_dir)
            .args(extra)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{what}: {stdout}{stderr}");
    assert!(stderr.contains(test_says), "{what}: {stderr}");
    assert!(
        !stdout.contains(SECRET) && !stderr.contains(SECRET),
        "{what}"
    );
    assert!(
        !run_dir.exists() || !all_text(&run_dir).contains(SECRET),
        "{what}: the outside text reached a record"
    );
    layout.assert_outside_untouched(&what);
}

#[test]
fn host_bookkeeping_keys_written_by_a_fixture_mean_nothing() {
    let layout = Layout::new();
    let outside = layout.outside().display().to_string();
    let origin = json!({"dir": outside, "file": format!("{outside}/victim.txt")});
    let case = |extra: Value| {
        let mut case = json!({
            "caseId": "a",
            "messages": [{"role": "user", "content": "hi"}],
            "expected": {"snapshot": "./victim.txt"}
        });
        for (k, v) in extra.as_object().unwrap() {
            case[k] = v.clone();
        }
        case
    };
    // Inline in a JSON fixture, inline in a YAML fixture, in a JSONL case
    // file, in a case directory's case.yaml, in a YAML case list.
    let inline = layout.fixture(
        "inline.fixture.json",
        json!({"cases": [case(json!({"$origin": origin}))]}),
    );
    let yaml = layout.write(
        "inline.fixture.yaml",
        &format!(
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: chat\nsuiteId: y\nprovider: fixture\nmodel: m\ncases:\n  - {}\n",
            case(json!({"$origin": origin}))
        ),
    );
    layout.write(
        "list/cases.jsonl",
        &format!("{}\n", case(json!({"$origin": origin}))),
    );
    let jsonl = layout.fixture("list.fixture.json", json!({"cases": "./list/cases.jsonl"}));
    layout.write(
        "dirs/cases/a/case.yaml",
        &format!(
            "messages: [{{role: user, content: hi}}]\nexpected: {{snapshot: ./victim.txt}}\n\"$origin\": {{dir: \"{outside}\"}}\n"
        ),
    );
    let dirs = layout.fixture("dirs/dirs.fixture.json", json!({"cases": "./cases/"}));
    layout.write(
        "yl/cases.yaml",
        &format!("- {}\n", case(json!({"$origin": origin}))),
    );
    let yaml_list = layout.fixture("yl/list.fixture.json", json!({"cases": "./cases.yaml"}));
    // The golden is looked for beside the case, not where `$origin` says;
    // run with `--update-snapshots`, the preset refuses the unknown field.
    let case_dir = layout.project().join("dirs/cases/a");
    for (fixture, dir) in [
        (&inline, layout.project()),
        (&yaml, layout.project()),
        (&jsonl, layout.project()),
        (&dirs, case_dir),
        (&yaml_list, layout.project().join("yl")),
    ] {
        let beside = dir.join("victim.txt");
        let validate_says = format!("golden file {} does not exist", beside.display());
        assert_refused_as(&layout, fixture, &validate_says, "$origin", &[]);
    }
    // The host's marker of a streamed list, written by hand.
    let marker = layout.fixture(
        "marker.fixture.json",
        json!({"cases": {"$cases": {"file": format!("{outside}/cases.jsonl"), "format": "jsonl", "key": ""}}}),
    );
    assert_refused(&layout, &marker, "must be a list of cases", &[]);
    let steps = layout.write(
        "steps.fixture.json",
        &json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "steps": [{
                "schemaVersion": "cautilus.evaluation_input.v1",
                "surface": "app", "preset": "chat", "provider": "fixture", "model": "m",
                "cases": {"$cases": {"file": format!("{outside}/cases.jsonl"), "format": "jsonl", "key": ""}}
            }]
        })
        .to_string(),
    );
    assert_refused(&layout, &steps, "must be a list of cases", &[]);
}

#[test]
fn paths_leading_out_of_the_project_are_refused() {
    let layout = Layout::new();
    // A golden through `..`, through a symlinked directory, through
    // `dir/link/../x`, and an absolute one.
    let golden = |path: &str| {
        json!({"cases": [{
            "caseId": "a",
            "messages": [{"role": "user", "content": "hi"}],
            "expected": {"snapshot": path}
        }]})
    };
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(layout.outside(), layout.project().join("goldens")).unwrap();
        std::fs::create_dir_all(layout.project().join("d")).unwrap();
        std::os::unix::fs::symlink(layout.outside().join("b"), layout.project().join("d/link"))
            .unwrap();
    }
    let mut attacks: Vec<(PathBuf, &str)> = vec![
        (
            layout.fixture("g1.fixture.json", golden("../outside/victim.txt")),
            "leaves the fixture's directory",
        ),
        (
            layout.fixture("g4.fixture.json", golden("/etc/hostname")),
            "is absolute",
        ),
        (
            layout.fixture("e1.fixture.json", json!({"extends": "../outside/base.fixture.json"})),
            "outside the fixture's directory",
        ),
        (
            layout.fixture("c1.fixture.json", json!({"cases": "../outside/cases.jsonl"})),
            "outside the fixture's directory",
        ),
        (
            layout.fixture("c2.fixture.json", json!({"cases": "../outside"})),
            "outside the fixture's directory",
        ),
        (
            layout.fixture(
                "a1.fixture.json",
                json!({"assertions": [{"type": "../outside/x.wasm"}]}),
            ),
            "outside the fixture's directory",
        ),
        (
            layout.fixture(
                "a2.fixture.json",
                json!({"assertions": [{"type": "code-grader", "command": ["../outside/victim.txt"]}]}),
            ),
            "outside the fixture's directory",
        ),
        (
            layout.fixture("p1.fixture.json", json!({"provider": "../outside/p.wasm"})),
            "outside the fixture's directory",
        ),
        (
            layout.fixture(
                "j1.fixture.json",
                json!({"judge": {"provider": "../outside/judge.wasm", "model": "m"}}),
            ),
            "outside the fixture's directory",
        ),
    ];
    #[cfg(unix)]
    attacks.extend([
        (
            layout.fixture("g2.fixture.json", golden("goldens/victim.txt")),
            "outside the fixture's directory",
        ),
        (
            layout.fixture("g3.fixture.json", golden("d/link/../victim.txt")),
            "outside the fixture's directory",
        ),
        (
            layout.fixture("g5.fixture.json", golden("goldens/new.txt")),
            "outside the fixture's directory",
        ),
    ]);
    let steps = layout.write(
        "s1.fixture.json",
        &json!({
            "schemaVersion": "cautilus.evaluation_input.v1",
            "steps": [{"$ref": "../outside/base.fixture.json"}]
        })
        .to_string(),
    );
    attacks.push((steps, "outside the fixture's directory"));
    // Inside the root, but the repository's or cautilus's own files: a
    // golden there would be read into records or written over by
    // `--update-snapshots` (`.git/config` runs commands for git).
    attacks.extend([
        (
            layout.fixture("r1.fixture.json", golden(".git/config")),
            "leads into `.git`",
        ),
        (
            layout.fixture("r2.fixture.json", golden("sub/../.Git/hooks/pre-commit")),
            "leads into `.git`",
        ),
        (
            layout.fixture("r3.fixture.json", golden(".cautilus/baselines/s.json")),
            "leads into `.cautilus`",
        ),
    ]);
    for (fixture, expected) in &attacks {
        assert_refused(&layout, fixture, expected, &[]);
    }
    // The person running cautilus may widen the root; a fixture cannot.
    let widened = layout.fixture(
        "e2.fixture.json",
        json!({"extends": "../outside/base.fixture.json"}),
    );
    let (code, _, stderr) = output(
        cautilus()
            .args(["eval", "validate", "--fixture"])
            .arg(&widened)
            .arg("--path-root")
            .arg(layout.dir.path())
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stderr}");
}

#[cfg(unix)]
#[test]
fn case_directories_and_templates_that_link_out_are_refused() {
    let layout = Layout::new();
    // A case directory that is a link to a directory outside.
    std::fs::create_dir_all(layout.project().join("s1/cases/a")).unwrap();
    layout.write(
        "s1/cases/a/case.yaml",
        "messages: [{role: user, content: hi}]\n",
    );
    std::os::unix::fs::symlink(
        layout.outside().join("b"),
        layout.project().join("s1/cases/b"),
    )
    .unwrap();
    let linked_dir = layout.fixture("s1/f.fixture.json", json!({"cases": "./cases/"}));
    assert_refused(&layout, &linked_dir, "outside the fixture's directory", &[]);
    // A case whose `workspace` template is a link out of the project.
    layout.write(
        "s2/cases/a/case.yaml",
        "messages: [{role: user, content: hi}]\n",
    );
    std::os::unix::fs::symlink(
        layout.outside(),
        layout.project().join("s2/cases/a/workspace"),
    )
    .unwrap();
    let linked_template = layout.fixture("s2/f.fixture.json", json!({"cases": "./cases/"}));
    assert_refused(
        &layout,
        &linked_template,
        "outside the fixture's directory",
        &[],
    );
}

/// A case whose workspace template holds a pipe, links out and a file: the
/// copy ends (the pipe is never opened) and holds only what lies inside
/// the template; a grader running in the copy sees exactly that.
#[cfg(unix)]
#[test]
fn a_workspace_template_with_a_pipe_and_links_out_is_copied_safely() {
    let layout = Layout::new();
    let template = layout.project().join("cases/a/workspace");
    std::fs::create_dir_all(&template).unwrap();
    std::fs::write(template.join("notes.md"), "# notes\n").unwrap();
    std::os::unix::fs::symlink(layout.outside().join("victim.txt"), template.join("abs")).unwrap();
    std::os::unix::fs::symlink("../../../../outside/victim.txt", template.join("rel")).unwrap();
    std::os::unix::fs::symlink("notes.md", template.join("alias")).unwrap();
    // A link to the template itself, and one that climbs out through it
    // while its text never climbs above the template: `h/` twenty times,
    // `../` twenty times (to `/` wherever the copy lies), then the victim.
    std::os::unix::fs::symlink(".", template.join("h")).unwrap();
    let victim = layout.outside().join("victim.txt");
    let climb = format!(
        "{}{}{}",
        "h/".repeat(20),
        "../".repeat(20),
        victim.strip_prefix("/").unwrap().display()
    );
    std::os::unix::fs::symlink(climb, template.join("climb")).unwrap();
    let fifo =
        std::ffi::CString::new(template.join("pipe").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) reads the NUL-terminated path only.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    layout.write(
        "cases/a/grade.sh",
        "#!/bin/sh\nlisting=$(ls -A | tr '\\n' ' ')\nleaked=$(cat rel abs climb 2>/dev/null)\nprintf '{\"passed\": false, \"details\": \"listing: %sleaked: %s\"}\\n' \"$listing\" \"$leaked\"\n",
    );
    layout.write(
        "cases/a/case.yaml",
        "input: look\nassertions:\n  - {type: code-grader, command: [sh, ./grade.sh]}\n",
    );
    let fixture = layout.fixture(
        "f.fixture.json",
        json!({"preset": "prompt", "cases": "./cases/"}),
    );
    let out = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = output(
        cautilus()
            .current_dir(layout.project())
            .args(["eval", "test", "--provider", "fixture", "--fixture"])
            .arg(&fixture)
            .arg("--output-dir")
            .arg(out.path())
            .output()
            .unwrap(),
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the copy did not stop at the pipe"
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let text = all_text(out.path());
    assert!(!text.contains(SECRET), "a link out was followed: {text}");
    assert!(
        text.contains("listing: alias h notes.md leaked: "),
        "the copy holds the file and the link inside only: {text}"
    );
    layout.assert_outside_untouched("template");
}

#[cfg(unix)]
#[test]
fn updating_a_golden_keeps_its_mode_and_writes_through_a_link_inside() {
    use std::os::unix::fs::PermissionsExt;
    let layout = Layout::new();
    let real = layout.write("goldens/real.txt", "old text\n");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o664)).unwrap();
    std::os::unix::fs::symlink("goldens/real.txt", layout.project().join("linked.txt")).unwrap();
    let plain = layout.write("plain.txt", "old text\n");
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o640)).unwrap();
    let case = |id: &str, golden: &str| json!({"caseId": id, "messages": [{"role": "user", "content": "hi"}], "expected": {"snapshot": golden}});
    let fixture = layout.fixture(
        "g.fixture.json",
        json!({"cases": [case("linked", "./linked.txt"), case("plain", "./plain.txt")]}),
    );
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = output(
        cautilus()
            .current_dir(layout.project())
            .args([
                "eval",
                "test",
                "--provider",
                "fixture",
                "--update-snapshots",
                "--fixture",
            ])
            .arg(&fixture)
            .arg("--output-dir")
            .arg(out.path())
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let link = layout.project().join("linked.txt");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "Fixture response for linked."
    );
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o664
    );
    assert_eq!(
        std::fs::read_to_string(&plain).unwrap(),
        "Fixture response for plain."
    );
    assert_eq!(
        std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let leftovers: Vec<_> = std::fs::read_dir(layout.project())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn byte_order_marks_are_read_and_duplicate_csv_columns_refused() {
    let layout = Layout::new();
    const BOM: &str = "\u{feff}";
    let yaml = layout.write(
        "bom.fixture.yaml",
        &format!(
            "{BOM}schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: bom\nprovider: fixture\nmodel: m\ncases:\n  - {{caseId: a, input: hi}}\n"
        ),
    );
    let json_fixture = layout.write(
        "bom.fixture.json",
        &format!(
            "{BOM}{}",
            json!({
                "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app",
                "preset": "prompt", "suiteId": "bom", "provider": "fixture", "model": "m",
                "cases": [{"caseId": "a", "input": "hi"}]
            })
        ),
    );
    layout.write(
        "lists/cases.jsonl",
        &format!("{BOM}{{\"caseId\": \"a\", \"input\": \"hi\"}}\n"),
    );
    layout.write(
        "lists/cases.json",
        &format!("{BOM}[{{\"caseId\": \"a\", \"input\": \"hi\"}}]"),
    );
    layout.write(
        "lists/cases.yaml",
        &format!("{BOM}- {{caseId: a, input: hi}}\n"),
    );
    layout.write("lists/cases.csv", &format!("{BOM}caseId,input\na,hi\n"));
    layout.write("lists/dirs/a/case.yaml", &format!("{BOM}input: hi\n"));
    let mut fixtures = vec![yaml, json_fixture];
    for source in [
        "cases.jsonl",
        "cases.json",
        "cases.yaml",
        "cases.csv",
        "dirs",
    ] {
        let fields = json!({"preset": "prompt", "cases": format!("./{source}")});
        fixtures.push(layout.fixture(&format!("lists/{source}.fixture.json"), fields));
    }
    for fixture in &fixtures {
        let out = tempfile::tempdir().unwrap();
        let (code, stdout, stderr) = output(
            cautilus()
                .args(["eval", "test", "--provider", "fixture", "--fixture"])
                .arg(fixture)
                .arg("--output-dir")
                .arg(out.path())
                .output()
                .unwrap(),
        );
        // One case, `a` (not `\u{feff}caseId`), answered.
        assert!(
            code == 0 || code == 1,
            "{}: {stdout}{stderr}",
            fixture.display()
        );
        let cases: Value = crate::support::read_json(&out.path().join("eval-cases.json"));
        let ids: Vec<&str> = cases["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["caseId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a"], "{}", fixture.display());
    }
    layout.write("dup/cases.csv", "caseId,input,input\na,one,two\n");
    let duplicate = layout.fixture(
        "dup/f.fixture.json",
        json!({"preset": "prompt", "cases": "./cases.csv"}),
    );
    let (code, _, stderr) = output(
        cautilus()
            .args(["eval", "validate", "--fixture"])
            .arg(&duplicate)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("columns 2 and 3 are both named `input`"),
        "{stderr}"
    );
}
