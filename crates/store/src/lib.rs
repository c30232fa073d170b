//! The store: runs, attempts, marks and queues on SQLite (WAL, one writer) or PostgreSQL, migrations, export and import; and the pattern DB the bot learns from.

pub mod patterns;
pub mod store;

pub(crate) use kakeai_base::{config, limits, say};
pub(crate) use kakeai_director::director;
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_safety::safety;
pub(crate) use kakeai_text::text;

#[cfg(test)]
use kakeai_testkit as test_rng;
