//! Review and analysis over the store: reviewers' marks and agreement (annotate), paired comparisons (compare), datasets for training (dataset), themes and cards (insight), HTML reports (report) and learning the rules from labels (tune).

pub mod annotate;
pub mod compare;
pub mod dataset;
pub mod insight;
pub mod report;
pub mod tune;

pub(crate) use kakeai_base::{config, limits};
pub(crate) use kakeai_director::director;
pub(crate) use kakeai_engines::{duo, interview};
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_safety::safety;
pub(crate) use kakeai_store::{p, patterns, store};
pub(crate) use kakeai_text::text;
pub(crate) use kakeai_vault::vault;

#[cfg(test)]
use kakeai_testkit as test_rng;
