//! The ground floor: configuration files (paths, layered TOML with file:line:col errors) and input limits; the `say!` log macro.

pub mod config;
pub mod limits;

/// `eprintln!` that never panics: one line to stderr, a write error (a reader gone, a closed
/// pipe, a full disk) ignored. For the server and what it calls: a log line must never stop a
/// worker or turn a clean SIGTERM into a panic.
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}
