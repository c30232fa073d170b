//! What comes before a first prompt and how a request is shaped for this server: the API,
//! the server's facts and a loaded model (`prepare`), the request with its system role,
//! keep_alive and truncate/shift guard (`resolved`), and what a refusal teaches.

use std::time::Duration;

use super::client::Client;
use super::config::ApiKind;
use super::error::{LlmError, TimeoutPhase};
use super::http::{self, Target};
use super::protocol::Resolved;
use super::types::ChatRequest;

impl Client {
    /// Whether the server is Ollama (its native API, or its /v1 as far as the facts tell).
    pub fn is_ollama(&self) -> bool {
        self.api() == Some(ApiKind::Ollama) || self.known_facts().is_some_and(|f| f.ollama_v1)
    }

    /// A server refused `chars` characters as too long without its count (Ollama).
    pub fn learn_refusal(&self, chars: usize) {
        let ctx = self.context_tokens();
        if let Ok(mut r) = self.inner.ratio.lock() {
            r.raise_for_refusal(chars, ctx);
        }
    }

    /// Everything before a first prompt: the API, the server's facts (context, template,
    /// flags) and, on Ollama, a loaded model (see `load.rs`). Cheap once done.
    /// A server that went away after answering (a restart) is waited for, then the model
    /// loaded again (see `load.rs`).
    pub async fn prepare(&self) -> Result<ApiKind, LlmError> {
        let kind = self.resolve_api().await?;
        self.facts(kind).await;
        match self.ensure_loaded(kind).await {
            Err(e) if self.restarting(&e) => {
                self.wait_for_server(kind).await?;
                self.ensure_loaded(kind).await?;
            }
            r => {
                r?;
            }
        }
        Ok(kind)
    }

    /// The request as this server takes it: system role, keep_alive, truncate/shift guard.
    pub(super) fn resolved<'a>(
        &'a self,
        kind: ApiKind,
        req: &'a ChatRequest,
        messages: &'a [super::types::Message],
        stream: bool,
    ) -> Resolved<'a> {
        let mut r = Resolved::new(&self.inner.cfg, req, messages, stream);
        if kind == ApiKind::Ollama {
            r.keep_alive = Some(self.inner.keep_alive.as_str());
            r.guard = self
                .known_facts()
                .is_some_and(super::facts::ServerFacts::guard_supported);
        }
        r
    }

    /// POSTs `body` and reads the whole reply within `limit`, not retried (facts, doctor).
    pub(super) async fn post_limited(
        &self,
        target: &Target,
        body: &serde_json::Value,
        limit: (TimeoutPhase, Duration),
    ) -> Result<String, LlmError> {
        let (resp, started, _) = http::send(
            &self.inner.http,
            target,
            Some(body),
            limit,
            self.connect_timeout(),
            None,
        )
        .await?;
        http::read_body(resp, target, started + limit.1, limit.1).await
    }
}
