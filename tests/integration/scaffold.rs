//! `cautilus plugin new scorer` writes a crate that builds with one cargo
//! command and loads with `cautilus score --scorer path/to/it.wasm`.

use std::path::Path;
use std::process::Command;

use crate::support::{run, tool};

#[test]
fn scaffolded_scorer_builds_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("mentions-probe");
    let (code, stdout, stderr) = run(&[
        "plugin",
        "new",
        "scorer",
        "mentions-probe",
        "--path",
        crate_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("cargo build --release --target wasm32-wasip2"),
        "{stdout}"
    );

    // The crate pins the SDK's version and patches it to the copy it carries.
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!(
            "cautilus-sdk = \"={}\"",
            env!("CARGO_PKG_VERSION")
        )) && manifest.contains("cautilus-sdk = { path = \"vendor/cautilus-sdk\" }"),
        "{manifest}"
    );
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
    // Share the wasm target dir with the build scripts so dependencies are reused.
    let target_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/wasm-plugins");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&crate_dir)
        .env(
            "RUSTUP_TOOLCHAIN",
            cautilus::authoring::sdk_copy::toolchain_channel(),
        )
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .unwrap();
    assert!(status.success(), "the scaffolded crate builds");

    let wasm = target_dir.join("wasm32-wasip2/release/mentions_probe.wasm");
    let (code, stdout, stderr) = run(&[
        "score",
        "--scorer",
        wasm.to_str().unwrap(),
        "--output",
        "hello world",
        "--config",
        r#"{"value": "world"}"#,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with("PASS mentions-probe"), "{stdout}");
    let (code, _, _) = run(&[
        "score",
        "--scorer",
        wasm.to_str().unwrap(),
        "--output",
        "hello",
        "--expected",
        "world",
    ]);
    assert_eq!(code, 1);

    let with_path = dir.path().join("with-path");
    let (code, _, stderr) = run(&[
        "plugin",
        "new",
        "scorer",
        "with-path",
        "--path",
        with_path.to_str().unwrap(),
        "--sdk-path",
        sdk.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let manifest = std::fs::read_to_string(with_path.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("cautilus-sdk = { path = "), "{manifest}");

    let (code, _, stderr) = run(&[
        "plugin",
        "new",
        "scorer",
        "mentions-probe",
        "--path",
        crate_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "refuses to overwrite");
    assert!(stderr.contains("already exists"), "{stderr}");
}

/// Scores through the scaffolded component (`cautilus score`) and runs it
/// as a suite's assertion with the fixture backend.
fn scores_and_runs_in_a_suite(project: &Path, name: &str) {
    let wasm = project.join(format!("{name}.wasm"));
    assert!(wasm.is_file(), "the one command built {}", wasm.display());
    let score = |output: &str, config: &str| {
        run(&[
            "score",
            "--scorer",
            wasm.to_str().unwrap(),
            "--output",
            output,
            "--config",
            config,
        ])
    };
    let (code, stdout, stderr) = score(
        "Your refund for order 42",
        r#"{"keywords": ["refund", "order"]}"#,
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with(&format!("PASS {name}")), "{stdout}");
    let (code, stdout, _) = score("No idea", r#"{"keywords": ["refund", "order"]}"#);
    assert_eq!(code, 1, "{stdout}");
    let (code, _, stderr) = score("x", r#"{"keywords": []}"#);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("keywords"), "{stderr}");

    let fixture = project.join("suite.fixture.yaml");
    std::fs::write(
        &fixture,
        format!(
            "schemaVersion: cautilus.evaluation_input.v1\nsurface: app\npreset: prompt\nsuiteId: lang-scorer\nprovider: fixture\nmodel: canned\ncases:\n  - caseId: refund\n    input: where is my refund\n    assertions: [{{type: ./{name}.wasm, keywords: [refund, order]}}]\n  - caseId: vague\n    input: where is it\n    assertions: [{{type: ./{name}.wasm, keywords: [refund, order]}}]\n"
        ),
    )
    .unwrap();
    let canned = project.join("canned.json");
    std::fs::write(
        &canned,
        r#"{"refund": "Your refund for order 42", "vague": "soon"}"#,
    )
    .unwrap();
    let out = project.join("run");
    let (code, stdout, stderr) = run(&[
        "eval",
        "test",
        "--fixture",
        fixture.to_str().unwrap(),
        "--fixture-results",
        canned.to_str().unwrap(),
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");
}

#[test]
fn a_python_scorer_scaffold_builds_with_one_command_and_scores() {
    let Some(componentize_py) = tool("CAUTILUS_COMPONENTIZE_PY", "the componentize-py executable")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("py-tone");
    let (code, stdout, stderr) = run(&[
        "plugin",
        "new",
        "scorer",
        "py-tone",
        "--lang",
        "python",
        "--path",
        project.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("componentize-py -d wit -w scorer componentize app -o py-tone.wasm"),
        "{stdout}"
    );
    let status = Command::new(&componentize_py)
        .args([
            "-d",
            "wit",
            "-w",
            "scorer",
            "componentize",
            "app",
            "-o",
            "py-tone.wasm",
        ])
        .current_dir(&project)
        .status()
        .unwrap();
    assert!(status.success(), "the scaffold builds with its one command");
    scores_and_runs_in_a_suite(&project, "py-tone");
}

#[test]
fn a_javascript_scorer_scaffold_builds_with_one_command_and_scores() {
    let Some(js_tools) = tool(
        "CAUTILUS_JS_TOOLS",
        "a node_modules directory with @bytecodealliance/componentize-js",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("js-tone");
    let (code, stdout, stderr) = run(&[
        "plugin",
        "new",
        "scorer",
        "js-tone",
        "--lang",
        "javascript",
        "--path",
        project.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("npm run build"), "{stdout}");
    // `npm run build` with the tools already installed (CI caches them).
    let path = format!(
        "{}:{}",
        js_tools.join(".bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("npm")
        .args(["run", "build", "--silent"])
        .current_dir(&project)
        .env("PATH", path)
        .status()
        .unwrap();
    assert!(status.success(), "the scaffold builds with its one command");
    scores_and_runs_in_a_suite(&project, "js-tone");
}
