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
    /// The server stopped answering then: waited for (see `wait_for_server`).
    gone: Option<Instant>,
    /// The server has answered a call of this client: a later refusal is a restart, not a
    /// server that was never there (that one fails at once).
    answered: bool,
}

/// How often a server that went away is asked whether it is back.
const POLL: Duration = Duration::from_millis(500);

/// A failure that says the server is not there (refused, reset, unreachable): it may be
/// restarting, so it is waited for instead of ending the run.
pub fn server_gone(e: &LlmError) -> bool {
    matches!(e, LlmError::Connect { .. })
}

impl Client {
    /// How long the model has been loading, while a preload waits.
    pub fn loading(&self) -> Option<Duration> {
        let s = self.inner.load.lock().ok()?;
        s.since.map(|t| t.elapsed())
    }

    /// What the client is waiting on, with the time so far, for a status line: the server
    /// coming back, or the model loading. None while neither.
    pub fn waiting_line(&self) -> Option<String> {
        let cfg = self.config();
        if let Some(d) = self.waiting_for_server() {
            return Some(format!(
                "the server at {} is not answering (restarting?) — waiting {} s of {} s",
                cfg.endpoint,
                d.as_secs(),
                cfg.timeouts.restart().as_secs()
            ));
        }
        self.loading()
            .map(|d| format!("loading {}… {} s", cfg.model, d.as_secs()))
    }

    /// How long the server has been waited for, while it is away (a restart).
    pub fn waiting_for_server(&self) -> Option<Duration> {
        let s = self.inner.load.lock().ok()?;
        s.gone.map(|t| t.elapsed())
    }

    /// The server refused or dropped a connection: waits (up to `timeouts.restart_ms`,
    /// asking every half second) until it answers HTTP again, then marks the model cold so
    /// the next call loads it the way the first one did (a restarted Ollama has nothing
    /// loaded, and a request that waits for the load would hit the first-token limit).
    pub async fn wait_for_server(&self, kind: ApiKind) -> Result<Duration, LlmError> {
        let started = Instant::now();
        let limit = self.config().timeouts.restart();
        let url = match kind {
            ApiKind::Ollama => self.url(kind, "/api/version"),
            ApiKind::OpenAi => self.url(kind, "/models"),
        };
        if let Ok(mut s) = self.inner.load.lock() {
            s.gone = Some(started);
            s.used = None;
        }
        let back = loop {
            let asked = self
                .inner
                .http
                .get(&url)
                .timeout(self.config().timeouts.probe())
                .send()
                .await;
            // Any HTTP answer, whatever its status, means the server is listening again.
            if asked.is_ok() {
                break true;
            }
            if started.elapsed() + POLL > limit {
                break false;
            }
            tokio::time::sleep(POLL).await;
        };
        if let Ok(mut s) = self.inner.load.lock() {
            s.gone = None;
        }
        if !back {
            let target = self.target(kind, "", &self.config().model);
            return Err(target.timeout(TimeoutPhase::Restart, limit));
        }
        Ok(started.elapsed())
    }

    /// The server answered a call: the model is resident for keep_alive from now.
    pub(super) fn touch(&self) {
        if let Ok(mut s) = self.inner.load.lock() {
            s.used = Some(Instant::now());
            s.answered = true;
        }
    }

    /// Whether `e` is worth waiting for: the server went away after it had answered.
    pub(super) fn restarting(&self, e: &LlmError) -> bool {
        server_gone(e) && self.inner.load.lock().is_ok_and(|s| s.answered)
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
