//! Preset packs through the real binary: `pack build` writes the same bytes
//! twice, `pack install` verifies and pins a pack, a suite uses its scorer
//! as `<pack>/<id>`, and a pack whose bytes differ from the manifest or the
//! lock, or whose component asks for more than it declared, is refused.

use std::path::{Path, PathBuf};

use crate::support::{cautilus, component, output, tool};

/// A pack home, a project (with cautilus.toml) and a pack source directory.
struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    source: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        let source = dir.path().join("pack");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(source.join("templates")).unwrap();
        std::fs::write(project.join("cautilus.toml"), "").unwrap();
        std::fs::write(
            source.join("templates/base.fixture.yaml"),
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nprovider: fixture\nmodel: canned\nassertions: [{type: probe-pack/hostile}]\n",
        )
        .unwrap();
        Self {
            _dir: dir,
            home,
            project,
            source,
        }
    }

    /// Writes the pack's manifest: the `hostile` test scorer (no
    /// capabilities) and the `ask-model` judge probe, which requests
    /// `model`; `judge_caps` is what the manifest declares for it.
    fn manifest(&self, judge_caps: &str) {
        let text = format!(
            r#"[pack]
name = "probe-pack"
version = "0.3.0"
description = "test pack"
wit = "0.1.0"

[[component]]
path = "components/hostile.wasm"
kind = "scorer"
ids = ["hostile"]
build = "mkdir -p out && cp '{hostile}' out/hostile.wasm"
source = "out/hostile.wasm"

[[component]]
path = "components/judge.wasm"
kind = "scorer"
ids = ["ask-model"]
capabilities = [{judge_caps}]
build = "mkdir -p out && cp '{judge}' out/judge.wasm"
source = "out/judge.wasm"

[[template]]
name = "base"
path = "templates/base.fixture.yaml"
"#,
            hostile = component("hostile"),
            judge = component("judge-probe"),
        );
        std::fs::write(self.source.join("cautilus-pack.toml"), text).unwrap();
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        output(
            cautilus()
                .args(args)
                .current_dir(&self.project)
                .env("CAUTILUS_HOME", &self.home)
                .output()
                .expect("run cautilus"),
        )
    }

    /// `eval test` of `fixture` answered from `canned`, records in `<project>/<out>`.
    fn eval_test(&self, fixture: &Path, canned: &Path, out: &str) -> (i32, String, String) {
        self.run(&[
            "eval",
            "test",
            "--fixture",
            fixture.to_str().unwrap(),
            "--fixture-results",
            canned.to_str().unwrap(),
            "--output-dir",
            self.project.join(out).to_str().unwrap(),
        ])
    }

    fn build(&self, archive: &Path) -> (i32, String, String) {
        self.run(&[
            "pack",
            "build",
            self.source.to_str().unwrap(),
            "-o",
            archive.to_str().unwrap(),
        ])
    }
}

fn suite(dir: &Path) -> PathBuf {
    let fixture = dir.join("suite.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: pack-suite\nprovider: fixture\nmodel: canned\ncases:\n  - caseId: fine\n    input: answer ok\n    assertions: [{type: probe-pack/hostile}]\n",
    )
    .unwrap();
    std::fs::write(dir.join("canned.json"), r#"{"fine": "ok"}"#).unwrap();
    fixture
}

#[test]
fn a_pack_is_built_reproducibly_installed_locked_used_and_refused_after_one_byte_changes() {
    let world = World::new();
    world.manifest(r#""model""#);
    let first = world.project.join("a.tgz");
    let second = world.project.join("b.tgz");
    let (code, stdout, stderr) = world.build(&first);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("requests model"), "{stdout}");
    assert_eq!(world.build(&second).0, 0);
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap(),
        "the same inputs give the same archive bytes"
    );

    let (code, stdout, stderr) = world.run(&["pack", "install", first.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("installed probe-pack@0.3.0"), "{stdout}");
    assert!(
        stdout.contains("not granted") && stdout.contains("model (components/judge.wasm)"),
        "install shows what is requested and not granted: {stdout}"
    );
    let lock = std::fs::read_to_string(world.project.join("cautilus.lock")).unwrap();
    assert!(
        lock.contains("name = \"probe-pack\"") && lock.contains("digest = \"sha256:"),
        "{lock}"
    );

    let (code, stdout, _) = world.run(&["pack", "list", "--json"]);
    assert_eq!(code, 0);
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed[0]["name"], "probe-pack");
    assert_eq!(listed[0]["components"].as_array().unwrap().len(), 2);
    let (code, stdout, stderr) = world.run(&["pack", "verify"]);
    assert_eq!(code, 0, "{stdout}{stderr}");

    // A suite uses the pack's scorer by `<pack>/<id>`.
    let fixture = suite(&world.project);
    let run_suite = |out: &str| world.eval_test(&fixture, &world.project.join("canned.json"), out);
    let (code, stdout, stderr) = run_suite("run-ok");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");

    // A suite extends the pack's template (which brings the assertion).
    let extending = world.project.join("extends.fixture.yaml");
    std::fs::write(
        &extending,
        "extends: pack:probe-pack/base\nsuiteId: from-template\ncases:\n  - caseId: fine\n    input: answer ok\n",
    )
    .unwrap();
    let (code, stdout, stderr) = world.eval_test(
        &extending,
        &world.project.join("canned.json"),
        "run-template",
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary = crate::support::read_json(&world.project.join("run-template/eval-summary.json"));
    assert_eq!(
        summary["evaluations"][0]["assertions"][0]["name"], "probe-pack/hostile",
        "{summary}"
    );
    std::fs::write(
        &extending,
        "extends: pack:probe-pack/nope\nsuiteId: x\ncases: []\n",
    )
    .unwrap();
    let (code, _, stderr) =
        world.run(&["eval", "validate", "--fixture", extending.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("pack probe-pack@0.3.0 has no template `nope` (it has: base)"),
        "{stderr}"
    );

    // One byte of the installed component changes: the run refuses it.
    let installed = world
        .home
        .join("packs/probe-pack/0.3.0/components/hostile.wasm");
    let mut bytes = std::fs::read(&installed).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&installed, &bytes).unwrap();
    let (code, stdout, stderr) = run_suite("run-tampered");
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("probe-pack@0.3.0 does not match")
            && stderr.contains("cautilus.lock")
            && stderr.contains("components/hostile.wasm"),
        "{stderr}"
    );
    let (code, _, stderr) = world.run(&["pack", "verify", "probe-pack"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("components/hostile.wasm"), "{stderr}");

    // Installing the same archive again repairs it.
    assert_eq!(
        world.run(&["pack", "install", first.to_str().unwrap()]).0,
        0
    );
    assert_eq!(run_suite("run-repaired").0, 0);

    let (code, stdout, _) = world.run(&["pack", "remove", "probe-pack"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("still pins `probe-pack`"), "{stdout}");
    let (code, _, stderr) = run_suite("run-removed");
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`probe-pack@0.3.0` is not installed"),
        "{stderr}"
    );
}

#[test]
fn a_component_asking_for_an_undeclared_capability_is_refused() {
    let world = World::new();
    world.manifest("");
    let archive = world.project.join("a.tgz");
    let (code, _, stderr) = world.build(&archive);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("requests capability `model`, which the manifest does not declare"),
        "{stderr}"
    );
}

#[test]
fn a_tampered_archive_and_a_lying_manifest_are_refused() {
    let world = World::new();
    world.manifest(r#""model""#);
    let archive = world.project.join("a.tgz");
    assert_eq!(world.build(&archive).0, 0);

    let mut bytes = std::fs::read(&archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    let tampered = world.project.join("tampered.tgz");
    std::fs::write(&tampered, &bytes).unwrap();
    let (code, _, stderr) = world.run(&["pack", "install", tampered.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("tampered.tgz"), "{stderr}");
    assert!(
        !world.home.join("packs/probe-pack").exists(),
        "nothing installed"
    );

    // The built manifest states each hash; make it lie about one.
    let manifest_path = world.source.join("cautilus-pack.toml");
    let text = std::fs::read_to_string(&manifest_path).unwrap();
    let start = text.find("sha256 = \"").unwrap() + "sha256 = \"".len();
    let mut lying = text.clone();
    lying.replace_range(start..start + 64, &"0".repeat(64));
    std::fs::write(&manifest_path, lying).unwrap();
    let (code, _, stderr) = world.run(&[
        "pack",
        "install",
        world.source.to_str().unwrap(),
        "--no-lock",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("components/hostile.wasm` has sha256")
            && stderr.contains("but the manifest states 0000"),
        "{stderr}"
    );
}

#[test]
fn a_pack_component_gets_a_capability_only_when_the_install_granted_it() {
    let world = World::new();
    world.manifest(r#""model""#);
    let archive = world.project.join("a.tgz");
    assert_eq!(world.build(&archive).0, 0);
    let fixture = world.project.join("judged.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: pack-judge\nprovider: fixture\nmodel: m\njudge: { provider: fixture, model: j }\ncases:\n  - caseId: a\n    input: Say hello.\n    expected: { finalText: Fixture }\n    assertions:\n      - { type: probe-pack/ask-model, required: false }\n",
    )
    .unwrap();
    let detail = |grant: &[&str], out: &str| {
        let mut args = vec!["pack", "install", archive.to_str().unwrap(), "--force"];
        args.extend_from_slice(grant);
        let (code, stdout, stderr) = world.run(&args);
        assert_eq!(code, 0, "{stdout}{stderr}");
        let dir = world.project.join(out);
        let (code, stdout, stderr) = world.run(&[
            "eval",
            "test",
            "--fixture",
            fixture.to_str().unwrap(),
            "--output-dir",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stdout}{stderr}");
        let summary = crate::support::read_json(&dir.join("eval-summary.json"));
        summary["evaluations"][0]["assertions"][0]["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    // Granted at install (and by the run's judge): the call reaches the model.
    let granted = detail(&["--grant", "model"], "granted");
    assert!(granted.contains("fixture judge needs"), "{granted}");
    // Not granted at install: denied, whatever the run grants.
    let denied = detail(&[], "denied");
    assert!(
        denied.contains("Denied")
            && denied.contains("its pack probe-pack@0.3.0 was not granted it at install"),
        "{denied}"
    );
}

/// A CNCF distribution registry (Debian's `docker-registry`) on loopback,
/// storing in a temporary directory; killed when dropped, and stopping by
/// itself after ten minutes whatever happens to the test.
pub(crate) struct OciRegistry {
    child: std::process::Child,
    port: u16,
    storage: PathBuf,
    _dir: tempfile::TempDir,
}

impl OciRegistry {
    /// Whether `docker-registry` is installed (saying so when it is not).
    fn available() -> bool {
        let found = std::process::Command::new("docker-registry")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            eprintln!(
                "SKIPPED: docker-registry is not installed (Debian package `docker-registry`; .ci/run installs it)"
            );
        }
        found
    }

    /// `None` (saying so) when `docker-registry` is not installed.
    pub(crate) fn start() -> Option<Self> {
        if !Self::available() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let storage = dir.path().join("storage");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                storage.display()
            ),
        )
        .unwrap();
        let mut child = std::process::Command::new("timeout")
            .args(["600", "docker-registry", "serve"])
            .arg(&config)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(Self {
                    child,
                    port,
                    storage,
                    _dir: dir,
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("docker-registry did not listen on 127.0.0.1:{port}");
    }

    pub(crate) fn reference(&self, repository: &str) -> String {
        format!("oci://127.0.0.1:{}/{repository}", self.port)
    }

    /// Every blob the registry stores.
    fn blobs(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.storage.join("docker/registry/v2/blobs")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().is_some_and(|n| n == "data") {
                    found.push(path);
                }
            }
        }
        found
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_pack_published_to_a_registry_installs_on_a_clean_home_locks_runs_and_is_refused_when_changed()
{
    let Some(registry) = OciRegistry::start() else {
        return;
    };
    let world = World::new();
    world.manifest(r#""model""#);
    let archive = world.project.join("a.tgz");
    assert_eq!(world.build(&archive).0, 0);
    let reference = registry.reference("probe/pack:0.3.0");
    let (code, stdout, stderr) =
        world.run(&["pack", "publish", archive.to_str().unwrap(), &reference]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("published probe-pack@0.3.0"), "{stdout}");

    // A clean home installs it from the registry and pins its source.
    let (code, stdout, stderr) = world.run(&["pack", "install", &reference]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let lock = std::fs::read_to_string(world.project.join("cautilus.lock")).unwrap();
    let archive_digest = format!(
        "sha256:{}",
        cautilus::pack::archive::sha256_hex(&std::fs::read(&archive).unwrap())
    );
    assert!(
        lock.contains(&format!("source = \"{reference}\"")),
        "{lock}"
    );
    assert!(
        lock.contains(&archive_digest),
        "the lock pins the OCI layer digest: {lock}"
    );

    let fixture = suite(&world.project);
    let run_suite = |out: &str| world.eval_test(&fixture, &world.project.join("canned.json"), out);
    let (code, stdout, stderr) = run_suite("run-oci");
    assert_eq!(code, 0, "{stdout}{stderr}");

    // One byte of the installed pack changes: refused.
    let installed = world
        .home
        .join("packs/probe-pack/0.3.0/components/judge.wasm");
    let mut bytes = std::fs::read(&installed).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&installed, &bytes).unwrap();
    let (code, _, stderr) = world.run(&["pack", "verify"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("components/judge.wasm"), "{stderr}");

    // The registry's copy changes: its digest no longer matches, refused.
    for blob in registry.blobs() {
        let mut data = std::fs::read(&blob).unwrap();
        if data.len() > 10_000 {
            let middle = data.len() / 2;
            data[middle] ^= 1;
            std::fs::write(&blob, &data).unwrap();
        }
    }
    let (code, _, stderr) = world.run(&["pack", "install", &reference, "--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&reference), "{stderr}");
}

#[test]
fn a_pack_preset_serves_its_pair_with_no_host_change_and_one_outside_the_taxonomy_is_refused() {
    let world = World::new();
    let exact = component("preset-exact");
    std::fs::write(
        world.source.join("cautilus-pack.toml"),
        format!(
            "[pack]\nname = \"exact-pack\"\nversion = \"1.0.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"components/exact.wasm\"\nkind = \"preset\"\nids = [\"test-preset-exact\"]\nbuild = \"mkdir -p out && cp '{exact}' out/exact.wasm\"\nsource = \"out/exact.wasm\"\n"
        ),
    )
    .unwrap();
    let archive = world.project.join("exact.tgz");
    let (code, stdout, stderr) = world.build(&archive);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        world.run(&["pack", "install", archive.to_str().unwrap()]).0,
        0
    );

    // The answer contains the expected text but is not exactly it: the
    // built-in app/prompt preset passes it, the pack's exact one does not.
    let suite = |preset_pack: &str| {
        format!(
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\n{preset_pack}suiteId: exact\nprovider: fixture\nmodel: canned\ncases:\n  - caseId: close\n    input: say ok\n    expected: {{finalText: ok}}\n  - caseId: exact\n    input: say yes\n    expected: {{finalText: yes}}\n"
        )
    };
    let fixture = world.project.join("exact.fixture.yaml");
    let canned = world.project.join("canned.json");
    std::fs::write(&canned, r#"{"close": "ok then", "exact": "yes"}"#).unwrap();
    let run = |out: &str| world.eval_test(&fixture, &canned, out);
    std::fs::write(&fixture, suite("")).unwrap();
    let (code, stdout, stderr) = run("builtin");
    assert_eq!(code, 0, "{stdout}{stderr}");
    std::fs::write(&fixture, suite("presetPack: exact-pack\n")).unwrap();
    let (code, stdout, stderr) = run("from-pack");
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("final text is not exactly \"ok\"; got \"ok then\""),
        "{stdout}"
    );
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");

    // The pack preset declares a suite field of its own; the host checks it
    // by the preset's JSON Schema, and the built-in preset does not know it.
    let with_field = |value: &str| {
        suite(&format!(
            "presetPack: exact-pack\nrequireExpected: {value}\n"
        )) + "  - caseId: open\n    input: say anything\n"
    };
    std::fs::write(&fixture, with_field("true")).unwrap();
    let (code, _, stderr) = run("required");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cases[2].expected.finalText: is required: the suite sets requireExpected"),
        "{stderr}"
    );
    std::fs::write(&fixture, with_field("yes")).unwrap();
    let (code, _, stderr) = run("not-boolean");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("requireExpected: \"yes\" is not of type \"boolean\"; `requireExpected` is true when every case must give expected.finalText"),
        "{stderr}"
    );
    std::fs::write(
        &fixture,
        with_field("false").replace("presetPack: exact-pack\n", ""),
    )
    .unwrap();
    let (code, _, stderr) = run("builtin-field");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`requireExpected` is not a suite field of app/prompt")
            && stderr.contains("reads system; remove it"),
        "{stderr}"
    );

    // A pack without a preset for the pair says which pairs it serves.
    std::fs::write(
        &fixture,
        suite("presetPack: exact-pack\n").replace("preset: prompt", "preset: chat"),
    )
    .unwrap();
    let (code, _, stderr) = run("wrong-pair");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("its presets serve: app/prompt"), "{stderr}");

    // A pack preset claiming a pair outside the host's table is refused.
    let outside = component("preset-outside");
    std::fs::write(
        world.source.join("cautilus-pack.toml"),
        format!(
            "[pack]\nname = \"outside-pack\"\nversion = \"1.0.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"components/outside.wasm\"\nkind = \"preset\"\nids = [\"test-preset-outside\"]\nbuild = \"mkdir -p out && cp '{outside}' out/outside.wasm\"\nsource = \"out/outside.wasm\"\n"
        ),
    )
    .unwrap();
    let (code, _, stderr) = world.build(&world.project.join("outside.tgz"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the host refuses it"), "{stderr}");
}

#[test]
fn a_preset_built_against_an_older_patch_of_the_contract_runs_a_suite() {
    // preset-v010 is built against the frozen cautilus:plugin@0.1.0
    // (tests/components/wit-0.1.0), before presets declared a contract.
    let world = World::new();
    let old = component("preset-v010");
    std::fs::write(
        world.source.join("cautilus-pack.toml"),
        format!(
            "[pack]\nname = \"old-pack\"\nversion = \"1.0.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"components/old.wasm\"\nkind = \"preset\"\nids = [\"test-preset-v010\"]\nbuild = \"mkdir -p out && cp '{old}' out/old.wasm\"\nsource = \"out/old.wasm\"\n"
        ),
    )
    .unwrap();
    let archive = world.project.join("old.tgz");
    let (code, stdout, stderr) = world.build(&archive);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, _, stderr) = world.run(&["pack", "install", archive.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let fixture = world.project.join("old.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\npresetPack: old-pack\nsuiteId: old\nprovider: fixture\nmodel: canned\ncases:\n  - caseId: hit\n    input: say ok\n    expected: {finalText: ok}\n  - caseId: miss\n    input: say yes\n    expected: {finalText: yes}\n",
    )
    .unwrap();
    let canned = world.project.join("canned.json");
    std::fs::write(&canned, r#"{"hit": "ok then", "miss": "no"}"#).unwrap();
    let (code, stdout, stderr) = world.eval_test(&fixture, &canned, "old");
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");
    let summary = std::fs::read_to_string(world.project.join("old/eval-summary.json")).unwrap();
    assert!(summary.contains("test.v010_summary.v1"), "{summary}");
}

#[test]
fn a_pack_of_a_python_scorer_a_javascript_scorer_and_a_preset_goes_through_a_registry_into_a_suite()
{
    let (Some(componentize_py), Some(js_tools)) = (
        tool("CAUTILUS_COMPONENTIZE_PY", "the componentize-py executable"),
        tool(
            "CAUTILUS_JS_TOOLS",
            "a node_modules directory with componentize-js",
        ),
    ) else {
        return;
    };
    if !OciRegistry::available() {
        return;
    }
    let world = World::new();
    for (name, lang) in [("py-kw", "python"), ("js-kw", "javascript")] {
        let dir = world.source.join("scorers").join(name);
        let (code, _, stderr) = world.run(&[
            "plugin",
            "new",
            "scorer",
            name,
            "--lang",
            lang,
            "--path",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stderr}");
    }
    let path = format!(
        "{}:{}",
        js_tools.join(".bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::fs::write(
        world.source.join("cautilus-pack.toml"),
        format!(
            r#"[pack]
name = "mixed"
version = "0.1.0"
description = "a Python scorer, a JavaScript scorer and a preset"
wit = "0.1.0"

[[component]]
path = "components/py-kw.wasm"
kind = "scorer"
ids = ["py-kw"]
build = "cd scorers/py-kw && '{py}' -d wit -w scorer componentize app -o py-kw.wasm"
source = "scorers/py-kw/py-kw.wasm"

[[component]]
path = "components/js-kw.wasm"
kind = "scorer"
ids = ["js-kw"]
build = "cd scorers/js-kw && PATH='{path}' npm run build --silent"
source = "scorers/js-kw/js-kw.wasm"

[[component]]
path = "components/exact.wasm"
kind = "preset"
ids = ["test-preset-exact"]
build = "mkdir -p out && cp '{exact}' out/exact.wasm"
source = "out/exact.wasm"
"#,
            py = componentize_py.display(),
            exact = component("preset-exact"),
        ),
    )
    .unwrap();
    let archive = world.project.join("mixed.tgz");
    let (code, stdout, stderr) = world.build(&archive);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Started once the slow scorer builds are done.
    let registry = OciRegistry::start().expect("checked above");
    let reference = registry.reference("team/mixed:0.1.0");
    let (code, _, stderr) = world.run(&["pack", "publish", archive.to_str().unwrap(), &reference]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!world.home.exists(), "the home is clean before the install");
    let (code, stdout, stderr) = world.run(&["pack", "install", &reference]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(world.project.join("cautilus.lock").is_file());

    let fixture = world.project.join("mixed.fixture.yaml");
    std::fs::write(
        &fixture,
        "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\npresetPack: mixed\nsuiteId: mixed\nprovider: fixture\nmodel: canned\nassertions:\n  - {type: mixed/py-kw, keywords: [refund]}\n  - {type: mixed/js-kw, keywords: [order]}\ncases:\n  - caseId: both\n    input: where is my refund\n    expected: {finalText: refund for order 7}\n  - caseId: inexact\n    input: where is my refund\n    expected: {finalText: refund for order}\n",
    )
    .unwrap();
    let canned = world.project.join("canned.json");
    std::fs::write(
        &canned,
        r#"{"both": "refund for order 7", "inexact": "refund for order 7"}"#,
    )
    .unwrap();
    let run = |out: &str| world.eval_test(&fixture, &canned, out);
    let (code, stdout, stderr) = run("mixed-run");
    assert_eq!(code, 1, "{stdout}{stderr}");
    let summary = crate::support::read_json(&world.project.join("mixed-run/eval-summary.json"));
    let both = &summary["evaluations"][0];
    assert_eq!(both["status"], "passed", "{both}");
    let names: Vec<&str> = both["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mixed/py-kw", "mixed/js-kw"], "{both}");
    assert!(
        stdout.contains("final text is not exactly \"refund for order\""),
        "the pack's preset judged the inexact case: {stdout}"
    );

    // One byte of the installed Python scorer changes: the run is refused.
    let installed = world.home.join("packs/mixed/0.1.0/components/py-kw.wasm");
    let mut bytes = std::fs::read(&installed).unwrap();
    bytes[1000] ^= 1;
    std::fs::write(&installed, &bytes).unwrap();
    let (code, _, stderr) = run("mixed-tampered");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("mixed@0.1.0 does not match") && stderr.contains("py-kw.wasm"),
        "{stderr}"
    );
}
