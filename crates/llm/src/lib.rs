//! The model client: Ollama and OpenAI-compatible servers, streaming, budgets and fitting a prompt to the context.

pub mod llm;

pub(crate) use kakeai_base::{config, limits, say};

#[cfg(test)]
use kakeai_testkit as test_rng;
