//! A project's evaluations: its `cautilus.toml` ([`config`], its
//! `[providers.<id>]` tables: [`providers`]), its suites
//! ([`manifest`]: discovery by the config's globs, unique ids, and the
//! manifest `cautilus eval list` prints without running anything), their
//! check before anything runs ([`check`]), and one run over all of them
//! ([`run`]).

pub mod check;
pub mod config;
pub mod latest;
pub mod manifest;
pub mod providers;
pub mod run;

use std::path::{Path, PathBuf};

pub use config::{ConfigError, Loaded, ProjectConfig};
pub use manifest::{Manifest, ProjectError};

/// The project of `start`: the config named (`--config`), else the nearest
/// `cautilus.toml` upward, else defaults rooted at `start`.
pub fn open(start: &Path, named: Option<&Path>) -> Result<(Loaded, Option<PathBuf>), ConfigError> {
    match named.map(Path::to_path_buf).or_else(|| config::find(start)) {
        Some(file) => config::load(&file).map(|loaded| (loaded, Some(file))),
        None => Ok((
            Loaded {
                file: start.join(config::FILE),
                root: start.to_path_buf(),
                config: ProjectConfig::default(),
            },
            None,
        )),
    }
}
