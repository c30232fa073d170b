//! A cold model is a state, not a failure. Ollama sends nothing until the model is loaded
//! (server/routes.go:2634 waits in scheduleRunner before the first byte) and aborts the load
//! when the client disconnects (llm/llama_server.go:1297-1302), so a first-token limit shorter
//! than the load kills every attempt. Before the first turn (and again once `keep_alive` may
//! have run out) the client preloads: `POST /api/chat` with no messages, answered with
//! `done_reason: "load"` once loaded (routes.go:2645-2653), waited for under its own limit
//! (`timeouts.load_ms`). The first-token limit of the turn then starts with a loaded model.

use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Client;
use super::config::ApiKind;
use super::error::{LlmError, TimeoutPhase};
use super::http;

/// What the client knows about the model's residency.
#[derive(Debug, Default)]
pub(super) struct LoadState {
    /// A preload is waiting since then.
    since: Option<Instant>,
    /// Last time the server answered a call for the model (it stays loaded keep_alive after).
    used: Option<Instant>,
}

impl Client {
    /// How long the model has been loading, while a preload waits.
    pub fn loading(&self) -> Option<Duration> {
        let s = self.inner.load.lock().ok()?;
        s.since.map(|t| t.elapsed())
    }

    /// The server answered a call: the model is resident for keep_alive from now.
    pub(super) fn touch(&self) {
        if let Ok(mut s) = self.inner.load.lock() {
            s.used = Some(Instant::now());
        }
    }

    /// Whether the model may have been unloaded: never used, or idle past 90 % of keep_alive.
    fn may_be_cold(&self) -> bool {
        let keep = Duration::from_secs(self.config().keep_alive_s).mul_f64(0.9);
        self.inner
            .load
            .lock()
            .map(|s| s.used.is_none_or(|t| t.elapsed() >= keep))
            .unwrap_or(true)
    }

    /// Preloads the model on Ollama when it may be cold. Returns the load's duration when a
    /// preload ran.
    pub async fn ensure_loaded(&self, kind: ApiKind) -> Result<Option<Duration>, LlmError> {
        if kind != ApiKind::Ollama || !self.may_be_cold() {
            return Ok(None);
        }
        self.preload().await.map(Some)
    }

    /// `POST /api/chat {"model", "messages": [], "keep_alive", "options": {"num_ctx"}}` with the
    /// same runner options as the chat calls (other options reload the model:
    /// server/sched.go:1380-1429), waited for up to `timeouts.load_ms`, never cut earlier.
    pub async fn preload(&self) -> Result<Duration, LlmError> {
        let cfg = self.config();
        let started = Instant::now();
        let guard = self
            .known_facts()
            .is_some_and(super::facts::ServerFacts::guard_supported);
        let mut body = json!({
            "model": cfg.model,
            "messages": [],
            "keep_alive": cfg.keep_alive(),
            "options": { "num_ctx": cfg.num_ctx },
        });
        if guard {
            // At HEAD `shift` changes how the runner starts (sched.go:1413-1419): preload
            // with the value the chat calls send, or the first turn loads the model again.
            body["shift"] = json!(false);
        }
        let target = self.target(ApiKind::Ollama, "/api/chat", &cfg.model);
        let limit = cfg.timeouts.load();
        self.set_loading(Some(started));
        let result = async {
            let (resp, at, _) = http::send(
                &self.inner.http,
                &target,
                Some(&body),
                (TimeoutPhase::Load, limit),
                self.connect_timeout(),
                Some(cfg.retry_backoff()),
            )
            .await?;
            http::read_body(resp, &target, at + limit, limit).await
        }
        .await;
        self.set_loading(None);
        let text = match result {
            Ok(t) => t,
            Err(e) => return Err(self.explain(e).await),
        };
        let v: serde_json::Value = serde_json::from_str(text.trim())
            .map_err(|_| target.malformed("a JSON object with done_reason \"load\"", &text))?;
        if let Some(e) = v.get("error") {
            return Err(target.stream_error(super::protocol::error_text(e)));
        }
        if v.get("done").and_then(|d| d.as_bool()) != Some(true) {
            return Err(target.malformed("a JSON object with done_reason \"load\"", &text));
        }
        self.touch();
        Ok(started.elapsed())
    }

    fn set_loading(&self, since: Option<Instant>) {
        if let Ok(mut s) = self.inner.load.lock() {
            s.since = since;
        }
    }
}
