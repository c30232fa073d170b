//! The vault: a work's secret settings, who may see what (levels 0–3), the filtered context a sister is given, the leak review and the writer's scorecard.

pub mod vault;

pub(crate) use kakeai_base::{config, limits, say};
pub(crate) use kakeai_director::director;
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_safety::safety;
pub(crate) use kakeai_store::{p, store};
pub(crate) use kakeai_text::text;

#[cfg(test)]
use kakeai_testkit as test_rng;
