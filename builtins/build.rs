//! Builds the built-in plugin pack (`plugins/`) for `wasm32-wasip2` and
//! generates the table that embeds it (`src/lib.rs`), so the `cautilus`
//! binary is self-contained (`cargo install --path host` needs nothing else).
//!
//! This is a crate of its own so that the nested build runs while the
//! `cautilus` library compiles: only the binary depends on it (see
//! docs/ARCHITECTURE.md, "Build layout").

use std::path::PathBuf;

use sha2::{Digest, Sha256};

include!("wasm_build.rs");
include!("watch_tree.rs");

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
        .expect("builtins/ has a parent")
        .to_path_buf();
    for watched in [
        "plugins",
        "wit",
        "sdk",
        "schemas/presets",
        "builtins/wasm_build.rs",
        "builtins/watch_tree.rs",
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
        "/// Every component compiled into this binary.\npub static COMPONENTS: &[Component] = &[\n",
    );
    for (name, _, stem) in COMPONENTS {
        let wasm = wasm_dir.join(format!("{stem}.wasm"));
        let bytes = std::fs::read(&wasm)
            .unwrap_or_else(|e| panic!("built component {} is missing: {e}", wasm.display()));
        let embedded = out_dir.join(format!("{name}.wasm"));
        std::fs::write(&embedded, &bytes).expect("writing the embedded component");
        let sha = hex::encode(Sha256::digest(&bytes));
        table.push_str(&format!(
            "    ({name:?}, include_bytes!({:?}), {sha:?}),\n",
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
}
