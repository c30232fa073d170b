//! The HTTP side: `POST <webhook_path>` (the body read within `[http]`'s size and time limits,
//! then the signature on the raw body; 401 with only a counter; each well-formed event masked
//! and committed — a malformed one recorded with its reason — then 200 at once and the work
//! handed to the workers) and `GET /healthz` on the webhook listener; `GET /metrics`,
//! `/readyz` (model, store, LINE API) and `/healthz` on the monitoring listener (`metrics_listen`), never on the public one. On
//! shutdown the workers drain for at most `drain_seconds`; what is left stays queued.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};

use super::events::{self, Action, Read, WebhookBody};
use super::metrics::inc;
use super::store::{NewEvent, NewMessage};
use super::worker::{Dispatcher, Job};
use super::{Services, signature};
use crate::safety::pii;

#[derive(Clone)]
struct AppState {
    svc: Arc<Services>,
    jobs: Dispatcher,
    ingress: super::ingress::Ingress,
}

/// Serves until `shutdown` resolves, then stops accepting, lets the workers finish what was
/// acknowledged (for at most `drain_seconds`), and flushes the store (a WAL checkpoint).
/// `monitor`: the listener for /metrics, when there is one.
pub async fn run(
    svc: Arc<Services>,
    listener: tokio::net::TcpListener,
    monitor: Option<tokio::net::TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let jobs = super::worker::start(svc.clone());
    super::worker::resume(&svc, &jobs).await;
    let checker = svc.spawn(super::checker::run(svc.clone(), jobs.stopping()));
    let holds = svc.spawn(super::worker::hold(svc.clone(), jobs.clone()));
    let state = AppState {
        svc: svc.clone(),
        jobs: jobs.clone(),
        ingress: super::ingress::Ingress::start(svc.ingress.clone(), Some(svc.lease.clone())),
    };
    let app = Router::new()
        .route(&svc.cfg.webhook_path, post(webhook))
        .route("/healthz", get(healthz))
        .with_state(state.clone());
    let h = &svc.cfg.http;
    let limits = super::listen::Limits {
        header_timeout: secs(h.header_timeout_seconds),
        max_connections: h.max_connections,
        max_connection: secs(h.max_connection_seconds),
        grace: secs(h.body_timeout_seconds),
    };
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let monitor = monitor.map(|l| {
        let app = Router::new()
            .route("/metrics", get(metrics))
            .route("/readyz", get(readyz))
            .route("/healthz", get(healthz))
            .with_state(state);
        let mut stop = stop_rx.clone();
        let small = super::listen::Limits {
            max_connections: 16,
            ..limits
        };
        tokio::spawn(super::listen::serve(l, app, small, async move {
            let _ = stop.changed().await;
        }))
    });
    let served = super::listen::serve(listener, app, limits, shutdown)
        .await
        .map_err(|e| format!("server: {e}"));
    jobs.stop();
    let drain = secs(svc.cfg.drain_seconds);
    let until = tokio::time::Instant::now() + drain;
    if !jobs.join(drain).await {
        crate::say!(
            "kakeai serve: the {:.0} s drain is over; what is unanswered stays queued for the next start",
            drain.as_secs_f64()
        );
    }
    // One deadline for the lanes and the checker together.
    let _ = tokio::time::timeout_at(until, checker).await;
    holds.abort();
    let _ = stop_tx.send(true);
    if let Some(m) = monitor {
        let _ = m.await;
    }
    let _ = svc
        .store
        .call(|s| match s.kind() {
            crate::store::sql::Kind::Sqlite => {
                Ok(s.db().batch("PRAGMA wal_checkpoint(TRUNCATE)")?)
            }
            crate::store::sql::Kind::Postgres => Ok(()),
        })
        .await;
    served
}

async fn metrics(State(st): State<AppState>) -> impl IntoResponse {
    (
        [("content-type", "text/plain; version=0.0.4")],
        st.svc.metrics.prometheus(),
    )
}

/// Readiness (`serve::ready`): 200 or 503 with what is not usable.
async fn readyz(State(st): State<AppState>) -> impl IntoResponse {
    let (ready, body) = super::ready::report(&st.svc).await;
    let code = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        code,
        [("content-type", "application/json")],
        body.to_string(),
    )
}

/// Liveness (`serve::ready::health`): 200, or 503 once the store has been unreachable for
/// longer than `store_down_seconds`.
async fn healthz(State(st): State<AppState>) -> impl IntoResponse {
    let bound = secs(st.svc.cfg.store_down_seconds);
    match super::ready::health(&st.svc.store_health, bound) {
        None => (StatusCode::OK, "ok\n".to_string()),
        Some(why) => (StatusCode::SERVICE_UNAVAILABLE, why),
    }
}

fn secs(s: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(s)
}

/// The body, at most `max_body_bytes` (a larger Content-Length is refused before a byte is
/// read) and complete within `body_timeout_seconds`; else the status to answer.
async fn read_body(svc: &Services, headers: &HeaderMap, body: Body) -> Result<Bytes, StatusCode> {
    let h = &svc.cfg.http;
    let declared = headers
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > h.max_body_bytes as u64) {
        inc(&svc.metrics.bad_bodies);
        return Err(StatusCode::PAYLOAD_TOO_LARGE);
    }
    let read = collect(
        body,
        h.max_body_bytes,
        secs(h.body_idle_seconds),
        Instant::now() + secs(h.body_timeout_seconds),
    )
    .await;
    if read.is_err() {
        inc(&svc.metrics.bad_bodies);
    }
    read
}

/// The body's pieces, at most `max` bytes in all, each within `idle` of the one before and all
/// by `until`: 413 past `max`, 408 for a pause or the whole too long.
async fn collect(
    body: Body,
    max: usize,
    idle: std::time::Duration,
    until: Instant,
) -> Result<Bytes, StatusCode> {
    use futures_util::StreamExt;
    let mut stream = body.into_data_stream();
    let mut got = bytes::BytesMut::new();
    loop {
        let left = until.saturating_duration_since(Instant::now()).min(idle);
        match tokio::time::timeout(left, stream.next()).await {
            Ok(None) => return Ok(got.freeze()),
            Ok(Some(Ok(piece))) if got.len() + piece.len() <= max => got.extend_from_slice(&piece),
            Ok(Some(Ok(_))) => return Err(StatusCode::PAYLOAD_TOO_LARGE),
            Ok(Some(Err(_))) => return Err(StatusCode::BAD_REQUEST),
            Err(_) => return Err(StatusCode::REQUEST_TIMEOUT),
        }
    }
}

/// A refusal that also closes the connection (`Connection: close`): the client's unread body
/// is never read, and its connection goes back to the pool.
fn refuse(code: StatusCode) -> axum::response::Response {
    (code, [(axum::http::header::CONNECTION, "close")], "").into_response()
}

async fn webhook(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> axum::response::Response {
    let started = Instant::now();
    let svc = &st.svc;
    let sig = headers.get("x-line-signature").map(|v| v.as_bytes());
    // No signature to check: refused before a byte of the body is read, so unsigned clients
    // (however many, however slow) never hold a connection genuine webhooks need.
    if !signature::well_formed(sig) {
        inc(&svc.metrics.bad_signatures);
        return refuse(StatusCode::UNAUTHORIZED);
    }
    let body = match read_body(svc, &headers, body).await {
        Ok(b) => b,
        Err(code) => return refuse(code),
    };
    if !signature::verify(svc.secret.expose(), &body, sig) {
        inc(&svc.metrics.bad_signatures);
        return refuse(StatusCode::UNAUTHORIZED);
    }
    let Ok(parsed) = serde_json::from_slice::<WebhookBody>(&body) else {
        inc(&svc.metrics.bad_bodies);
        return (StatusCode::BAD_REQUEST, "").into_response();
    };
    drop(body);
    let names = svc.names();
    let mut news = Vec::new();
    let mut tokens = Vec::new();
    for v in &parsed.events {
        let (news_e, tok) = match events::read_event(v) {
            Read::Good(e) => {
                let action = events::classify(&e, &names);
                to_new_event(svc, &e, &action)
            }
            Read::Malformed { key, kind, reason } => {
                inc(&svc.metrics.malformed_events);
                let ne = NewEvent {
                    webhook_event_id: key,
                    event_type: kind,
                    malformed: Some(reason),
                    ..NewEvent::default()
                };
                (ne, (None, None, String::new()))
            }
        };
        news.push(news_e);
        tokens.push(tok);
    }
    // The commit and the jobs it makes run to their end in a task of their own, even when
    // this handler is dropped (LINE gave the request up and closed the connection while the
    // store was slow): a committed message is handed to the workers at once, never left for
    // the unattended-message sweep.
    let done = tokio::spawn(commit_and_hand_over(st.clone(), news, tokens, started));
    match done.await {
        Ok(Ok(())) => (StatusCode::OK, "{}").into_response(),
        // Not acknowledged: LINE redelivers.
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "").into_response(),
    }
}

/// A reply token, a quote token and the chat, per event (kept in memory only).
type Tokens = (Option<String>, Option<String>, String);

/// Commits the events (group commit) and hands each new message to the workers; Err when
/// nothing may be acknowledged.
async fn commit_and_hand_over(
    st: AppState,
    news: Vec<NewEvent>,
    tokens: Vec<Tokens>,
    started: Instant,
) -> Result<(), ()> {
    let svc = &st.svc;
    let malformed: Vec<bool> = news.iter().map(|n| n.malformed.is_some()).collect();
    let accepted = st.ingress.accept(news).await.map_err(|_| ())?;
    for ((r, (reply_token, quote_token, channel)), bad) in
        accepted.into_iter().zip(tokens).zip(malformed)
    {
        match r {
            None => inc(&svc.metrics.duplicates),
            Some(_) if bad => {}
            Some(id) => {
                inc(&svc.metrics.events);
                if let Some(id) = id {
                    st.jobs.send(Job {
                        id,
                        channel,
                        reply_token,
                        quote_token,
                        received: started,
                        resend: None,
                    });
                }
            }
        }
    }
    svc.metrics.ack_seconds(started.elapsed().as_secs_f64());
    Ok(())
}

/// The row an event leaves, its text masked here (the raw text goes no further), and the
/// reply/quote tokens kept in memory only.
fn to_new_event(
    svc: &Services,
    e: &events::Event,
    action: &Action,
) -> (NewEvent, (Option<String>, Option<String>, String)) {
    let src = e.source.as_ref();
    let channel = src.and_then(|s| s.channel()).unwrap_or("").to_string();
    let source_type = src.map(|s| s.kind.clone()).unwrap_or_default();
    let mut ne = NewEvent {
        webhook_event_id: e.webhook_event_id.clone(),
        event_type: e.kind.clone(),
        source_type: source_type.clone(),
        channel_id: channel.clone(),
        redelivery: e.delivery_context.is_redelivery,
        message: None,
        malformed: None,
    };
    let valid_source =
        ["user", "group", "room"].contains(&source_type.as_str()) && !channel.is_empty();
    if let (Some(m), true) = (&e.message, valid_source) {
        let base = NewMessage {
            channel_id: channel.clone(),
            source_type,
            quoted: m.quoted_message_id.clone(),
            message_id: Some(m.id.clone()).filter(|s| !s.is_empty()),
            webhook_event_id: Some(e.webhook_event_id.clone()),
            role: "user",
            character: svc.me.id.clone(),
            speaker: speaker_of(e),
            at_ms: if e.timestamp > 0 {
                e.timestamp
            } else {
                crate::patterns::stamp::now_ms()
            },
            ..NewMessage::default()
        };
        ne.message = match action {
            Action::Text { answer_now } => {
                let raw = m.text.as_deref().unwrap_or("");
                let masked = pii::shared().mask(raw);
                let digest = pii::installation_key()
                    .map(|k| masked.digest(k))
                    .unwrap_or_default();
                Some(NewMessage {
                    text_masked: masked.masked_text.clone(),
                    original_content_hash: digest,
                    pii_kinds: masked
                        .items
                        .iter()
                        .map(|i| i.kind.label().to_string())
                        .collect(),
                    mention: *answer_now && source_type_is_group(&base.source_type),
                    state: if *answer_now { "queued" } else { "pending" },
                    ..base
                })
            }
            Action::NotText => Some(NewMessage {
                text_masked: format!("[{}]", m.kind),
                state: "queued-nontext",
                ..base
            }),
            Action::Record => None,
        };
    }
    (
        ne,
        (
            e.reply_token.clone(),
            e.message.as_ref().and_then(|m| m.quote_token.clone()),
            channel,
        ),
    )
}

/// The group or room member who sent `e` ('' in a 1:1 chat: the channel is the user).
fn speaker_of(e: &events::Event) -> String {
    e.source
        .as_ref()
        .filter(|s| s.kind != "user")
        .and_then(|s| s.user_id.clone())
        .unwrap_or_default()
}

fn source_type_is_group(t: &str) -> bool {
    t == "group" || t == "room"
}
