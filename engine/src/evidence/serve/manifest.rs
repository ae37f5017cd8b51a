//! `/api/suites` answers the manifest `cautilus eval list --json` makes (a
//! child process that loads and checks every fixture). The last one made
//! is answered again while what it was made of is unchanged: the size and
//! modification time of the config, of every fixture it names and of the
//! directories holding them (a fixture added or removed beside them), and
//! for at most [`MAX_AGE`] (a fixture added elsewhere, a file a fixture
//! extends or reads its cases from).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::evidence::mcp::cli::Binary;

/// How long a manifest is answered again at most.
pub const MAX_AGE: Duration = Duration::from_secs(60);

type Stamp = Vec<Option<(u64, Option<SystemTime>)>>;

/// The manifest last made (one request makes it while the others wait).
#[derive(Debug, Default)]
pub struct Cached(tokio::sync::Mutex<Option<(Value, Stamp, Instant)>>);

/// The files and directories `manifest` was made of.
fn stamp(root: &Path, manifest: &Value) -> Stamp {
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(config) = manifest.get("config").and_then(Value::as_str) {
        paths.push(PathBuf::from(config));
    }
    paths.push(root.to_path_buf());
    for key in ["suites", "invalid"] {
        for entry in manifest
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(path) = entry.get("path").and_then(Value::as_str) {
                let file = root.join(path);
                if let Some(dir) = file.parent() {
                    paths.push(dir.to_path_buf());
                }
                paths.push(file);
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
        .iter()
        .map(|p| {
            std::fs::metadata(p)
                .ok()
                .map(|m| (m.len(), m.modified().ok()))
        })
        .collect()
}

impl Cached {
    /// The manifest: the one last made while it is fresh, else made now.
    pub async fn get(&self, binary: &Binary) -> Result<Value, String> {
        let mut cached = self.0.lock().await;
        let kept = cached
            .as_ref()
            .filter(|(_, _, made)| made.elapsed() < MAX_AGE)
            .map(|(value, stamp, _)| (value.clone(), stamp.clone()));
        if let Some((value, was)) = kept {
            let root = binary.root.clone();
            let check = value.clone();
            let now = tokio::task::spawn_blocking(move || stamp(&root, &check))
                .await
                .ok();
            if now.as_ref() == Some(&was) {
                return Ok(value);
            }
        }
        let value = binary.manifest().await?;
        let root = binary.root.clone();
        let check = value.clone();
        if let Ok(now) = tokio::task::spawn_blocking(move || stamp(&root, &check)).await {
            *cached = Some((value.clone(), now, Instant::now()));
        }
        Ok(value)
    }
}
