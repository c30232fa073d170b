//! The LLM second opinion of seed 003 §6 sent through a model client, within a time limit:
//! one request (the rule-masked text under [`LLM_SYSTEM_PROMPT`]), its reply merged by
//! [`merge_llm`]. Used by `kakeai pii mask --llm` and by the LINE bot's workers, so both ask
//! the same question and read the answer the same way.
//!
//! A reply that does not come within `limit` is a failure like any other: in `FailClosed`
//! mode the rule result stands and the returned flag says why the message needs review.

use std::time::Duration;

use super::{LLM_SYSTEM_PROMPT, Masked, PiiLlmMode, llm_user_prompt, merge_llm};
use crate::llm::{ChatRequest, Client, LlmConfig, Message, ResponseFormat};

/// The request for one rule-masked text: greedy, plain text, the model's own length limit.
pub fn request(masked_text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system(LLM_SYSTEM_PROMPT),
            Message::user(llm_user_prompt(masked_text)),
        ],
        temperature: Some(0.0),
        max_tokens: None,
        format: ResponseFormat::Text,
        stop: Some(Vec::new()),
        seed: None,
        cap: false,
    }
}

/// Asks the model about `masked` and merges its answer; `(result, flag)` as [`merge_llm`].
/// `Off` sends nothing.
pub async fn second_opinion(
    client: &Client,
    masked: Masked,
    mode: PiiLlmMode,
    limit: Duration,
) -> (Masked, Option<String>) {
    if mode == PiiLlmMode::Off {
        return (masked, None);
    }
    let req = request(&masked.masked_text);
    let reply = match tokio::time::timeout(limit, client.chat(&req)).await {
        Ok(Ok(c)) => Ok(c.text),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("{:.1} 秒以内に答えがなかった", limit.as_secs_f64())),
    };
    merge_llm(masked, reply.as_deref().map_err(Clone::clone), mode)
}

/// [`second_opinion`] with a client for `llm`; a client that cannot be made is a failed check
/// like any other.
pub async fn ask(
    llm: &LlmConfig,
    masked: Masked,
    mode: PiiLlmMode,
    limit: Duration,
) -> (Masked, Option<String>) {
    match Client::new(llm.clone()) {
        Ok(client) => second_opinion(&client, masked, mode, limit).await,
        Err(e) => merge_llm(masked, Err(e.to_string()), mode),
    }
}
