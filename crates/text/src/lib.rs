//! Japanese text: analysers (lindera over IPADIC, a fallback), sentences, widths, folding and keyword variants, echo checks.

pub mod text;

pub(crate) use kakeai_base::{config, say};

#[cfg(test)]
use kakeai_testkit as test_rng;
