//! The Director: the static rules on a line (tone, length, scatter, topic …), the rules file, and the 5-aspect judge.

pub mod director;

pub(crate) use kakeai_base::{config, limits};
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_text::text;
