//! The LINE bot server (webhook, queue, workers, metrics, operations) and doctor, which checks a setup before a run.

pub mod doctor;
pub mod serve;

pub(crate) use kakeai_base::{limits, say};
pub(crate) use kakeai_director::director;
pub(crate) use kakeai_engines::{chat, duo};
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_safety::safety;
pub(crate) use kakeai_store::{p, patterns, store};
pub(crate) use kakeai_text::text;
pub(crate) use kakeai_vault::vault;

#[cfg(test)]
use kakeai_testkit as test_rng;
