//! Plugin authoring as a new user does it, with only the installed binary:
//! the working directory, `HOME`, `CAUTILUS_HOME` and `CARGO_HOME` outside
//! this checkout, and a cargo home that has never seen a `cautilus-sdk`
//! crate (nothing but crates.io to fetch from). Rust, Python and
//! JavaScript scorers are scaffolded, built with the command `plugin new`
//! prints, tested with `plugin test` and used in a suite; a pack with a
//! Rust scorer, a Python scorer and a preset is built twice (and on a
//! second "machine") to the same bytes, published, installed in a clean
//! home, run, and refused once a byte of it changes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::packs::OciRegistry;
use crate::support::{cautilus, output, tool};

/// A user's machine: its own home, cautilus home and cargo home, and a
/// working directory, all in one temporary directory.
struct Machine {
    root: tempfile::TempDir,
}

impl Machine {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in ["home", "cautilus-home", "cargo-home", "work"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        Self { root }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn work(&self) -> PathBuf {
        self.path("work")
    }

    /// `program` with this machine's environment and nothing of the test's
    /// (no CARGO_TARGET_DIR, no rustflags, no toolchain override).
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, cwd: &Path) -> Command {
        let mut command = Command::new(program);
        self.environment(&mut command, cwd);
        command
    }

    fn environment(&self, command: &mut Command, cwd: &Path) {
        let rustup_home = std::env::var_os("RUSTUP_HOME").unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap())
                .join(".rustup")
                .into()
        });
        let mut path = std::env::var_os("PATH").unwrap_or_default();
        if let Some(py) = std::env::var_os("CAUTILUS_COMPONENTIZE_PY") {
            let dir = PathBuf::from(py).parent().unwrap().to_path_buf();
            path = std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path)))
                .unwrap();
        }
        command
            .env_clear()
            .current_dir(cwd)
            .env("PATH", path)
            .env("HOME", self.path("home"))
            .env("CAUTILUS_HOME", self.path("cautilus-home"))
            .env("CAUTILUS_CACHE_DIR", self.path("home/.cache/cautilus"))
            .env("CARGO_HOME", self.path("cargo-home"))
            .env("RUSTUP_HOME", rustup_home)
            .env("CARGO_TERM_COLOR", "never");
    }

    /// `cautilus args…` in `cwd`: (exit code, stdout, stderr).
    fn cautilus(&self, cwd: &Path, args: &[&str]) -> (i32, String, String) {
        let mut command = cautilus();
        self.environment(&mut command, cwd);
        output(command.args(args).output().unwrap())
    }

    /// Runs a printed command line (`sh -c`) in `cwd`, expecting success.
    fn sh(&self, cwd: &Path, line: &str) {
        let out = self.command("sh", cwd).args(["-c", line]).output().unwrap();
        assert!(
            out.status.success(),
            "`{line}` in {}: {}{}",
            cwd.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The line of `stdout` after `next:` that starts with `prefix`.
fn printed(stdout: &str, prefix: &str) -> String {
    stdout
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}…` in the printed next steps:\n{stdout}"))
        .to_string()
}

/// `plugin test` passes, then fails naming the example once one of its
/// expectations is wrong.
fn plugin_test_catches_a_wrong_example(machine: &Machine, project: &Path) {
    let (code, stdout, stderr) = machine.cautilus(project, &["plugin", "test", "."]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let examples = project.join("examples.yaml");
    let text = std::fs::read_to_string(&examples).unwrap();
    let wrong = text.replacen("pass: true", "pass: false", 1);
    assert_ne!(wrong, text, "the scaffold's examples expect a pass");
    std::fs::write(&examples, wrong).unwrap();
    let (code, stdout, stderr) = machine.cautilus(project, &["plugin", "test", "."]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("FAIL"), "{stdout}");
    std::fs::write(&examples, text).unwrap();
}

/// Runs a suite whose assertion is the component at `wasm`.
fn used_in_a_suite(machine: &Machine, dir: &Path, wasm: &Path, config: &str) {
    let fixture = dir.join("suite.fixture.yaml");
    std::fs::write(
        &fixture,
        format!(
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: authored\nprovider: fixture\nmodel: canned\ncases:\n  - caseId: good\n    input: q\n    assertions: [{{type: {wasm}, {config}}}]\n  - caseId: bad\n    input: q\n    assertions: [{{type: {wasm}, {config}}}]\n",
            wasm = wasm.display()
        ),
    )
    .unwrap();
    let canned = dir.join("canned.json");
    std::fs::write(
        &canned,
        r#"{"good": "hello world: your refund for order 42", "bad": "no"}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = machine.cautilus(
        dir,
        &[
            "eval",
            "test",
            "--fixture",
            "suite.fixture.yaml",
            "--fixture-results",
            "canned.json",
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");
}

#[test]
fn a_rust_scorer_builds_from_the_binary_alone() {
    let machine = Machine::new();
    let work = machine.work();
    let (code, stdout, stderr) =
        machine.cautilus(&work, &["plugin", "new", "scorer", "mentions-all"]);
    assert_eq!(code, 0, "{stderr}");
    let project = work.join("mentions-all");
    let lock = std::fs::read_to_string(project.join("Cargo.lock")).unwrap();
    machine.sh(&project, &printed(&stdout, "cargo build"));
    assert_eq!(
        std::fs::read_to_string(project.join("Cargo.lock")).unwrap(),
        lock,
        "the lock the scaffold wrote is the one cargo keeps"
    );
    let registry = machine.path("cargo-home/registry");
    assert!(
        !crate::support::all_text(&registry).contains("cautilus-sdk"),
        "no cautilus-sdk came from a registry"
    );
    plugin_test_catches_a_wrong_example(&machine, &project);
    let wasm = project.join("target/wasm32-wasip2/release/mentions_all.wasm");
    used_in_a_suite(&machine, &project, &wasm, "value: world");

    let (code, stdout, stderr) = machine.cautilus(&project, &["sdk", "show"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("the same as this cautilus"), "{stdout}");
    let (code, stdout, _) = machine.cautilus(&project, &["sdk", "update"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("nothing to do"), "{stdout}");

    // The day the crate is on crates.io: one line less, and cargo looks there.
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let without: String = manifest
        .lines()
        .filter(|l| !l.starts_with("cautilus-sdk = { path"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(without.lines().count() + 1, manifest.lines().count());
    std::fs::write(project.join("Cargo.toml"), without).unwrap();
    let out = machine
        .command("cargo", &project)
        .args(["metadata", "--format-version", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("cautilus-sdk"),
        "without the patch, cargo asks crates.io for cautilus-sdk: {stderr}"
    );
}

#[test]
fn python_and_javascript_scorers_build_test_and_run() {
    let machine = Machine::new();
    let work = machine.work();
    if tool("CAUTILUS_COMPONENTIZE_PY", "the componentize-py executable").is_some() {
        let (code, stdout, stderr) = machine.cautilus(
            &work,
            &["plugin", "new", "scorer", "py-tone", "--lang", "python"],
        );
        assert_eq!(code, 0, "{stderr}");
        let project = work.join("py-tone");
        machine.sh(&project, &printed(&stdout, "componentize-py"));
        plugin_test_catches_a_wrong_example(&machine, &project);
        used_in_a_suite(
            &machine,
            &project,
            &project.join("py-tone.wasm"),
            "keywords: [refund, order]",
        );
    }
    if let Some(js_tools) = tool(
        "CAUTILUS_JS_TOOLS",
        "a node_modules directory with @bytecodealliance/componentize-js",
    ) {
        let (code, stdout, stderr) = machine.cautilus(
            &work,
            &["plugin", "new", "scorer", "js-tone", "--lang", "javascript"],
        );
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains("npm install && npm run build"), "{stdout}");
        let project = work.join("js-tone");
        // The printed `npm install` fetches the tools CI already holds: link them.
        std::os::unix::fs::symlink(&js_tools, project.join("node_modules")).unwrap();
        machine.sh(&project, "npm run build --silent");
        plugin_test_catches_a_wrong_example(&machine, &project);
        used_in_a_suite(
            &machine,
            &project,
            &project.join("js-tone.wasm"),
            "keywords: [refund, order]",
        );
    }
}

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// Copies a directory tree, leaving out `target/`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

#[test]
fn a_pack_of_three_components_builds_reproducibly_publishes_and_runs() {
    let Some(_) = tool("CAUTILUS_COMPONENTIZE_PY", "the componentize-py executable") else {
        return;
    };
    let Some(registry) = OciRegistry::start() else {
        return;
    };
    let machine = Machine::new();
    let work = machine.work();
    let ok = |(code, stdout, stderr): (i32, String, String)| {
        assert_eq!(code, 0, "{stdout}{stderr}");
        stdout
    };
    ok(machine.cautilus(&work, &["pack", "new", "demo"]));
    let pack = work.join("demo");
    ok(machine.cautilus(
        &pack,
        &["pack", "add", "scorer", "tone", "--lang", "python"],
    ));
    ok(machine.cautilus(&pack, &["pack", "add", "preset", "exact"]));
    ok(machine.cautilus(&pack, &["pack", "build"]));
    let archive = pack.join("dist/demo-0.1.0.tgz");
    let first = std::fs::read(&archive).unwrap();
    let stdout = ok(machine.cautilus(&pack, &["pack", "build"]));
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        first,
        "built twice: {stdout}"
    );
    ok(machine.cautilus(&pack, &["pack", "test"]));

    // A second machine: another directory and another cargo home. With the
    // pack's files (its components included) it builds the same archive; and
    // its Rust components, built again from scratch, are the same bytes.
    let other = Machine::new();
    let copy = other.work().join("demo");
    copy_tree(&pack, &copy);
    ok(other.cautilus(&copy, &["pack", "build"]));
    assert_eq!(
        std::fs::read(copy.join("dist/demo-0.1.0.tgz")).unwrap(),
        first
    );
    let rust_components = ["components/demo_check.wasm", "components/exact.wasm"];
    for component in rust_components {
        std::fs::remove_file(copy.join(component)).unwrap();
    }
    ok(other.cautilus(&copy, &["pack", "build", "--rebuild"]));
    for component in rust_components {
        assert_eq!(
            sha256(&copy.join(component)),
            sha256(&pack.join(component)),
            "{component} built on two machines"
        );
    }

    let reference = registry.reference("demo:0.1.0");
    ok(machine.cautilus(
        &pack,
        &["pack", "publish", "dist/demo-0.1.0.tgz", &reference],
    ));
    let user = Machine::new();
    let project = user.work();
    std::fs::write(project.join("cautilus.toml"), "").unwrap();
    ok(user.cautilus(&project, &["pack", "install", &reference]));
    std::fs::write(
        project.join("suite.fixture.yaml"),
        "extends: pack:demo/base\nsuiteId: greetings\npresetPack: demo\nrequireExpected: true\nprovider: fixture\nmodel: canned\ncases:\n  - caseId: hello\n    input: say hello\n    expected: {finalText: hello world}\n    assertions: [{type: demo/tone, keywords: [hello]}]\n  - caseId: almost\n    input: say hello\n    expected: {finalText: hello world}\n",
    )
    .unwrap();
    std::fs::write(
        project.join("canned.json"),
        r#"{"hello": "hello world", "almost": "hello world!"}"#,
    )
    .unwrap();
    let run = |user: &Machine| {
        user.cautilus(
            &project,
            &[
                "eval",
                "test",
                "--fixture",
                "suite.fixture.yaml",
                "--fixture-results",
                "canned.json",
            ],
        )
    };
    let (code, stdout, stderr) = run(&user);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("1 passed, 1 failed") && stdout.contains("not exactly"),
        "the pack's scorers and its exact preset ran: {stdout}"
    );

    let installed = user.path("cautilus-home/packs/demo/0.1.0/components/tone.wasm");
    let mut bytes = std::fs::read(&installed).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&installed, bytes).unwrap();
    let (code, stdout, stderr) = run(&user);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("sha256"), "{stderr}");
}
