//! The `cautilus` binary: see `cautilus --help`.

/// mimalloc: the host allocates and frees many short-lived strings (every
/// case's packets cross the plugin boundary as JSON text); see
/// docs/ARCHITECTURE.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cautilus::cli::main()
}
