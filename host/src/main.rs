//! The `cautilus` binary: see `cautilus --help`.

/// mimalloc: the host allocates and frees many short-lived strings (every
/// case's packets cross the plugin boundary as JSON text); see
/// docs/ARCHITECTURE.md. Built with `no_thp`: it does not ask for
/// transparent huge pages, so a short run does not zero 2 MiB for every
/// region it touches (a fifth less memory and start-up work).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cautilus::plugin::builtin::install(cautilus_builtins::COMPONENTS);
    // Every child of this process is started through `process_tree`, so it
    // may adopt the orphans of a program that killed its supervisor.
    if let Err(error) = cautilus::process_tree::adopt_orphans() {
        eprintln!("warning: cannot adopt the orphans of graders and CLIs: {error}");
    }
    // Programs run as the operator's user: they may not read this
    // process's environment (its API keys) through /proc.
    if let Err(error) = cautilus::process_tree::hide_from_programs() {
        eprintln!(
            "warning: cannot hide this process's environment from the programs it runs: {error}"
        );
    }
    cautilus::cli::main()
}
