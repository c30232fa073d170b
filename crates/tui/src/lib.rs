//! The workbench: a terminal UI of rooms (runs, detail, queue, vault, rules, tune …), each with its state, verbs and drawing; the runtime at its edge turns keys and model events into effects.

pub mod tui;

pub(crate) use kakeai_analysis::{annotate, compare, insight, tune};
pub(crate) use kakeai_base::{config, limits};
pub(crate) use kakeai_director::director;
pub(crate) use kakeai_engines::{chat, duo, interview};
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_safety::safety;
pub(crate) use kakeai_serve::{doctor, serve};
pub(crate) use kakeai_store::{patterns, store};
pub(crate) use kakeai_text::text;
pub(crate) use kakeai_vault::vault;

#[cfg(test)]
use kakeai_testkit as test_rng;
