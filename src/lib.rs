//! kakeai — a terminal workbench for tuning AI character dialogue (やな/あゆ).
//!
//! This package is the command line (`cli`) and the binary. Every layer below it is a crate of
//! the workspace (see docs/src/design/architecture.md); they are re-exported here under their
//! old names (`kakeai::text`, `kakeai::store` …) for the integration tests and benches.

#[macro_use]
extern crate kakeai_base;
pub use kakeai_base::say;

pub use kakeai_analysis::annotate;
pub use kakeai_engines::chat;
pub mod cli;
pub use kakeai_analysis::compare;
pub use kakeai_analysis::dataset;
pub use kakeai_analysis::insight;
pub use kakeai_analysis::report;
pub use kakeai_analysis::tune;
pub use kakeai_base::config;
pub use kakeai_base::limits;
pub use kakeai_director::director;
pub use kakeai_engines::duo;
pub use kakeai_engines::interview;
pub use kakeai_llm::llm;
pub use kakeai_safety::safety;
pub use kakeai_serve::doctor;
pub use kakeai_serve::serve;
pub use kakeai_store::patterns;
pub use kakeai_store::{p, store};
pub use kakeai_text::text;
pub use kakeai_tui::tui;
pub use kakeai_vault::vault;

#[cfg(test)]
use kakeai_testkit as test_rng;
