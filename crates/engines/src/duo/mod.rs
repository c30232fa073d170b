//! Live duo runs: personas and prompts, topic tracking, the retry policy and the run loop as a
//! pure state machine (`session`), driven by `driver` against an LLM client and the store.

pub mod backend;
pub mod config;
pub mod cut;
pub mod driver;
pub mod fitting;
pub mod judging;
pub mod persona;
pub mod policy;
pub mod preflight;
pub mod prompt;
pub mod records;
pub mod replay_plan;
pub mod request_log;
pub mod session;
pub mod topic;

pub use config::{DuoConfig, Exhaustion};
pub use records::{AttemptRecord, GenStats, RunEnd, TurnFlags, TurnRecord};
pub use session::{Effect, Event, RunSpec, Session, State};

#[cfg(test)]
mod marks_tests;
