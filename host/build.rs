//! Builds the built-in plugin pack (`plugins/`) for `wasm32-wasip2` and
//! generates the table that embeds it, so the `cautilus` binary is
//! self-contained (`cargo install --path host` needs nothing else).

use std::path::PathBuf;

use sha2::{Digest, Sha256};

include!("wasm_build.rs");

/// (short name, package, wasm file stem) of every built-in component.
const COMPONENTS: &[(&str, &str, &str)] = &[
    (
        "scorers",
        "cautilus-builtin-scorers",
        "cautilus_builtin_scorers",
    ),
    (
        "preset-chat",
        "cautilus-preset-chat",
        "cautilus_preset_chat",
    ),
    (
        "preset-prompt",
        "cautilus-preset-prompt",
        "cautilus_preset_prompt",
    ),
    (
        "preset-skill",
        "cautilus-preset-skill",
        "cautilus_preset_skill",
    ),
    (
        "preset-whole-repo",
        "cautilus-preset-whole-repo",
        "cautilus_preset_whole_repo",
    ),
    ("provider-fixture", "fixture", "cautilus_provider_fixture"),
    ("provider-openai", "openai", "cautilus_provider_openai"),
    (
        "provider-anthropic",
        "anthropic",
        "cautilus_provider_anthropic",
    ),
    (
        "provider-claude-cli",
        "claude-cli",
        "cautilus_provider_claude_cli",
    ),
    (
        "provider-codex-cli",
        "codex-cli",
        "cautilus_provider_codex_cli",
    ),
    (
        "provider-claude-code",
        "claude-code",
        "cautilus_provider_claude_code",
    ),
    ("provider-codex", "codex", "cautilus_provider_codex"),
    ("provider-exec", "exec", "cautilus_provider_exec"),
    ("provider-http", "http", "cautilus_provider_http"),
    ("judge", "cautilus-judge", "cautilus_judge"),
];

fn main() {
    let repo = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .parent()
        .expect("host/ has a parent")
        .to_path_buf();
    for watched in [
        "plugins",
        "wit",
        "sdk",
        "schemas/presets",
        "host/wasm_build.rs",
    ] {
        rerun_if_tree_changed(&repo.join(watched));
    }
    // One cargo invocation per component, so that Cargo's feature unification
    // cannot leak one component's dependency features into another (the
    // presets' `serde_json/preserve_order` would enlarge every JSON value of
    // the scorers).
    let mut wasm_dir = PathBuf::new();
    for (_, package, _) in COMPONENTS {
        wasm_dir = build_wasm_workspace(&repo.join("plugins/Cargo.toml"), &[package]);
    }

    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let mut table = String::from(
        "/// Every component compiled into this binary.\npub static BUILTIN_COMPONENTS: &[BuiltinComponent] = &[\n",
    );
    for (name, _, stem) in COMPONENTS {
        let wasm = wasm_dir.join(format!("{stem}.wasm"));
        let bytes = std::fs::read(&wasm)
            .unwrap_or_else(|e| panic!("built component {} is missing: {e}", wasm.display()));
        let embedded = out_dir.join(format!("{name}.wasm"));
        std::fs::write(&embedded, &bytes).expect("writing the embedded component");
        let sha = hex::encode(Sha256::digest(&bytes));
        table.push_str(&format!(
            "    BuiltinComponent {{ name: {name:?}, bytes: include_bytes!({:?}), sha256: {sha:?} }},\n",
            embedded.display().to_string()
        ));
    }
    table.push_str("];\n");
    std::fs::write(out_dir.join("builtin_components.rs"), table)
        .expect("writing the component table");
    println!(
        "cargo:rerun-if-changed={}",
        repo.join("Cargo.toml").display()
    );
    embed_sdk(&repo, &out_dir);
}

/// Writes `sdk_files.rs`: every file of the `cautilus-sdk` crate (its
/// sources and its WIT), so `plugin new` and `pack new` can write a copy
/// into a project outside any checkout. Its `Cargo.toml` inherits fields
/// from this workspace; the copy gets them written out, as `cargo package`
/// does, so it builds on its own.
fn embed_sdk(repo: &std::path::Path, out_dir: &std::path::Path) {
    let sdk = repo.join("sdk");
    let mut files = Vec::new();
    collect_files(&sdk, &sdk, &mut files);
    files.sort();
    let inherited = workspace_package(&std::fs::read_to_string(repo.join("Cargo.toml")).unwrap());
    let mut table = String::from(
        "/// The files of the cautilus-sdk crate: (path in the crate, bytes).\npub static SDK_FILES: &[(&str, &[u8])] = &[\n",
    );
    for relative in files {
        let full = sdk.join(&relative);
        let source = if relative == "Cargo.toml" {
            let text = standalone_manifest(&std::fs::read_to_string(&full).unwrap(), &inherited);
            let written = out_dir.join("sdk-Cargo.toml");
            std::fs::write(&written, text).expect("writing the SDK's standalone manifest");
            written
        } else {
            full
        };
        table.push_str(&format!(
            "    ({relative:?}, include_bytes!({:?})),\n",
            source.display().to_string()
        ));
    }
    table.push_str("];\n");
    std::fs::write(out_dir.join("sdk_files.rs"), table).expect("writing the SDK table");
}

fn collect_files(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("reading sdk/").flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect_files(root, &path, out);
        } else {
            let relative = path.strip_prefix(root).unwrap();
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
}

/// The `key = value` lines of `[workspace.package]`.
fn workspace_package(manifest: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut fields = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[workspace.package]";
        } else if inside && let Some((key, value)) = line.split_once('=') {
            fields.push((key.trim().to_string(), value.trim().to_string()));
        }
    }
    fields
}

/// `manifest` with each `key.workspace = true` replaced by the workspace's value.
fn standalone_manifest(manifest: &str, inherited: &[(String, String)]) -> String {
    let mut out = String::new();
    for line in manifest.lines() {
        let written = line
            .split_once(".workspace = true")
            .filter(|(_, rest)| rest.trim().is_empty())
            .and_then(|(key, _)| {
                let key = key.trim();
                let value = inherited.iter().find(|(name, _)| name == key);
                Some(format!("{key} = {}", value?.1))
            });
        match written {
            Some(line) => out.push_str(&line),
            None => {
                assert!(
                    !line.contains(".workspace"),
                    "sdk/Cargo.toml inherits `{line}`, which the standalone copy cannot"
                );
                out.push_str(line);
            }
        }
        out.push('\n');
    }
    out
}
