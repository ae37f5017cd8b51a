//! `cautilus serve`: a local web app and JSON API over the evidence read
//! models of one project (the `cautilus.toml` found upward from where it
//! starts, or named), through `axum` on HTTP/1.1.
//!
//! - [`api`]: the routes under `/api/` (docs/serve.md), each answering a
//!   read model of [`crate::evidence`] or a wrapper of [`models`] made by
//!   [`answers`] (pages, cases, outputs, source lines via [`lines`]) or
//!   [`live`] (runs in progress);
//! - [`assets`]: the page, its scripts (one small module per view) and its
//!   styles, embedded in the binary: nothing is ever served by path;
//! - [`guard`]: read-only (GET/HEAD), the `Host` check against DNS
//!   rebinding, the security headers of every answer.
//!
//! It binds 127.0.0.1 unless told otherwise (another address only when
//! given with `--bind`, with a warning), prints the URL it serves as its
//! first line on stdout, and runs until it is killed. The read models read
//! the project's records (its config's `dir`) and, for where an assertion
//! was written, files inside the project root; `/api/suites` runs `cautilus
//! eval list --json` as `cautilus mcp` does (a child process in the root).
//! It lives beside `mcp/` because both are front ends of the same models.

mod answers;
mod api;
mod assets;
mod guard;
mod lines;
mod live;
mod manifest;
pub mod models;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::get;

use super::Records;
use super::mcp::cli::Binary;

/// The port served on unless `--port` says otherwise.
pub const DEFAULT_PORT: u16 = 7357;

/// Where to listen.
#[derive(Debug, Clone, Copy)]
pub struct Listen {
    pub address: IpAddr,
    pub port: u16,
}

impl Default for Listen {
    fn default() -> Self {
        Self {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
        }
    }
}

/// What every request reads.
#[derive(Debug)]
pub struct App {
    pub records: Records,
    pub binary: Binary,
    /// The manifest last made, while its fixtures are unchanged.
    pub manifest: manifest::Cached,
}

/// The routes, guarded, for the server bound at `bound`.
pub fn router(app: Arc<App>, bound: SocketAddr) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/suites", get(api::suites))
        .route("/api/runs", get(api::runs))
        .route("/api/progress", get(api::progress))
        .route("/api/run", get(api::run))
        .route("/api/cases", get(api::cases))
        .route("/api/cell", get(api::cell))
        .route("/api/source", get(api::source))
        .route("/api/compare", get(api::compare))
        .route("/api/outputs", get(api::outputs))
        .route("/api/live", get(api::live_runs))
        .route("/api/{*rest}", get(api::unknown))
        .fallback(assets::not_found)
        .with_state(app)
        .layer(from_fn_with_state(bound, guard::guard))
}

/// Serves the project `loaded` (its config `config`, when it has one) on
/// `listen` until the process is ended.
pub fn serve(
    loaded: &crate::project::Loaded,
    config: Option<&Path>,
    listen: Listen,
) -> anyhow::Result<()> {
    let app = App {
        records: Records::of_project(loaded),
        binary: Binary {
            exe: std::env::current_exe()?,
            root: loaded.root.clone(),
            config: config.map(Path::to_path_buf),
        },
        manifest: manifest::Cached::default(),
    };
    // Every run indexed in the background, oldest first (the first pages
    // ask for the newest), so a first start over many runs is indexed
    // soon; a later start reads the saved index and checks it.
    let records = app.records.clone();
    std::thread::Builder::new()
        .name("run-index".into())
        .spawn(move || {
            let runs = records.runs();
            for (n, run) in runs.iter().rev().enumerate() {
                let _ = records.summary(run);
                if n % 100 == 99 {
                    records.settle_index(&runs);
                }
            }
            records.settle_index(&runs);
        })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let wanted = SocketAddr::new(listen.address, listen.port);
        let listener = tokio::net::TcpListener::bind(wanted).await.map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on {wanted}: {e}; choose another port with --port (0: any free port)"
            )
        })?;
        let bound = listener.local_addr()?;
        let host = match bound.ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            ip if ip.is_unspecified() => "127.0.0.1".into(),
            ip => ip.to_string(),
        };
        let app = Arc::new(app);
        // The manifest made while the first page loads.
        let warm = app.clone();
        tokio::spawn(async move {
            let _ = warm.manifest.get(&warm.binary).await;
        });
        crate::outln!("http://{host}:{}/", bound.port());
        use std::io::Write;
        std::io::stdout().flush().ok();
        crate::term_eprintln!(
            "serving the records of {} (read-only; Ctrl-C stops)",
            loaded.records_dir().display()
        );
        axum::serve(listener, router(app, bound))
            .await
            .map_err(|e| anyhow::anyhow!("the server stopped: {e}"))
    })
}
