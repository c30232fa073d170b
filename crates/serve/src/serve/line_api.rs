//! The LINE Messaging API client: Reply (`POST /v2/bot/message/reply`) and Push
//! (`POST /v2/bot/message/push`, with `X-Line-Retry-Key` so a retried push is delivered once).
//! 429 waits Retry-After (capped) or backs off; 5xx backs off; other errors are final. The
//! access token goes only into the Authorization header; errors carry LINE's message, never it.

use std::time::Duration;

use serde_json::json;

use super::config::{LineApiConfig, Secret};

/// The most of a LINE API answer read: its error bodies are small JSON objects.
const LINE_BODY_CAP: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum SendError {
    /// 400 "Invalid reply token": the token expired or was used; push instead.
    InvalidReplyToken,
    /// Any other final answer (status, LINE's message) or a network failure (status 0).
    Failed { status: u16, message: String },
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::InvalidReplyToken => f.write_str("LINE: Invalid reply token"),
            SendError::Failed { status, message } => write!(f, "LINE: HTTP {status}: {message}"),
        }
    }
}

#[derive(Clone)]
pub struct LineApi {
    http: reqwest::Client,
    base: String,
    token: Secret,
    cfg: LineApiConfig,
}

impl LineApi {
    pub fn new(base: &str, token: Secret, cfg: LineApiConfig) -> Result<LineApi, String> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(cfg.timeout_seconds))
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        Ok(LineApi {
            http,
            base: base.trim_end_matches('/').to_string(),
            token,
            cfg,
        })
    }

    /// Replies with one text message (quoting the user's message when a quote token is given).
    pub async fn reply(
        &self,
        reply_token: &str,
        text: &str,
        quote: Option<&str>,
    ) -> Result<(), SendError> {
        let body = json!({"replyToken": reply_token, "messages": [message(text, quote)]});
        self.send("/v2/bot/message/reply", &body, None).await
    }

    /// Pushes one text message to a user, group or room with `retry_key` (a UUID; the same
    /// for every attempt, and — derived from the message — after a restart too).
    pub async fn push(
        &self,
        to: &str,
        text: &str,
        quote: Option<&str>,
        retry_key: &str,
    ) -> Result<(), SendError> {
        let body = json!({"to": to, "messages": [message(text, quote)]});
        self.send("/v2/bot/message/push", &body, Some(retry_key))
            .await
    }

    async fn send(
        &self,
        path: &str,
        body: &serde_json::Value,
        retry_key: Option<&str>,
    ) -> Result<(), SendError> {
        let url = format!("{}{path}", self.base);
        let mut attempt = 0u32;
        loop {
            let mut req = self
                .http
                .post(&url)
                .bearer_auth(self.token.expose())
                .json(body);
            if let Some(k) = retry_key {
                req = req.header("X-Line-Retry-Key", k);
            }
            let (status, wait, message) = match req.send().await {
                Ok(r) => {
                    let status = r.status().as_u16();
                    let wait = retry_after(r.headers());
                    // LINE answers errors in a few hundred bytes; a body past the cap is cut
                    // there (its status decides; the message is only for the log).
                    let (bytes, _cut) = crate::llm::read_capped(r, LINE_BODY_CAP)
                        .await
                        .unwrap_or_default();
                    (status, wait, line_message(&String::from_utf8_lossy(&bytes)))
                }
                Err(e) => (0, None, without_url(&e)),
            };
            match status {
                200..=299 => return Ok(()),
                // A push LINE already accepted under this retry key — in this run or before a
                // restart (documented for X-Line-Retry-Key: "subsequent retried requests are
                // blocked and you'll get the status code 409").
                409 if retry_key.is_some() => return Ok(()),
                400 if message.contains("Invalid reply token") => {
                    return Err(SendError::InvalidReplyToken);
                }
                0 | 429 | 500..=599 if attempt < self.cfg.retries => {
                    attempt += 1;
                    let backoff =
                        Duration::from_millis(self.cfg.backoff_ms * 2u64.pow(attempt - 1));
                    let cap = Duration::from_secs(self.cfg.max_retry_after_seconds);
                    tokio::time::sleep(wait.map_or(backoff, |w| w.min(cap))).await;
                }
                _ => return Err(SendError::Failed { status, message }),
            }
        }
    }
}

fn message(text: &str, quote: Option<&str>) -> serde_json::Value {
    match quote {
        Some(q) => json!({"type": "text", "text": text, "quoteToken": q}),
        None => json!({"type": "text", "text": text}),
    }
}

/// Retry-After in seconds (LINE and HTTP's delta-seconds form).
fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = h.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    v.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// LINE's error body is `{"message": "...", "details": [...]}`.
fn line_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.chars().take(200).collect())
}

fn without_url(e: &reqwest::Error) -> String {
    e.without_url_ref().to_string()
}

trait WithoutUrl {
    fn without_url_ref(&self) -> String;
}

impl WithoutUrl for reqwest::Error {
    fn without_url_ref(&self) -> String {
        let kind = if self.is_timeout() {
            "timed out"
        } else if self.is_connect() {
            "could not connect"
        } else {
            "request failed"
        };
        kind.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A LINE API that answers 500 with an endless body: the client reads at most the cap and
    /// gives up the connection, so the server manages to write only a little more than the cap
    /// (socket buffers) — never the gigabytes an unbounded read would take in the same time.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_endless_error_body_is_read_only_up_to_the_cap() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let written = Arc::new(AtomicU64::new(0));
        let w = written.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let w = w.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let _ = s.read(&mut buf).await;
                    let head = "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                    if s.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    let chunk = format!("{:x}\r\n{}\r\n", 65536, "x".repeat(65536));
                    while s.write_all(chunk.as_bytes()).await.is_ok() {
                        w.fetch_add(65536, Ordering::Relaxed);
                    }
                });
            }
        });
        let cfg = LineApiConfig {
            retries: 0,
            backoff_ms: 1,
            max_retry_after_seconds: 1,
            timeout_seconds: 20,
        };
        let api = LineApi::new(&format!("http://{addr}"), Secret::new("t"), cfg).unwrap();
        let got = api.reply("tok", "こんにちは", None).await;
        assert!(
            matches!(got, Err(SendError::Failed { status: 500, .. })),
            "{got:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        let n = written.load(Ordering::Relaxed);
        assert!(n < 64 * 1024 * 1024, "the server wrote {n} bytes");
    }
}
