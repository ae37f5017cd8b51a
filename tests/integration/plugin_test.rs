//! `cautilus plugin test` and `cautilus pack test`: example answers scored
//! through the binary, the diff of what differed, exit 0/1/2; a scaffolded
//! Rust, Python and JavaScript scorer built by `plugin test` itself.

use crate::support::{cautilus, component, output, run, tool};
use std::path::Path;

const CONTAINS: &str = "scorer: contains\nconfig: {value: world}\nexamples:\n  - name: mentions the word\n    output: hello world\n    expect: {pass: true, score: 1}\n  - name: misses it\n    output: hello there\n    expect: {pass: false, score: 0, detail: world}\n  - name: falls back to expected\n    config: {}\n    output: hello there\n    expected: there\n    expect: {pass: true}\n  - name: unknown config key\n    config: {valu: world}\n    output: x\n    expect: {error: valu}\n";

fn write_examples(dir: &Path, text: &str) -> String {
    let file = dir.join("examples.yaml");
    std::fs::write(&file, text).unwrap();
    file.display().to_string()
}

#[test]
fn a_builtin_scorer_passes_its_examples_and_a_wrong_one_is_shown_as_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_examples(dir.path(), CONTAINS);
    let (code, stdout, stderr) = run(&["plugin", "test", "contains", "--examples", &file]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("ok   mentions the word"), "{stdout}");
    assert!(stdout.ends_with("4 passed, 0 failed\n"), "{stdout}");

    // One wrong expectation: exit 1, the example named, both values shown.
    let wrong = CONTAINS.replace(
        "expect: {pass: false, score: 0, detail: world}",
        "expect: {pass: true, score: {min: 0.5}}",
    );
    let file = write_examples(dir.path(), &wrong);
    let (code, stdout, stderr) = run(&["plugin", "test", "contains", "--examples", &file]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let diff = "FAIL misses it\n  - expected pass: true\n  + actual   pass: false (detail: ";
    assert!(stdout.contains(diff), "{stdout}");
    assert!(
        stdout.contains("  - expected score: at least 0.5\n  + actual   score: 0\n"),
        "{stdout}"
    );
    assert!(stdout.ends_with("3 passed, 1 failed\n"), "{stdout}");

    // An error expected but a score given, and the other way round.
    let swapped = CONTAINS
        .replace("expect: {error: valu}", "expect: {pass: true}")
        .replace(
            "expect: {pass: true, score: 1}",
            "expect: {error: \"no such thing\"}",
        );
    let file = write_examples(dir.path(), &swapped);
    let (code, stdout, _) = run(&["plugin", "test", "contains", "--examples", &file, "--json"]);
    assert_eq!(code, 1, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(2), Some(2))
    );
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["name"], "mentions the word");
    assert_eq!(results[0]["passed"], false);
    assert_eq!(
        results[0]["expect"],
        serde_json::json!({"error": "no such thing"})
    );
    assert_eq!(
        results[0]["differences"][0]["actual"],
        // A passing check says what it found (it is what a negated one reports).
        "no error; pass: true, score: 1 (detail: found \"world\" at char 6)"
    );
    let refused = results[3]["actual"]["error"].as_str().unwrap();
    assert!(refused.contains("unknown field `valu`"), "{refused}");
    assert_eq!(results[3]["differences"][0]["expected"], "pass: true");
}

#[test]
fn malformed_examples_files_exit_2_naming_the_file_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            CONTAINS.replace("{pass: true, score: 1}", "{pas: true}"),
            "examples[0].expect.pas: unknown key (did you mean `pass`?); allowed: pass, score, detail, error",
        ),
        (
            CONTAINS.replace("output: hello world", "output: {a: 1}"),
            "examples[0].output: expected text, got an object",
        ),
        (
            CONTAINS.replace("name: misses it", "name: mentions the word"),
            "examples[1].name: `mentions the word` names an earlier example too",
        ),
        (
            CONTAINS.replace("scorer: contains", "scorer: regex"),
            "scorer: `regex` is not `contains`, the scorer being tested",
        ),
        ("examples: [\n".into(), "not valid YAML"),
    ];
    for (text, expected) in cases {
        let file = write_examples(dir.path(), &text);
        let (code, stdout, stderr) = run(&["plugin", "test", "contains", "--examples", &file]);
        assert_eq!(code, 2, "{expected}: {stdout}{stderr}");
        assert!(stderr.contains(&file), "{stderr}");
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
    }
    let missing = dir.path().join("nope.yaml");
    let (code, _, stderr) = run(&[
        "plugin",
        "test",
        "contains",
        "--examples",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nope.yaml: no such file"), "{stderr}");
    // A hostile name reaches the terminal escaped.
    let hostile = CONTAINS.replace("name: misses it", "name: \"\\e]0;owned\\a\"");
    let file = write_examples(dir.path(), &hostile);
    let (code, stdout, _) = run(&["plugin", "test", "contains", "--examples", &file]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        !stdout.contains('\u{1b}') && stdout.contains("ok   \\u{1b}]0;owned"),
        "{stdout}"
    );
}

const HOSTILE: &str = "examples:\n  - name: fine\n    output: ok\n    expect: {pass: true, score: 1}\n  - name: refuses\n    output: fail\n    expect: {error: refuses}\n  - name: panics\n    output: panic\n    expect: {error: \"\"}\n";

#[test]
fn a_built_component_runs_the_examples_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_examples(dir.path(), HOSTILE);
    let wasm = component("hostile");
    let test = |args: &[&str]| {
        output(
            cautilus()
                .args(["plugin", "test", &wasm])
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap(),
        )
    };
    let (code, stdout, stderr) = test(&[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.ends_with("3 passed, 0 failed\n"), "{stdout}");
    write_examples(
        dir.path(),
        &HOSTILE.replace("expect: {error: refuses}", "expect: {pass: false}"),
    );
    let (code, stdout, _) = test(&[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("FAIL refuses\n  - expected pass: false\n  + actual   error: "),
        "{stdout}"
    );
    assert!(stdout.contains("the hostile scorer refuses"), "{stdout}");
    write_examples(
        dir.path(),
        &HOSTILE.replace("fine\n", "fine\n    scorer: other\n"),
    );
    let (code, _, stderr) = test(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("examples[0].scorer: ") && stderr.contains("serves no scorer `other`"),
        "{stderr}"
    );
}

#[test]
fn pack_test_builds_the_components_and_runs_each_scorers_examples() {
    let dir = tempfile::tempdir().unwrap();
    let pack = dir.path();
    let manifest = format!(
        "[pack]\nname = \"probe-pack\"\nversion = \"0.3.0\"\nwit = \"0.1.0\"\n\n[[component]]\npath = \"components/hostile.wasm\"\nkind = \"scorer\"\nids = [\"hostile\"]\nbuild = \"mkdir -p out && cp '{}' out/hostile.wasm\"\nsource = \"out/hostile.wasm\"\nexamples = \"scorers/hostile/examples.yaml\"\n",
        component("hostile")
    );
    std::fs::write(pack.join("cautilus-pack.toml"), &manifest).unwrap();
    std::fs::create_dir_all(pack.join("scorers/hostile")).unwrap();
    write_examples(&pack.join("scorers/hostile"), HOSTILE);
    let pack_test = |args: &[&str]| {
        let mut all = vec!["pack", "test", pack.to_str().unwrap()];
        all.extend_from_slice(args);
        run(&all)
    };
    let (code, stdout, stderr) = pack_test(&[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("building components/hostile.wasm: mkdir -p out"),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("component components/hostile.wasm\n"),
        "{stdout}"
    );
    assert!(stdout.ends_with("3 passed, 0 failed\n"), "{stdout}");
    assert!(!pack.join("dist").exists(), "pack test writes no archive");
    let unchanged = std::fs::read_to_string(pack.join("cautilus-pack.toml")).unwrap();
    assert_eq!(unchanged, manifest, "nor the manifest");

    write_examples(
        &pack.join("scorers/hostile"),
        &HOSTILE.replace("{pass: true, score: 1}", "{pass: true, score: 0.5}"),
    );
    let (code, stdout, _) = pack_test(&["--no-build", "--json"]);
    assert_eq!(code, 1, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["pack"], "probe-pack@0.3.0");
    assert_eq!(report["components"][0]["path"], "components/hostile.wasm");
    assert_eq!(report["failed"], 1);
    assert_eq!(
        report["components"][0]["results"][0]["differences"][0],
        serde_json::json!({"expected": "score: 0.5", "actual": "score: 1"})
    );

    std::fs::write(
        pack.join("cautilus-pack.toml"),
        manifest.replace("scorers/hostile/examples.yaml", "scorers/none.yaml"),
    )
    .unwrap();
    let (code, _, stderr) = pack_test(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("scorers/none.yaml: no such file"),
        "{stderr}"
    );
    std::fs::write(
        pack.join("cautilus-pack.toml"),
        manifest.replace("examples = \"scorers/hostile/examples.yaml\"\n", ""),
    )
    .unwrap();
    let (code, _, stderr) = pack_test(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no component has `examples`"), "{stderr}");
}

/// `plugin new scorer` in `dir`, then `plugin test <dir>` built it and its
/// examples pass; edited to expect the wrong thing, `plugin test` fails
/// with exit 1 and does not build again.
fn scaffold_build_and_test(
    name: &str,
    new_args: &[&str],
    prepare: impl Fn(&Path),
    env: &[(&str, String)],
    build_line: &str,
) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(name);
    let mut args = vec![
        "plugin",
        "new",
        "scorer",
        name,
        "--path",
        project.to_str().unwrap(),
    ];
    args.extend_from_slice(new_args);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("cautilus plugin test"), "{stdout}");
    prepare(&project);
    let test = || {
        let mut command = cautilus();
        command
            .args(["plugin", "test"])
            .current_dir(&project)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        for (key, value) in env {
            command.env(key, value);
        }
        output(command.output().unwrap())
    };
    let (code, stdout, stderr) = test();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains(build_line), "{stderr}");
    assert!(stdout.ends_with("4 passed, 0 failed\n"), "{stdout}");

    let examples = project.join("examples.yaml");
    let text = std::fs::read_to_string(&examples).unwrap();
    let wrong = text.replacen("expect: {pass: true", "expect: {pass: false", 1);
    assert_ne!(wrong, text);
    std::fs::write(&examples, wrong).unwrap();
    let (code, stdout, stderr) = test();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("  - expected pass: false\n  + actual   pass: true"),
        "{stdout}"
    );
    if !build_line.starts_with("cargo") {
        assert!(!stderr.contains("building"), "up to date: {stderr}");
    }
}

#[test]
fn a_python_scorer_project_is_built_and_tested() {
    let Some(componentize_py) = tool("CAUTILUS_COMPONENTIZE_PY", "the componentize-py executable")
    else {
        return;
    };
    let path = format!(
        "{}:{}",
        componentize_py.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    scaffold_build_and_test(
        "py-probe",
        &["--lang", "python"],
        |_| {},
        &[("PATH", path)],
        "componentize-py -d wit -w scorer componentize app -o py-probe.wasm",
    );
}

#[test]
fn a_javascript_scorer_project_is_built_and_tested() {
    let Some(js_tools) = tool(
        "CAUTILUS_JS_TOOLS",
        "a node_modules directory with @bytecodealliance/componentize-js",
    ) else {
        return;
    };
    // The tools CI installed stand for `npm install`.
    #[cfg(unix)]
    let link = move |project: &Path| {
        std::os::unix::fs::symlink(&js_tools, project.join("node_modules")).unwrap();
    };
    scaffold_build_and_test(
        "js-probe",
        &["--lang", "javascript"],
        link,
        &[],
        "npm run build",
    );
}

#[test]
fn a_rust_scorer_project_is_built_and_tested() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
    let sdk = sdk.canonicalize().unwrap().display().to_string();
    // Share the wasm target dir with the build scripts so dependencies are reused.
    let target_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/wasm-plugins");
    let toolchain = cautilus::authoring::sdk_copy::toolchain_channel();
    let template = include_str!("../../templates/scorer-rust/examples.yaml");
    scaffold_build_and_test(
        "rs-probe",
        &["--sdk-path", &sdk],
        |project| {
            // Until the Rust scaffold writes it, the template does.
            let examples = project.join("examples.yaml");
            if !examples.exists() {
                std::fs::write(examples, template.replace("{{name}}", "rs-probe")).unwrap();
            }
        },
        &[
            ("RUSTUP_TOOLCHAIN", toolchain.to_string()),
            ("CARGO_TARGET_DIR", target_dir.display().to_string()),
        ],
        "cargo build --release --target wasm32-wasip2",
    );
    let built = target_dir.join("wasm32-wasip2/release/rs_probe.wasm");
    assert!(built.is_file(), "built where CARGO_TARGET_DIR says");
}

#[test]
fn a_directory_without_a_project_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_examples(dir.path(), CONTAINS);
    let (code, _, stderr) = run(&["plugin", "test", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no scorer project here"), "{stderr}");
}
