//! The streaming LLM client: Ollama's native API and OpenAI-compatible servers behind one
//! `Client`, with UTF-8-safe stream framing, the character cap, retries, fallback and typed
//! errors.
//!
//! Layers: `framing` (bytes → text → lines, the cap) and `stream` are pure and synchronous;
//! `ollama` / `openai` implement the `Protocol` seam (request bodies, line and reply parsing);
//! `http` and `client` move bytes and enforce the time limits.

pub mod budget;
pub mod client;
pub mod config;
mod detect;
pub mod error;
pub mod facts;
pub mod framing;
pub mod guard;
mod http;
pub use http::read_capped;
mod load;
pub mod ollama;
pub mod openai;
pub mod policy;
mod prepare;
pub mod protocol;
pub mod stream;
mod tokenize;
pub mod types;

pub use client::{Client, protocol};
pub use config::{ApiKind, LlmConfig, ModelOverride, SystemRole, Timeouts};
pub use error::{LlmError, TimeoutPhase};
pub use protocol::Protocol;
pub use stream::{Step, StreamDecoder};
pub use types::{
    ChatRequest, Completion, ContextCheck, Finish, Message, ResponseFormat, Role, ServerInfo,
    prepare_messages,
};
