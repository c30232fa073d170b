//! Interviews (issue 12, seed 003 §1–§3, §7): a sister leads a user through
//! `intro → enumerate → recommend → choose → deepening → summary_check → done`, falling back to
//! three fixed questions whenever the model fails.
//!
//! `config` (the TOML definition), `state` (the pure state machine), `prompt` (system and
//! behaviour prompts), `store` (rows of migration 010) and `runner` (the I/O edge).

pub mod config;
pub mod prompt;
pub mod runner;
pub mod state;
pub mod store;

#[cfg(test)]
mod state_tests;

pub use config::{InterviewConfig, Tone};
pub use runner::{Event, Outcome, Runner};
pub use state::{Finish, Machine, Next, State};
