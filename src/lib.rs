//! kakeai — a terminal workbench for tuning AI character dialogue (やな/あゆ).
//!
//! The library holds everything; `main.rs` only wires the command line to it.

#[macro_use]
extern crate kakeai_base;
pub use kakeai_base::say;

pub mod annotate;
pub use kakeai_engines::chat;
pub mod cli;
pub mod compare;
pub use kakeai_base::config;
pub mod dataset;
pub use kakeai_director::director;
pub mod doctor;
pub use kakeai_engines::duo;
pub mod insight;
pub use kakeai_base::limits;
pub use kakeai_engines::interview;
pub use kakeai_llm::llm;
pub use kakeai_store::patterns;
pub mod report;
pub use kakeai_safety::safety;
pub mod serve;
pub use kakeai_store::{p, store};
pub use kakeai_text::text;
pub mod tui;
pub mod tune;
pub use kakeai_vault::vault;

#[cfg(test)]
use kakeai_testkit as test_rng;
