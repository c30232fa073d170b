//! A hand-written HTTP/1.1 endpoint for the LLM client tests: it records each request and
//! answers with scripted bytes (chunked, connection-close or content-length bodies), pausing
//! and flushing between parts so they reach the client as separate network reads.
#![allow(dead_code)]

pub mod ollama;
pub mod ollama_prompt;
mod wire;
#[allow(unused_imports)]
pub use wire::*;

/// "0.13.5" → (0, 13, 5).
pub fn ollama_version(v: &str) -> (u32, u32, u32) {
    let mut it = v.split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    )
}

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kakeai::llm::{ApiKind, LlmConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Debug)]
pub enum Part {
    Bytes(Vec<u8>),
    Sleep(Duration),
    /// Drop the connection here, without finishing the body.
    Cut,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Framing {
    Chunked,
    /// No length: the body ends when the server closes the connection.
    Close,
    Length,
}

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub framing: Framing,
    /// Waited before the status line (a server still processing the prompt).
    pub delay: Duration,
    pub parts: Vec<Part>,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply {
            status,
            content_type: "application/json; charset=utf-8",
            framing: Framing::Length,
            delay: Duration::ZERO,
            parts: vec![Part::Bytes(body.as_bytes().to_vec())],
        }
    }

    pub fn ndjson(parts: Vec<Part>) -> Reply {
        Reply {
            status: 200,
            content_type: "application/x-ndjson",
            framing: Framing::Chunked,
            delay: Duration::ZERO,
            parts,
        }
    }

    pub fn sse(parts: Vec<Part>) -> Reply {
        Reply {
            status: 200,
            content_type: "text/event-stream",
            framing: Framing::Chunked,
            delay: Duration::ZERO,
            parts,
        }
    }

    /// Accepts the request, then closes the connection without a status line.
    pub fn hang_up() -> Reply {
        Reply {
            status: 0,
            content_type: "",
            framing: Framing::Close,
            delay: Duration::ZERO,
            parts: Vec::new(),
        }
    }

    pub fn framing(mut self, f: Framing) -> Reply {
        self.framing = f;
        self
    }

    pub fn delay(mut self, d: Duration) -> Reply {
        self.delay = d;
        self
    }
}

/// Each string becomes one network write.
pub fn parts<S: AsRef<str>>(pieces: &[S]) -> Vec<Part> {
    pieces
        .iter()
        .map(|p| Part::Bytes(p.as_ref().as_bytes().to_vec()))
        .collect()
}

/// Splits `text` into writes at the given byte offsets (which may fall inside a character).
pub fn split_at_bytes(text: &str, cuts: &[usize]) -> Vec<Part> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    for &c in cuts {
        out.push(Part::Bytes(b[from..c].to_vec()));
        from = c;
    }
    out.push(Part::Bytes(b[from..].to_vec()));
    out
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub body: String,
}

impl Recorded {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

type Handler = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

pub struct FakeServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    /// Set when a write failed because the client had closed the connection.
    pub client_gone: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeServer {
    /// Answers the n-th request with `replies[n]`, and with HTTP 500 once they run out.
    pub async fn scripted(replies: Vec<Reply>) -> FakeServer {
        FakeServer::with(move |_, n| {
            replies.get(n).cloned().unwrap_or_else(|| {
                Reply::json(
                    500,
                    r#"{"error":"the fake server ran out of scripted replies"}"#,
                )
            })
        })
        .await
    }

    pub async fn with(
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let client_gone = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let count = Arc::new(AtomicUsize::new(0));
        let (reqs, gone) = (requests.clone(), client_gone.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (reqs, gone, handler, count) =
                    (reqs.clone(), gone.clone(), handler.clone(), count.clone());
                tokio::spawn(async move {
                    serve(sock, reqs, gone, handler, count).await;
                });
            }
        });
        FakeServer {
            url,
            requests,
            client_gone,
            task,
        }
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn paths(&self) -> Vec<String> {
        self.recorded()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    /// Waits (up to 5 s) until the client has been seen closing the connection.
    pub async fn wait_client_gone(&self) -> bool {
        for _ in 0..250 {
            if self.client_gone.load(Ordering::SeqCst) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

async fn read_request(sock: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut first = head.lines().next()?.split_whitespace();
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    Some(Recorded {
        method,
        path,
        body: String::from_utf8_lossy(&buf[head_end..head_end + len]).to_string(),
    })
}

async fn serve(
    mut sock: TcpStream,
    reqs: Arc<Mutex<Vec<Recorded>>>,
    gone: Arc<AtomicBool>,
    handler: Arc<Handler>,
    count: Arc<AtomicUsize>,
) {
    let _ = sock.set_nodelay(true);
    let Some(req) = read_request(&mut sock).await else {
        return;
    };
    // What kakeai asks before a first prompt (llm::facts, llm::load) is answered here and not
    // counted: a scripted server plays a server whose /api/version and /api/show are not
    // there (gin's NoRoute 404), so nothing about its template or flags is known; a preload
    // (/api/chat with no messages) is answered as Ollama does (routes.go:2645-2653).
    if let Some(reply) = aux_reply(&req) {
        let _ = write_plain(&mut sock, &reply).await;
        return;
    }
    let n = count.fetch_add(1, Ordering::SeqCst);
    reqs.lock().unwrap().push(req.clone());
    let reply = handler(&req, n);
    tokio::time::sleep(reply.delay).await;
    if reply.status == 0 {
        let _ = sock.shutdown().await;
        return;
    }
    let reason = match reply.status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nConnection: close\r\n",
        reply.status, reply.content_type
    );
    match reply.framing {
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        Framing::Close => {}
        Framing::Length => {
            let len: usize = reply
                .parts
                .iter()
                .map(|p| match p {
                    Part::Bytes(b) => b.len(),
                    _ => 0,
                })
                .sum();
            head.push_str(&format!("Content-Length: {len}\r\n"));
        }
    }
    head.push_str("\r\n");
    if write(&mut sock, head.as_bytes(), &gone).await.is_err() {
        return;
    }
    for part in &reply.parts {
        match part {
            Part::Sleep(d) => tokio::time::sleep(*d).await,
            Part::Cut => return,
            Part::Bytes(b) => {
                let framed = if reply.framing == Framing::Chunked {
                    let mut f = format!("{:x}\r\n", b.len()).into_bytes();
                    f.extend_from_slice(b);
                    f.extend_from_slice(b"\r\n");
                    f
                } else {
                    b.clone()
                };
                if write(&mut sock, &framed, &gone).await.is_err() {
                    return;
                }
                // Separate network reads on the client side.
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
        }
    }
    if reply.framing == Framing::Chunked {
        let _ = write(&mut sock, b"0\r\n\r\n", &gone).await;
    }
    let _ = sock.shutdown().await;
}

fn aux_reply(req: &Recorded) -> Option<(u16, &'static str, String)> {
    let preload = req.path == "/api/chat"
        && serde_json::from_str::<serde_json::Value>(&req.body)
            .ok()
            .and_then(|b| {
                b.get("messages")
                    .and_then(|m| m.as_array())
                    .map(Vec::is_empty)
            })
            == Some(true);
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/api/version") | ("POST", "/api/show") => {
            Some((404, "text/plain", "404 page not found".into()))
        }
        _ if preload => {
            let model = serde_json::from_str::<serde_json::Value>(&req.body)
                .ok()
                .and_then(|b| b.get("model").and_then(|m| m.as_str()).map(str::to_string))
                .unwrap_or_default();
            let line = ollama_prompt::chunk(&model, "", Some(("load", [0; 6])));
            Some((200, "application/json; charset=utf-8", line))
        }
        _ => None,
    }
}

async fn write_plain(
    sock: &mut TcpStream,
    (status, ctype, body): &(u16, &'static str, String),
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.shutdown().await
}

async fn write(sock: &mut TcpStream, bytes: &[u8], gone: &AtomicBool) -> std::io::Result<()> {
    let r = async {
        sock.write_all(bytes).await?;
        sock.flush().await
    }
    .await;
    if r.is_err() {
        gone.store(true, Ordering::SeqCst);
    }
    r
}

/// Client settings for tests: the fake's URL, short timeouts and a short retry pause.
pub fn config(url: &str, api: Option<ApiKind>) -> LlmConfig {
    let mut c = LlmConfig {
        endpoint: url.to_string(),
        api,
        ..LlmConfig::default()
    };
    c.timeouts.connect_ms = 1000;
    c.timeouts.first_token_ms = 2000;
    c.timeouts.idle_ms = 200;
    c.timeouts.request_ms = 2000;
    c.retry_backoff_ms = 10;
    c
}

/// kakeai's PII second opinion (its system prompt is kakeai's), answered as a model that finds
/// nothing more: the seed's three lines with the text as it was shown. None for any other
/// request.
pub fn pii_nothing(req: &Recorded) -> Option<Reply> {
    // The system prompt may arrive folded into the user turn (models without a system role).
    let head = kakeai::safety::pii::LLM_SYSTEM_PROMPT.lines().next()?;
    let v = req.json();
    let all: Vec<&str> = v["messages"]
        .as_array()?
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    let joined = all.join("\n");
    if !joined.contains(head) {
        return None;
    }
    let marker = kakeai::safety::pii::llm_user_prompt("");
    let text = joined
        .rsplit_once(marker.as_str())
        .map(|(_, t)| t)
        .unwrap_or_default();
    let reply = format!("PII_DETECTED: false\nMASKED_TEXT: {text}\nDETECTED_ITEMS: なし");
    Some(Reply::json(200, &openai_reply("tiny-ja", &reply, 12)))
}

/// Is this kakeai's leak judge asking (its system prompt is kakeai's)?
pub fn is_leak_judge(req: &Recorded) -> bool {
    let head = kakeai::vault::judge::SYSTEM;
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
        return false;
    };
    v["messages"].as_array().is_some_and(|m| {
        m.iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains(head)))
    })
}

/// The leak judge answered as a model that sees no leak: "いいえ" (OpenAI shape). None for any
/// other request.
pub fn leak_judge_no(req: &Recorded) -> Option<Reply> {
    is_leak_judge(req).then(|| Reply::json(200, &openai_reply("tiny-ja", "いいえ", 2)))
}
