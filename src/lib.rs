//! kakeai — a terminal workbench for tuning AI character dialogue (やな/あゆ).
//!
//! The library holds everything; `main.rs` only wires the command line to it.

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
