//! `cautilus mcp`: a Model Context Protocol server on stdio (through
//! `rmcp`, the protocol's Rust SDK) for coding agents, over one project
//! (the `cautilus.toml` found upward from where it starts, or named).
//!
//! | tool | what it does | arguments |
//! |---|---|---|
//! | `list_suites` | the manifest (`cautilus.manifest.v1`), every suite checked | none |
//! | `validate` | checks every suite, or one, offline | `suite?` |
//! | `run` | runs a suite, or some of its cases or variants, as the config says | `suite`, `cases?`, `variants?` |
//! | `list_runs` | `cautilus.run_list.v1` | `suite?`, `offset?`, `limit?` |
//! | `run_summary` | `cautilus.run_detail.v1` | `run` |
//! | `cell_evidence` | `cautilus.cell_evidence.v1` | `run`, `case`, `variant?`, `trial?` |
//! | `compare_runs` | `cautilus.evidence_comparison.v1` | `a`, `b`, `variantA?`, `variantB?` |
//! | `suite_progress` | `cautilus.suite_progress.v1` | `suite` |
//!
//! Results are the read models' JSON (structured content, and the same
//! JSON as text). A request that cannot be answered is a tool error whose
//! text says what to do; the server goes on. What `run` may do is bounded
//! by the project's config ([`cli`]); the read tools read only the
//! project's records ([`super::records`]).

pub mod cli;
mod tools;

use std::path::Path;
use std::sync::Arc;

use rmcp::ServiceExt;

use super::Records;
use cli::Binary;

/// The project a server answers for.
#[derive(Debug)]
pub struct Project {
    pub records: Records,
    pub binary: Binary,
}

/// The server: one project, shared by every request.
#[derive(Debug, Clone)]
pub struct Server {
    project: Arc<Project>,
}

impl Server {
    pub fn new(project: Project) -> Self {
        Self {
            project: Arc::new(project),
        }
    }
}

/// Serves the project `loaded` (its config `config`, when it has one) on
/// stdin/stdout until the client closes the connection.
pub fn serve(loaded: &crate::project::Loaded, config: Option<&Path>) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let project = Project {
        records: Records::of_project(loaded),
        binary: Binary {
            exe,
            root: loaded.root.clone(),
            config: config.map(Path::to_path_buf),
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let service = Server::new(project)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("the MCP client did not start a session: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session ended abnormally: {e}"))?;
        anyhow::Ok(())
    })
}
