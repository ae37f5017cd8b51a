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
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::Response;
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
    /// Requests being answered now (the background indexing waits while
    /// there are any).
    pub requests: Arc<AtomicUsize>,
}

/// Counts a request in flight until it is answered (or dropped).
async fn in_flight(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    struct Done(Arc<AtomicUsize>);
    impl Drop for Done {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    app.requests.fetch_add(1, Ordering::SeqCst);
    let _done = Done(app.requests.clone());
    next.run(request).await
}

/// Summarizes every finished run into the index, newest first (what the
/// next page most likely asks for), a few at once
/// ([`Records::summaries`]), saving it every hundred runs or so and at the
/// end. Requests come first: it waits while any is being answered, so a
/// page does not share the cores with it (it reads what it needs itself).
fn index_in_background(records: &Records, requests: &AtomicUsize) {
    let runs = records.runs();
    for (n, chunk) in runs.chunks(BACKGROUND_CHUNK).enumerate() {
        while requests.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        records.summaries(chunk);
        if (n + 1) % (100 / BACKGROUND_CHUNK) == 0 {
            records.settle_index(&runs);
        }
    }
    records.settle_index(&runs);
}

/// Runs the background indexing reads at once.
const BACKGROUND_CHUNK: usize = 4;

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
        .layer(from_fn_with_state(app.clone(), in_flight))
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
        requests: Arc::new(AtomicUsize::new(0)),
    };
    // Every run indexed in the background, so a first start over many
    // runs is indexed soon; a later start reads the saved index and
    // checks it.
    let records = app.records.clone();
    let requests = app.requests.clone();
    std::thread::Builder::new()
        .name("run-index".into())
        .spawn(move || index_in_background(&records, &requests))?;
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
