//! The async client: streamed and non-streamed chat with the retry and fallback policy, and
//! embeddings (API detection is in `detect.rs`). Dropping a returned future drops its connection; nothing is spawned.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::OnceCell;

use super::budget;
use super::config::{ApiKind, LlmConfig};
use super::error::{LlmError, TimeoutPhase};
use super::framing::cap_text;
use super::http::{self, Target};
use super::ollama::Ollama;
use super::openai::OpenAi;
use super::policy;
use super::protocol::{LineError, Protocol};
use super::stream::{Step, StreamDecoder, StreamLineError};
use super::types::{ChatRequest, Completion, Finish, prepare_messages};

/// A handle to one endpoint and model. Cheap to clone; clones share the connection pool and
/// the detected API.
#[derive(Clone)]
pub struct Client {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) cfg: LlmConfig,
    pub(super) http: reqwest::Client,
    /// The endpoint without a trailing `/` or `/v1`.
    pub(super) root: String,
    /// The endpoint named `/v1` explicitly, which means OpenAI-compatible.
    pub(super) says_v1: bool,
    pub(super) api: OnceCell<ApiKind>,
    /// Prompt tokens per character, learned from the server's counts.
    pub(super) ratio: std::sync::Mutex<budget::Ratio>,
    /// The same, learned from judge and other uncapped calls only: their prompts (a JSON
    /// schema, quoted lines) tokenize differently and must not steer the lines' budget.
    pub(super) judge_ratio: std::sync::Mutex<budget::Ratio>,
    /// The context a server reported when it refused a prompt (smaller than num_ctx).
    server_ctx: std::sync::atomic::AtomicU32,
    /// `keep_alive` as sent ("1800s").
    pub(super) keep_alive: String,
    /// The tokenizer endpoint was asked already (see `tokenize.rs`).
    pub(super) tokenizer_tried: std::sync::atomic::AtomicBool,
    /// What the server said about itself and the model (see `facts.rs`).
    pub(super) facts: OnceCell<super::facts::ServerFacts>,
    /// Whether the model is loading or was used lately (see `load.rs`).
    pub(super) load: std::sync::Mutex<super::load::LoadState>,
}

pub fn protocol(kind: ApiKind) -> &'static dyn Protocol {
    match kind {
        ApiKind::Ollama => &Ollama,
        ApiKind::OpenAi => &OpenAi,
    }
}

impl Client {
    pub fn new(cfg: LlmConfig) -> Result<Client, LlmError> {
        let bad = |detail: String| LlmError::BadEndpoint {
            url: cfg.endpoint.clone(),
            detail,
        };
        let url = reqwest::Url::parse(&cfg.endpoint).map_err(|e| bad(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("only http:// and https:// are supported".into()));
        }
        let trimmed = cfg.endpoint.trim_end_matches('/');
        let (root, says_v1) = match trimmed.strip_suffix("/v1") {
            Some(r) => (r.to_string(), true),
            None => (trimmed.to_string(), false),
        };
        // Local model servers are reached directly: a desktop's HTTP_PROXY must not swallow
        // requests to 127.0.0.1.
        let http = reqwest::Client::builder()
            .connect_timeout(cfg.timeouts.connect())
            // An idle keep-alive connection is dropped before a server closes it (llama-server
            // after 5 s), so no request is written to a connection already closed.
            .pool_idle_timeout(super::http::POOL_IDLE)
            .no_proxy()
            .build()
            .map_err(|e| bad(e.to_string()))?;
        let api = match cfg.api {
            Some(k) => OnceCell::new_with(Some(k)),
            None if says_v1 => OnceCell::new_with(Some(ApiKind::OpenAi)),
            None => OnceCell::new(),
        };
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                root,
                says_v1,
                api,
                ratio: std::sync::Mutex::new(budget::Ratio::new(cfg.tokens_per_char)),
                judge_ratio: std::sync::Mutex::new(budget::Ratio::new(cfg.tokens_per_char)),
                server_ctx: std::sync::atomic::AtomicU32::new(u32::MAX),
                tokenizer_tried: std::sync::atomic::AtomicBool::new(false),
                facts: OnceCell::new(),
                keep_alive: cfg.keep_alive(),
                load: std::sync::Mutex::new(Default::default()),
                cfg,
            }),
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.inner.cfg
    }

    /// The learned (or first-guess) prompt tokens per character.
    pub fn ratio(&self) -> budget::Ratio {
        self.inner
            .ratio
            .lock()
            .map(|r| *r)
            .unwrap_or(budget::Ratio::new(1.0))
    }

    /// The ratio learned from judge (uncapped) calls; never used for the lines' budget.
    pub fn judge_ratio(&self) -> budget::Ratio {
        self.inner
            .judge_ratio
            .lock()
            .map(|r| *r)
            .unwrap_or(budget::Ratio::new(1.0))
    }

    /// A server counted `tokens` for a prompt of `chars` characters (learned as is: for
    /// counts that cannot have been cut, e.g. a refusal's; replies go through `guard.rs`).
    pub fn learn(&self, chars: usize, tokens: u32) {
        if let Ok(mut r) = self.inner.ratio.lock() {
            r.observe(chars, tokens);
        }
    }

    /// The server said its context is `tokens` (a refusal): budgets use it from now on.
    pub fn learn_context(&self, tokens: u32) {
        self.inner
            .server_ctx
            .fetch_min(tokens, std::sync::atomic::Ordering::Relaxed);
    }

    /// The context prompts are budgeted against: num_ctx, or less when the server said so.
    pub fn context_tokens(&self) -> u32 {
        let told = self
            .inner
            .server_ctx
            .load(std::sync::atomic::Ordering::Relaxed);
        self.inner.cfg.num_ctx.min(told)
    }

    /// How many prompt characters fit the context (context − max_tokens − margin) at the
    /// learned ratio.
    pub fn prompt_budget_chars(&self) -> usize {
        budget::budget_chars(
            self.ratio(),
            self.context_tokens(),
            self.inner.cfg.max_tokens,
        )
    }

    /// The API in use, if configured or already detected.
    pub fn api(&self) -> Option<ApiKind> {
        self.inner.api.get().copied()
    }

    pub(super) fn url(&self, kind: ApiKind, path: &str) -> String {
        match kind {
            ApiKind::Ollama => format!("{}{path}", self.inner.root),
            ApiKind::OpenAi => format!("{}/v1{path}", self.inner.root),
        }
    }

    pub(super) fn target(&self, kind: ApiKind, path: &str, model: &str) -> Target {
        Target {
            url: self.url(kind, path),
            model: model.to_string(),
            api: kind,
        }
    }

    pub(super) fn connect_timeout(&self) -> Duration {
        self.inner.cfg.timeouts.connect()
    }

    /// Streams a reply, calling `on_token` with each text delta (whole characters only) as it
    /// arrives. Seed 003 §4 (`llm::policy`): a retryable failure before the stream starts is
    /// retried once; a stream that still fails at its start, or fails midway, is replaced by one
    /// non-streamed call (`fell_back`, `fallback_reason`; `on_token` is not called for its
    /// text — `Completion.text` is authoritative), which is not retried.
    pub async fn stream_chat(
        &self,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, LlmError> {
        self.stream_chat_observed(req, &mut |_, _| {}, on_token)
            .await
    }

    /// [`Client::stream_chat`] that shows `on_sent` each request body as it goes over the
    /// wire (its URL and the JSON exactly as sent: messages after the system-role policy,
    /// every option): the stream's, and the fallback's when there is one.
    ///
    /// A server that refused or dropped the connection before any text arrived is waited for
    /// (`timeouts.restart_ms`: a restart), the model loaded again, and the request sent again.
    pub async fn stream_chat_observed(
        &self,
        req: &ChatRequest,
        on_sent: &mut (dyn FnMut(&str, &serde_json::Value) + Send),
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, LlmError> {
        let mut streamed = false;
        let mut seen = |t: &str| {
            streamed = true;
            on_token(t);
        };
        let first = self.stream_chat_once(req, on_sent, &mut seen).await;
        match first {
            Err(e) if self.restarting(&e) && !streamed => {
                self.wait_for_server(self.api().unwrap_or(ApiKind::Ollama))
                    .await?;
                self.stream_chat_once(req, on_sent, on_token).await
            }
            other => other,
        }
    }

    async fn stream_chat_once(
        &self,
        req: &ChatRequest,
        on_sent: &mut (dyn FnMut(&str, &serde_json::Value) + Send),
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, LlmError> {
        let kind = self.prepare().await?;
        let called = Instant::now();
        let mut first_token = None;
        let (error, retries) = match self
            .stream_once(req, kind, called, &mut first_token, on_sent, on_token)
            .await
        {
            Ok(c) => return Ok(c),
            Err(failed) => failed,
        };
        if !policy::falls_back(&error) {
            return Err(error);
        }
        let mut c = self.chat_once(req, kind, on_sent).await?;
        c.fell_back = true;
        c.fallback_reason = Some(error.to_string());
        c.retries += retries;
        c.first_token = first_token;
        c.elapsed = called.elapsed();
        Ok(c)
    }

    /// One streamed request (its start retried once). On failure: the error and the retries.
    async fn stream_once(
        &self,
        req: &ChatRequest,
        kind: ApiKind,
        called: Instant,
        first_token: &mut Option<Duration>,
        on_sent: &mut (dyn FnMut(&str, &serde_json::Value) + Send),
        on_token: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Completion, (LlmError, u32)> {
        let cfg = &self.inner.cfg;
        let proto = protocol(kind);
        let messages = prepare_messages(&req.messages, self.system_role(kind));
        let body = proto.chat_body(&self.resolved(kind, req, &messages, true));
        let target = self.target(kind, proto.chat_path(), &cfg.model);
        let first_limit = cfg.timeouts.first_token();
        on_sent(&target.url, &body);
        let sent = http::send(
            &self.inner.http,
            &target,
            Some(&body),
            (TimeoutPhase::FirstToken, first_limit),
            self.connect_timeout(),
            Some(cfg.retry_backoff()),
        )
        .await;
        let (resp, attempt_started, retries) = match sent {
            Ok(ok) => ok,
            Err(e) => {
                let retried = u32::from(policy::retried(&e));
                return Err((self.explain(e).await, retried));
            }
        };
        let mut on_delta = |t: &str| {
            if first_token.is_none() {
                *first_token = Some(called.elapsed());
            }
            on_token(t);
        };
        let mut dec = StreamDecoder::new(proto, req.cap.then_some(cfg.max_chars));
        let mut bytes = resp.bytes_stream();
        let first_deadline = attempt_started + first_limit;
        // Any bytes at all (a role chunk, a keep-alive comment) show the server is alive: from
        // the first one on, only silence longer than the idle limit ends the stream.
        let mut got_bytes = false;
        // Bounded whatever the server does: the whole stream within the first-token limit
        // plus request_ms, and within MAX_RESPONSE_BYTES.
        let whole = first_limit + cfg.timeouts.request();
        let (whole_deadline, cap) = (attempt_started + whole, crate::limits::MAX_RESPONSE_BYTES);
        let mut read = 0usize;
        let outcome = loop {
            let (phase, limit, wait) = if got_bytes {
                let left = whole_deadline.saturating_duration_since(Instant::now());
                match cfg.timeouts.idle() {
                    idle if idle <= left => (TimeoutPhase::Idle, idle, idle),
                    _ => (TimeoutPhase::Response, whole, left),
                }
            } else {
                let left = first_deadline.saturating_duration_since(Instant::now());
                (TimeoutPhase::FirstToken, first_limit, left)
            };
            let fed = match tokio::time::timeout(wait, bytes.next()).await {
                Err(_) => break Err(target.timeout(phase, limit)),
                Ok(Some(Err(e))) => break Err(target.body_error(&e)),
                Ok(Some(Ok(chunk))) => {
                    got_bytes |= !chunk.is_empty();
                    read += chunk.len();
                    if read > cap {
                        break Err(target.too_large(cap));
                    }
                    dec.feed(&chunk, &mut on_delta)
                }
                Ok(None) => match dec.end(&mut on_delta) {
                    Ok(Step::More) => {
                        break Err(target
                            .interrupted("the connection closed before the end of the stream"));
                    }
                    other => other,
                },
            };
            match fed {
                Ok(Step::More) => {}
                Ok(step) => break Ok(step),
                Err(e) => break Err(line_error(&target, e)),
            }
        };
        // Dropping the body stream closes the connection, which tells the server to stop.
        drop(bytes);
        let step = outcome.map_err(|e| (e, retries))?;
        let capped = step == Step::Capped;
        let finish = if capped {
            Finish::Capped
        } else {
            dec.finish().unwrap_or(Finish::Stop)
        };
        let (tokens, prompt_tokens) = (dec.tokens(), dec.prompt_tokens());
        let chars = budget::chars_of(&messages);
        let context = self.check_counts(kind, req.cap, chars, prompt_tokens, tokens);
        self.touch();
        let raw = dec.into_raw();
        Ok(Completion {
            text: final_text(&raw, capped, cfg),
            raw,
            finish,
            tokens,
            first_token: *first_token,
            elapsed: called.elapsed(),
            fell_back: false,
            fallback_reason: None,
            prompt_tokens,
            retries,
            context,
        })
    }

    /// One non-streamed call (judge calls, or when streaming is not wanted). Rows 1–2 of the
    /// table: a retryable failure of the whole call (sending, reading or parsing) is retried
    /// once after the backoff.
    /// A server that went away is waited for as in [`Client::stream_chat_observed`].
    pub async fn chat(&self, req: &ChatRequest) -> Result<Completion, LlmError> {
        match self.chat_retried(req).await {
            Err(e) if self.restarting(&e) => {
                self.wait_for_server(self.api().unwrap_or(ApiKind::Ollama))
                    .await?;
                self.chat_retried(req).await
            }
            other => other,
        }
    }

    async fn chat_retried(&self, req: &ChatRequest) -> Result<Completion, LlmError> {
        let kind = self.prepare().await?;
        let mut quiet = |_: &str, _: &serde_json::Value| {};
        match self.chat_once(req, kind, &mut quiet).await {
            Err(e) if policy::retried(&e) => {
                tokio::time::sleep(self.inner.cfg.retry_backoff()).await;
                let mut c = self.chat_once(req, kind, &mut quiet).await?;
                c.retries += 1;
                Ok(c)
            }
            other => other,
        }
    }

    /// One non-streamed request, not retried (row 4: the stream's fallback call).
    async fn chat_once(
        &self,
        req: &ChatRequest,
        kind: ApiKind,
        on_sent: &mut (dyn FnMut(&str, &serde_json::Value) + Send),
    ) -> Result<Completion, LlmError> {
        let called = Instant::now();
        let cfg = &self.inner.cfg;
        let proto = protocol(kind);
        let messages = prepare_messages(&req.messages, self.system_role(kind));
        let body = proto.chat_body(&self.resolved(kind, req, &messages, false));
        let target = self.target(kind, proto.chat_path(), &cfg.model);
        on_sent(&target.url, &body);
        let text = self.post_whole(&target, &body, false).await?;
        let reply = proto
            .parse_reply(&text)
            .map_err(|e| body_error(&target, e, &text))?;
        let context = self.check_counts(
            kind,
            req.cap,
            budget::chars_of(&messages),
            reply.prompt_tokens,
            reply.tokens.unwrap_or(0),
        );
        self.touch();
        let capped = req.cap && reply.text.chars().count() > cfg.max_chars;
        Ok(Completion {
            text: final_text(&reply.text, capped, cfg),
            finish: if capped { Finish::Capped } else { reply.finish },
            tokens: reply.tokens.unwrap_or(0),
            raw: reply.text,
            first_token: None,
            elapsed: called.elapsed(),
            fell_back: false,
            fallback_reason: None,
            prompt_tokens: reply.prompt_tokens,
            retries: 0,
            context,
        })
    }

    /// POSTs `body` and reads the whole reply within the request timeout; a retryable failure
    /// before the answer is retried once when `retry` is set.
    async fn post_whole(
        &self,
        target: &Target,
        body: &serde_json::Value,
        retry: bool,
    ) -> Result<String, LlmError> {
        let cfg = &self.inner.cfg;
        let limit = cfg.timeouts.request();
        let sent = http::send(
            &self.inner.http,
            target,
            Some(body),
            (TimeoutPhase::Response, limit),
            self.connect_timeout(),
            retry.then(|| cfg.retry_backoff()),
        )
        .await;
        let (resp, started, _) = match sent {
            Ok(ok) => ok,
            Err(e) => return Err(self.explain(e).await),
        };
        http::read_body(resp, target, started + limit, limit).await
    }

    /// One embedding vector per input, in input order.
    pub async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let kind = self.resolve_api().await?;
        let cfg = &self.inner.cfg;
        let proto = protocol(kind);
        let target = self.target(kind, proto.embed_path(), cfg.embed_model());
        let keep = super::protocol::EmbedKeep {
            keep_alive: &self.inner.keep_alive,
            num_ctx: (cfg.embed_model() == cfg.model).then_some(cfg.num_ctx),
        };
        let body = proto.embed_body_with(cfg.embed_model(), inputs, &keep);
        let text = self.post_whole(&target, &body, true).await?;
        let vectors = proto
            .parse_embeddings(&text)
            .map_err(|e| body_error(&target, e, &text))?;
        if vectors.len() != inputs.len() {
            return Err(target.malformed("one embedding per input", &text));
        }
        Ok(vectors)
    }
}

fn final_text(raw: &str, capped: bool, cfg: &LlmConfig) -> String {
    if capped {
        cap_text(raw, cfg.max_chars, &cfg.trim_chars)
            .trim()
            .to_string()
    } else {
        raw.trim().to_string()
    }
}

fn line_error(target: &Target, e: StreamLineError) -> LlmError {
    match e.error {
        LineError::Server(message) => target.stream_error(message),
        LineError::Malformed { expected } => target.malformed(expected, &e.line),
    }
}

/// A whole (non-streamed) body the protocol could not read.
fn body_error(target: &Target, error: LineError, text: &str) -> LlmError {
    line_error(
        target,
        StreamLineError {
            error,
            line: text.to_string(),
        },
    )
}
