//! Generates the table of the `cautilus-sdk` crate's files (`sdk_files.rs`)
//! that `plugin new` and `pack new` write into a project outside any
//! checkout. The built-in components are embedded by `builtins/`, not here.

include!("../builtins/watch_tree.rs");

fn main() {
    let repo = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .parent()
        .expect("engine/ has a parent")
        .to_path_buf();
    rerun_if_tree_changed(&repo.join("sdk"));
    println!(
        "cargo:rerun-if-changed={}",
        repo.join("Cargo.toml").display()
    );
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
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
