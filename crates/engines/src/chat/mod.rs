//! One chat pipeline for the workbench's chat mode and the LINE bot (`kakeai serve --line`):
//! what the next line may see of the conversation (`context`: blocked messages left out, counted
//! as safety flags), the prompt she answers with (`prompt`), and the judgement that decides
//! whether a line may be said at all (`verdict`: the Director, L5 and the vault's leak review;
//! only a *usable* line — PASS or WARN — is ever shown or sent).

pub mod choose;
pub mod context;
pub mod engine;
pub mod prompt;
pub mod verdict;

pub use context::{ChatContext, Turn};
pub use verdict::{Checks, usable};
