//! A local stand-in for LINE's Messaging API (`/v2/bot/message/reply` and `/push`), on axum:
//! it records every request (path, Authorization, X-Line-Retry-Key, JSON body, the status it
//! got) and answers as LINE documents — 200 `{}`, 400 `{"message":"Invalid reply token"}`, 429
//! with Retry-After and `{"message":"The API rate limit has been exceeded. Try again later."}`,
//! 500 — per a script. LINE's API is not open source, so its documented behaviour is the
//! reference for two rules applied before the script, as LINE applies them:
//! - a reply token is single-use: once a reply with it was accepted, the next one gets 400
//!   "Invalid reply token" (https://developers.line.biz/en/reference/messaging-api/#send-reply-message:
//!   "Reply tokens can only be used once");
//! - a push whose `X-Line-Retry-Key` was accepted before gets 409 with
//!   `{"message":"The retry key is already accepted"}` and the `x-line-accepted-request-id`
//!   header, and is not delivered again
//!   (https://developers.line.biz/en/docs/messaging-api/retrying-api-request/: "Once the request
//!   is accepted, subsequent retried requests are blocked and you'll get the status code 409").
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

#[derive(Clone, Debug)]
pub struct Call {
    pub path: String,
    pub auth: String,
    pub retry_key: Option<String>,
    pub body: serde_json::Value,
    /// The status the fake answered.
    pub status: u16,
}

impl Call {
    /// LINE took it: the message reached the user.
    pub fn delivered(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn text(&self) -> String {
        self.body["messages"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    Ok,
    InvalidReplyToken,
    RateLimited { retry_after: u64 },
    ServerError,
}

type Script = dyn Fn(&Call, usize) -> Answer + Send + Sync;

#[derive(Clone)]
struct St {
    calls: Arc<Mutex<Vec<Call>>>,
    script: Arc<Script>,
}

pub struct FakeLine {
    pub url: String,
    calls: Arc<Mutex<Vec<Call>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeLine {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeLine {
    /// Every call answered 200 `{}`.
    pub async fn ok() -> FakeLine {
        FakeLine::with(|_, _| Answer::Ok).await
    }

    /// `script(call, n)`: n counts earlier calls to the same path.
    pub async fn with(script: impl Fn(&Call, usize) -> Answer + Send + Sync + 'static) -> FakeLine {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let st = St {
            calls: calls.clone(),
            script: Arc::new(script),
        };
        let app = Router::new()
            .route("/v2/bot/message/reply", post(handle))
            .route("/v2/bot/message/push", post(handle))
            .with_state(st);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeLine { url, calls, task }
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    pub fn on(&self, path_end: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.path.ends_with(path_end))
            .collect()
    }

    /// Waits (up to `secs`) until `pred` holds over the calls.
    pub async fn wait(&self, secs: u64, pred: impl Fn(&[Call]) -> bool) -> Vec<Call> {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let c = self.calls();
            if pred(&c) || std::time::Instant::now() > deadline {
                return c;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn handle(State(st): State<St>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let h = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let mut call = Call {
        path: uri.path().to_string(),
        auth: h("authorization").unwrap_or_default(),
        retry_key: h("x-line-retry-key"),
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        status: 0,
    };
    let json = [("content-type", "application/json")];
    let mut calls = st.calls.lock().unwrap();
    let n = calls.iter().filter(|c| c.path == call.path).count();
    let taken = |c: &Call| c.path == call.path && c.delivered();
    let token = call.body["replyToken"].as_str().map(str::to_string);
    if call.path.ends_with("/reply")
        && token.is_some()
        && calls
            .iter()
            .any(|c| taken(c) && c.body["replyToken"].as_str() == token.as_deref())
    {
        call.status = 400;
        calls.push(call);
        return (
            StatusCode::BAD_REQUEST,
            json,
            r#"{"message":"Invalid reply token"}"#,
        )
            .into_response();
    }
    if call.path.ends_with("/push")
        && call.retry_key.is_some()
        && calls
            .iter()
            .any(|c| taken(c) && c.retry_key == call.retry_key)
    {
        call.status = 409;
        calls.push(call);
        return (
            StatusCode::CONFLICT,
            [
                ("content-type", "application/json"),
                (
                    "x-line-accepted-request-id",
                    "00000000-0000-4000-8000-000000000000",
                ),
            ],
            r#"{"message":"The retry key is already accepted"}"#,
        )
            .into_response();
    }
    let answer = (st.script)(&call, n);
    call.status = match answer {
        Answer::Ok => 200,
        Answer::InvalidReplyToken => 400,
        Answer::RateLimited { .. } => 429,
        Answer::ServerError => 500,
    };
    calls.push(call);
    drop(calls);
    match answer {
        Answer::Ok => (StatusCode::OK, json, "{}").into_response(),
        Answer::InvalidReplyToken => (
            StatusCode::BAD_REQUEST,
            json,
            r#"{"message":"Invalid reply token"}"#,
        )
            .into_response(),
        Answer::RateLimited { retry_after } => (
            StatusCode::TOO_MANY_REQUESTS,
            [
                ("content-type", "application/json".to_string()),
                ("retry-after", retry_after.to_string()),
            ],
            r#"{"message":"The API rate limit has been exceeded. Try again later."}"#,
        )
            .into_response(),
        Answer::ServerError => (
            StatusCode::INTERNAL_SERVER_ERROR,
            json,
            r#"{"message":"Internal server error"}"#,
        )
            .into_response(),
    }
}
