//! Entry point: parse the command line and hand over to `kakeai::cli`.

fn main() {
    std::process::exit(kakeai::cli::main());
}
