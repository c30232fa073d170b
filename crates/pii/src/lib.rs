//! The Japanese PII masker, usable on its own: names, companies, schools, addresses, phone
//! numbers, e-mail, card numbers and My Number found by rules over the text and its analysis,
//! a sequence labeller trained at build time (`build.rs`), and an optional second opinion from
//! a chat model. See README.md.

pub mod pii;

pub(crate) use kakeai_base::{config, limits};
pub(crate) use kakeai_llm::llm;
pub(crate) use kakeai_text::text;
