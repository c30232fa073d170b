//! The seam between the two wire dialects: request bodies, and parsing of one stream line or one
//! whole reply into text deltas and finish information. Pure and synchronous.

use std::borrow::Cow;

use serde_json::Value;

use super::config::{ApiKind, LlmConfig};
use super::types::{ChatRequest, Finish, Message, ResponseFormat};

/// What one stream line carried.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk<'a> {
    pub delta: Option<Cow<'a, str>>,
    pub finish: Option<Finish>,
    /// The server's own count of generated tokens (final line / usage / timings).
    pub tokens: Option<u32>,
    /// The server's count of prompt tokens (usage.prompt_tokens / prompt_eval_count).
    pub prompt_tokens: Option<u32>,
    /// The stream is complete (Ollama `done: true`, SSE `[DONE]`).
    pub done: bool,
}

/// A whole non-streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub finish: Finish,
    pub tokens: Option<u32>,
    pub prompt_tokens: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LineError {
    /// The server put an error object in the stream or body.
    Server(String),
    /// Not what the protocol allows here.
    Malformed { expected: &'static str },
}

/// Sampling and shape settings resolved from the request and the config.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved<'a> {
    pub model: &'a str,
    pub messages: &'a [Message],
    /// Rounded to 6 decimals so 0.7f32 goes on the wire as 0.7, not 0.699999988079071.
    pub temperature: f64,
    pub max_tokens: u32,
    pub stop: &'a [String],
    pub seed: Option<u64>,
    pub format: &'a ResponseFormat,
    pub num_ctx: u32,
    pub stream: bool,
    /// Ollama: `keep_alive` to send (None: the server's default).
    pub keep_alive: Option<&'a str>,
    /// Ollama ≥ 0.13: send `truncate: false` and `shift: false`.
    pub guard: bool,
}

/// What an Ollama embedding call carries so it does not unload or reload the chat model.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedKeep<'a> {
    pub keep_alive: &'a str,
    /// The chat's num_ctx, when the embedding model is the chat model.
    pub num_ctx: Option<u32>,
}

impl<'a> Resolved<'a> {
    /// The messages as both APIs take them: `[{"role": …, "content": …}]`.
    pub fn wire_messages(&self) -> Vec<Value> {
        self.messages
            .iter()
            .map(|m| serde_json::json!({"role": m.role.as_str(), "content": m.content}))
            .collect()
    }

    pub fn new(
        cfg: &'a LlmConfig,
        req: &'a ChatRequest,
        messages: &'a [Message],
        stream: bool,
    ) -> Resolved<'a> {
        let default_t = if req.cap {
            cfg.temperature
        } else {
            cfg.judge_temperature
        };
        Resolved {
            model: &cfg.model,
            messages,
            temperature: (f64::from(req.temperature.unwrap_or(default_t)) * 1e6).round() / 1e6,
            max_tokens: req.max_tokens.unwrap_or(cfg.max_tokens),
            stop: req.stop.as_deref().unwrap_or(&cfg.stop),
            seed: req.seed,
            format: &req.format,
            num_ctx: cfg.num_ctx,
            stream,
            keep_alive: None,
            guard: false,
        }
    }
}

pub trait Protocol: Send + Sync {
    fn kind(&self) -> ApiKind;
    /// Paths relative to the API base (the endpoint root for Ollama, `<root>/v1` for OpenAI).
    fn chat_path(&self) -> &'static str;
    fn models_path(&self) -> &'static str;
    fn embed_path(&self) -> &'static str;

    fn chat_body(&self, r: &Resolved<'_>) -> Value;
    /// `Ok(None)` for lines that carry nothing (blank lines, SSE comments and other fields).
    fn parse_line<'a>(&self, line: &'a str) -> Result<Option<Chunk<'a>>, LineError>;
    fn parse_reply(&self, body: &str) -> Result<Reply, LineError>;
    /// Model names from the model-list body; `None` when the body is not this dialect's list.
    fn parse_models(&self, body: &str) -> Option<Vec<String>>;
    fn embed_body(&self, model: &str, inputs: &[String]) -> Value;
    /// The embedding body with what keeps the model loaded (Ollama); others ignore it.
    fn embed_body_with(&self, model: &str, inputs: &[String], _keep: &EmbedKeep<'_>) -> Value {
        self.embed_body(model, inputs)
    }
    fn parse_embeddings(&self, body: &str) -> Result<Vec<Vec<f32>>, LineError>;
}

pub fn finish_from(reason: &str) -> Finish {
    match reason {
        "length" | "max_tokens" => Finish::Length,
        _ => Finish::Stop,
    }
}

/// An error value as text: a string as is, an object's `message`, else compact JSON.
pub fn error_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other
            .get("message")
            .and_then(|m| m.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| other.to_string()),
    }
}
