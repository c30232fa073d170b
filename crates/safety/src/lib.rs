//! Safety: the layered judge of a line (words, patterns, context, worldview) and the PII masker (rules plus a learned labeller).

pub mod safety;

pub(crate) use kakeai_base::{config, limits};
pub(crate) use kakeai_director::director;
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_text::text;

#[cfg(test)]
use kakeai_testkit as test_rng;
