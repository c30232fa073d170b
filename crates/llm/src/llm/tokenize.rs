//! The server's own tokenizer, asked once before the first prompt so the token budget starts
//! from the model's real ratio instead of a guess (issue 13 §4): llama-server's
//! `POST /tokenize {"content": …}` → `{"tokens": [...]}`. A server without it (Ollama, a proxy
//! that only forwards `/v1`) answers 404 or something else: the budget then keeps its first
//! guess and learns from the first reply's usage count, as before.

use std::sync::atomic::Ordering;

use super::client::Client;
use super::config::ApiKind;
use super::types::Message;

impl Client {
    /// Learns the tokens-per-char ratio from the tokenizer endpoint, once per client and only
    /// while nothing was learned yet. Returns the count when the server gave one.
    pub async fn learn_from_tokenizer(&self, messages: &[Message]) -> Option<u32> {
        // Ollama has no tokenizer endpoint; an API not detected yet is asked on a later call.
        if self.ratio().learned || self.api() != Some(ApiKind::OpenAi) {
            return None;
        }
        if self.inner.tokenizer_tried.swap(true, Ordering::Relaxed) {
            return None;
        }
        let text: String = messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let chars = text.chars().count();
        if chars == 0 {
            return None;
        }
        let url = format!("{}/tokenize", self.inner.root);
        let reply = self
            .inner
            .http
            .post(&url)
            .timeout(self.config().timeouts.probe())
            .json(&serde_json::json!({ "content": text }))
            .send()
            .await
            .ok()?;
        if !reply.status().is_success() {
            return None;
        }
        // Capped like every body from the server (a flood is no count).
        let mut bytes = Vec::new();
        let mut reply = reply;
        while let Some(chunk) = reply.chunk().await.ok()? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > crate::limits::MAX_RESPONSE_BYTES {
                return None;
            }
        }
        let body: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        let n = u32::try_from(body.get("tokens")?.as_array()?.len()).ok()?;
        if n == 0 {
            return None;
        }
        self.learn(chars, n);
        Some(n)
    }
}
