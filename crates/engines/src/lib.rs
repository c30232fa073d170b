//! The dialogue engines: the duo run (persona, prompt, retry policy, session, driver), chat mode and the bot's chat pipeline, and interviews.

pub mod chat;
pub mod duo;
pub mod interview;

pub(crate) use kakeai_base::{config, limits};
pub(crate) use kakeai_director::director;
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_safety::safety;
pub(crate) use kakeai_store::{p, patterns, store};
pub(crate) use kakeai_text::text;
pub(crate) use kakeai_vault::vault;
