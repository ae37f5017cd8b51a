//! Plugin projects written outside this repository: the `cautilus-sdk`
//! crate this binary carries ([`sdk_copy`]), the Cargo projects `plugin new`
//! and `pack new|add` write around it ([`rust_project`], with a pinned
//! [`lockfile`]), the SDK of an existing project (`cautilus sdk`,
//! [`sdk_project`]), and the test loop of `cautilus plugin test` and `pack
//! test`: the examples file of a scorer project ([`examples`]), how a
//! scorer's outcome compares with an example's expectation ([`outcome`]),
//! and finding and building a scorer project ([`project`]).
//!
//! A Rust project depends on `cautilus-sdk = "=<version>"` and patches
//! crates.io with the copy in its `vendor/cautilus-sdk/`, so it builds with
//! a plain `cargo build` on a machine that has never seen the crate; the
//! day the crate is published, deleting the `[patch.crates-io]` line builds
//! the same project from the registry.

use std::path::PathBuf;

pub mod examples;
pub mod lockfile;
pub mod outcome;
pub mod project;
pub mod rust_project;
pub mod sdk_copy;
pub mod sdk_project;

pub use examples::{Example, ExamplesError, ExamplesFile, Expect, ScoreExpect};
pub use outcome::{Actual, Difference};
pub use project::{Language, Project, ProjectError};

/// Why a project could not be written or changed.
#[derive(Debug, thiserror::Error)]
pub enum AuthoringError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Project { path: PathBuf, message: String },
}

impl AuthoringError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn project(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::Project {
            path: path.into(),
            message: message.into(),
        }
    }
}
