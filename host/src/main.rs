//! The `cautilus` binary: see `cautilus --help`.

fn main() -> std::process::ExitCode {
    cautilus::cli::main()
}
