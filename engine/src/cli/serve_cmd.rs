//! `cautilus serve`: the local web app and JSON API over the project's
//! records ([`crate::evidence::serve`]), for the project found from
//! `--project` (default: the current directory) or named by `--config`.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::evidence::serve::{DEFAULT_PORT, Listen};

pub(super) const EXAMPLES: &str = "\
Examples:
  cautilus serve                         # http://127.0.0.1:7357/ for the project of the current directory
  cautilus serve --project ../app --port 0
  cautilus serve --bind 0.0.0.0          # every interface: anyone who reaches the port reads the records

The first line on stdout is the URL served. Read-only (GET/HEAD); requests
whose Host is not this server's are refused (DNS rebinding). The JSON API
under /api/ and the page's views are in docs/serve.md.";

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The project directory (its cautilus.toml is looked for upward from it)
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The project config (default: the nearest cautilus.toml upward)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The port (0: any free port)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PORT)]
    port: u16,
    /// The address to listen on; anything but a loopback address lets
    /// others on the network read the records
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    bind: IpAddr,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let start = match &args.project {
        Some(dir) => {
            anyhow::ensure!(
                dir.is_dir(),
                "--project {} is not a directory; give the project's directory",
                dir.display()
            );
            dir.clone()
        }
        None => std::env::current_dir()?,
    };
    let (mut loaded, file) = crate::project::open(&start, args.config.as_deref())?;
    loaded.root = std::fs::canonicalize(&loaded.root).unwrap_or(loaded.root);
    let file = file.map(|f| std::fs::canonicalize(&f).unwrap_or(f));
    if !args.bind.is_loopback() {
        crate::term_eprintln!(
            "warning: listening on {}, not a loopback address: anyone who can reach this port can read the project's records and outputs",
            args.bind
        );
    }
    let listen = Listen {
        address: args.bind,
        port: args.port,
    };
    crate::evidence::serve::serve(&loaded, file.as_deref(), listen)?;
    Ok(ExitCode::SUCCESS)
}
