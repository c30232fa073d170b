//! Sending one request with the retry policy, and turning transport failures and HTTP error
//! statuses into typed `LlmError`s.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::ApiKind;
use super::error::{LlmError, TimeoutPhase, says_model_missing, server_message, truncate_chars};

/// Where a request goes and for which model, carried into every error.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    pub model: String,
    pub api: ApiKind,
}

impl Target {
    pub fn timeout(&self, phase: TimeoutPhase, after: Duration) -> LlmError {
        LlmError::Timeout {
            url: self.url.clone(),
            model: self.model.clone(),
            phase,
            after,
        }
    }

    pub fn interrupted(&self, detail: impl Into<String>) -> LlmError {
        LlmError::Interrupted {
            url: self.url.clone(),
            model: self.model.clone(),
            detail: detail.into(),
        }
    }

    pub fn malformed(&self, expected: &'static str, got: &str) -> LlmError {
        LlmError::Malformed {
            url: self.url.clone(),
            model: self.model.clone(),
            expected,
            got: truncate_chars(got, 120),
        }
    }

    pub fn stream_error(&self, message: String) -> LlmError {
        LlmError::StreamError {
            url: self.url.clone(),
            model: self.model.clone(),
            message,
        }
    }

    /// An HTTP error status with the server's body.
    pub fn status(&self, status: u16, body: &str) -> LlmError {
        let message = server_message(body);
        if matches!(status, 400 | 404) && says_model_missing(&message) {
            return LlmError::ModelNotFound {
                url: self.url.clone(),
                model: self.model.clone(),
                api: self.api,
                available: Vec::new(),
            };
        }
        let (url, model) = (self.url.clone(), self.model.clone());
        if status >= 500 {
            LlmError::Server {
                status,
                url,
                model,
                message,
            }
        } else {
            LlmError::Rejected {
                status,
                url,
                model,
                message,
            }
        }
    }

    /// A body past `limit` bytes.
    pub fn too_large(&self, limit: usize) -> LlmError {
        LlmError::TooLarge {
            url: self.url.clone(),
            model: self.model.clone(),
            limit,
        }
    }

    /// A failure while reading a body whose status was already fine.
    pub fn body_error(&self, e: &reqwest::Error) -> LlmError {
        self.interrupted(innermost(e))
    }

    /// A reqwest failure before a response arrived.
    pub fn transport(&self, e: &reqwest::Error, connect_timeout: Duration) -> LlmError {
        let io_kind = io_kind(e);
        let detail = innermost(e);
        if e.is_connect() && e.is_timeout() {
            return self.timeout(TimeoutPhase::Connect, connect_timeout);
        }
        let kind = match io_kind {
            Some(std::io::ErrorKind::ConnectionRefused) => Some("connection refused"),
            Some(
                std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::BrokenPipe,
            ) => Some("connection reset"),
            _ if e.is_connect() => Some("could not connect"),
            // hyper: the server closed the connection before sending a response.
            _ if detail.contains("connection closed before message completed") => {
                Some("connection reset")
            }
            _ => None,
        };
        match kind {
            Some(kind) => LlmError::Connect {
                url: self.url.clone(),
                model: self.model.clone(),
                kind,
                detail,
            },
            None => self.interrupted(detail),
        }
    }
}

fn io_kind(e: &reqwest::Error) -> Option<std::io::ErrorKind> {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        src = s.source();
    }
    None
}

fn innermost(e: &reqwest::Error) -> String {
    let mut last: &(dyn std::error::Error + 'static) = e;
    while let Some(s) = last.source() {
        last = s;
    }
    last.to_string()
}

/// Sends a JSON POST (or a GET when `body` is `None`) and waits for a success status, retrying
/// once after `backoff` when the failure is transient. Returns the response, when the
/// successful attempt started, and how many retries it took.
pub async fn send(
    http: &reqwest::Client,
    target: &Target,
    body: Option<&Value>,
    limit: (TimeoutPhase, Duration),
    connect_timeout: Duration,
    retry: Option<Duration>,
) -> Result<(reqwest::Response, Instant, u32), LlmError> {
    let mut retries = 0;
    let mut resent_stale = 0;
    loop {
        let started = Instant::now();
        let result = send_once(http, target, body, limit, connect_timeout).await;
        match (result, retry) {
            (Ok(resp), _) => return Ok((resp, started, retries)),
            // A keep-alive connection the server closed as the request went out: nothing was
            // answered, so it is sent again at once (not the retry, no backoff). The pool may
            // hold several such connections (a probe ran beside the request): each failure
            // drops one, so a few resends reach a new connection. A server that keeps closing
            // is then a failure like any other.
            (Err(e), _) if resent_stale < STALE_RESENDS && is_stale(&e, &target.url, started) => {
                resent_stale += 1;
            }
            (Err(e), Some(backoff)) if retries == 0 && e.is_transient() => {
                retries += 1;
                tokio::time::sleep(backoff).await;
            }
            (Err(e), _) => return Err(e),
        }
    }
}

/// At most this many immediate resends after stale keep-alive connections, per request.
const STALE_RESENDS: u32 = 4;

/// How soon after sending a closed connection counts as a stale keep-alive one: a server that
/// read the request and then failed takes longer than this to close it. A second, not less: on a
/// loaded machine the first request's own set-up took a few hundred milliseconds of it.
const STALE_WITHIN: Duration = Duration::from_secs(1);

/// How long the client keeps an idle connection (`pool_idle_timeout` in `Client::new`): a
/// connection can be reused only if its origin answered within this.
pub(super) const POOL_IDLE: Duration = Duration::from_secs(3);

type Answers = std::sync::Mutex<std::collections::HashMap<String, Instant>>;

/// When each origin (scheme, host, port) last answered (any status): the pool may hold a
/// connection to it.
fn last_answer() -> &'static Answers {
    static LAST: std::sync::OnceLock<Answers> = std::sync::OnceLock::new();
    LAST.get_or_init(Default::default)
}

fn origin(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(|_| url.to_string(), |u| u.origin().ascii_serialization())
}

/// Whether the server ends the connection after this answer (nothing to reuse).
fn resp_closes(r: &reqwest::Response) -> bool {
    let says_close = r
        .headers()
        .get(reqwest::header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("close"));
    says_close || r.version() < reqwest::Version::HTTP_11
}

fn answered(url: &str) {
    if let Ok(mut m) = last_answer().lock() {
        m.insert(origin(url), Instant::now());
    }
}

/// Whether `e` is a pooled connection closed under the request: reset or closed before any
/// answer within [`STALE_WITHIN`] of sending, on an origin that answered recently enough for a
/// connection to it to be in the pool. A fresh connection hung up is a failure (the retry's to
/// handle), not a stale one.
fn is_stale(e: &LlmError, url: &str, started: Instant) -> bool {
    let pooled = last_answer()
        .lock()
        .ok()
        .and_then(|m| m.get(&origin(url)).copied())
        .is_some_and(|t| started.duration_since(t) < POOL_IDLE);
    pooled
        && started.elapsed() < STALE_WITHIN
        && matches!(
            e,
            LlmError::Connect {
                kind: "connection reset",
                ..
            }
        )
}

async fn send_once(
    http: &reqwest::Client,
    target: &Target,
    body: Option<&Value>,
    (phase, limit): (TimeoutPhase, Duration),
    connect_timeout: Duration,
) -> Result<reqwest::Response, LlmError> {
    let deadline = tokio::time::Instant::now() + limit;
    log_request(target, body);
    let req = match body {
        Some(b) => http.post(&target.url).json(b),
        None => http.get(&target.url),
    };
    let resp = match tokio::time::timeout_at(deadline, req.send()).await {
        Err(_) => return Err(target.timeout(phase, limit)),
        Ok(Err(e)) => return Err(target.transport(&e, connect_timeout)),
        Ok(Ok(r)) => r,
    };
    // Any answer, an error status too, leaves its connection in the pool — unless the server
    // closes it (`Connection: close`, or HTTP/1.0).
    if !resp_closes(&resp) {
        answered(&target.url);
    }
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    // Its head only: the status alone still explains the failure.
    let cap = crate::limits::MAX_ERROR_BODY_BYTES;
    let text = match tokio::time::timeout_at(deadline, read_capped(resp, cap)).await {
        Ok(Ok((b, _))) => String::from_utf8_lossy(&b).into_owned(),
        Ok(Err(_)) | Err(_) => String::new(),
    };
    Err(target.status(status.as_u16(), &text))
}

/// Up to `cap` bytes of a body, and whether there was more (the rest is not read).
pub async fn read_capped(
    mut resp: reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut out = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if out.len() + chunk.len() > cap {
            out.extend_from_slice(&chunk[..cap - out.len()]);
            return Ok((out, true));
        }
        out.extend_from_slice(&chunk);
    }
    Ok((out, false))
}

/// Reads a whole body within `deadline` and `crate::limits::MAX_RESPONSE_BYTES`.
pub async fn read_body(
    resp: reqwest::Response,
    target: &Target,
    deadline: Instant,
    limit: Duration,
) -> Result<String, LlmError> {
    read_body_capped(
        resp,
        target,
        deadline,
        limit,
        crate::limits::MAX_RESPONSE_BYTES,
    )
    .await
}

/// [`read_body`] with its own size cap: a body past `cap` bytes is [`LlmError::TooLarge`]
/// (a declared length past it is refused before reading).
pub async fn read_body_capped(
    resp: reqwest::Response,
    target: &Target,
    deadline: Instant,
    limit: Duration,
    cap: usize,
) -> Result<String, LlmError> {
    if resp.content_length().is_some_and(|n| n > cap as u64) {
        return Err(target.too_large(cap));
    }
    let deadline = tokio::time::Instant::from_std(deadline);
    match tokio::time::timeout_at(deadline, read_capped(resp, cap)).await {
        Err(_) => Err(target.timeout(TimeoutPhase::Response, limit)),
        Ok(Err(e)) => Err(target.body_error(&e)),
        Ok(Ok((_, true))) => Err(target.too_large(cap)),
        Ok(Ok((b, false))) => Ok(String::from_utf8_lossy(&b).into_owned()),
    }
}

/// `KAKEAI_REQUEST_LOG=FILE`: every request's URL and JSON body is appended to FILE as one JSON
/// line, so the prompts actually sent can be read (issue 13 §5). Off when unset; a write
/// failure is reported once on stderr and never fails the request.
fn log_request(target: &Target, body: Option<&Value>) {
    static LOG: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let Some(path) = LOG.get_or_init(|| std::env::var_os("KAKEAI_REQUEST_LOG").map(Into::into))
    else {
        return;
    };
    let line = serde_json::json!({
        "at_ms": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
        "url": target.url,
        "body": body,
    });
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes()));
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if let Err(e) = written
        && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        crate::say!("kakeai: KAKEAI_REQUEST_LOG {}: {e}", path.display());
    }
}
