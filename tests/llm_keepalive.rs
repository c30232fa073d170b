//! A keep-alive connection the model server closes as the next request goes out (llama-server's
//! HTTP library closes a connection idle past its keep-alive timeout, and that close can cross
//! a request in flight; the server then never reads or answers it): the request is sent again at once on a new connection — not
//! after the retry's backoff, and not as a failure — and a server that closes every request is
//! still a failure after one resend.

mod llm_fake;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kakeai::llm::{ApiKind, ChatRequest, Client, Message};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const REPLY: &str = r#"{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"うん、いいね。"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}"#;

/// Reads one request (head and a Content-Length body); None when the client closed.
async fn read_request(sock: &mut TcpStream, buf: &mut Vec<u8>) -> Option<String> {
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
    buf.drain(..head_end + len);
    Some(head)
}

/// A keep-alive server: GETs get 404, POSTs the reply; `closes(n)` says whether the n-th POST
/// that arrives on a connection already used is answered by closing it instead.
async fn server(
    closes: impl Fn(usize) -> bool + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let closed = Arc::new(AtomicUsize::new(0));
    let (c, closes) = (closed.clone(), Arc::new(closes));
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let (c, closes) = (c.clone(), closes.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut served = 0;
                while let Some(head) = read_request(&mut sock, &mut buf).await {
                    let post = head.starts_with("POST");
                    if post && served > 0 && closes(c.load(Ordering::SeqCst)) {
                        c.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                    let (status, body) = if post {
                        ("200 OK", REPLY)
                    } else {
                        ("404 Not Found", "{}")
                    };
                    let out = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if sock.write_all(out.as_bytes()).await.is_err() {
                        return;
                    }
                    served += 1;
                }
            });
        }
    });
    (url, closed)
}

fn client(url: &str) -> Client {
    let mut cfg = llm_fake::config(url, Some(ApiKind::OpenAi));
    // The retry's pause is long: a resend that waited for it would be seen.
    cfg.retry_backoff_ms = 30_000;
    cfg.timeouts.request_ms = 5_000;
    Client::new(cfg).unwrap()
}

fn line(i: usize) -> ChatRequest {
    let mut r = ChatRequest::line(vec![Message::user(format!("{i}回目、おはよう"))]);
    r.cap = false;
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_under_a_request_is_resent_at_once() {
    // Every other request that reuses a connection finds it closed.
    let (url, closed) = server(|n| n < 3).await;
    let c = client(&url);
    for i in 0..6 {
        let got = tokio::time::timeout(Duration::from_secs(10), c.chat(&line(i))).await;
        let got = got.unwrap_or_else(|_| panic!("request {i} waited past 10 s"));
        assert_eq!(got.unwrap().text, "うん、いいね。", "request {i}");
    }
    assert!(
        closed.load(Ordering::SeqCst) >= 1,
        "the server never closed under a request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_closes_every_reused_request_still_answers_on_new_connections() {
    // Closing on every reuse: each resend goes out on a fresh connection, which answers.
    let (url, _) = server(|_| true).await;
    let c = client(&url);
    for i in 0..4 {
        let got = tokio::time::timeout(Duration::from_secs(10), c.chat(&line(i))).await;
        let got = got.unwrap_or_else(|_| panic!("request {i} waited past 10 s"));
        assert!(got.is_ok(), "request {i}: {got:?}");
    }
}
