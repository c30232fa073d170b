//! kakeai — a terminal workbench for tuning AI character dialogue (やな/あゆ).
//!
//! The library holds everything; `main.rs` only wires the command line to it.

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

pub mod annotate;
pub mod chat;
pub mod cli;
pub mod compare;
pub mod config;
pub mod dataset;
pub mod director;
pub mod doctor;
pub mod duo;
pub mod insight;
pub mod interview;
pub mod limits;
pub mod llm;
pub mod patterns;
pub mod report;
pub mod safety;
pub mod serve;
pub mod store;
pub mod text;
pub mod tui;
pub mod tune;
pub mod vault;

#[cfg(test)]
mod test_rng;
