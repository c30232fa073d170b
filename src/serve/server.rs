//! The HTTP side: `POST <webhook_path>` (signature on the raw body first; 401 with only a
//! counter; the masked events committed, then 200 at once and the work handed to the workers),
//! `GET /healthz` (liveness), `GET /readyz` (model, store, LINE API), `GET /metrics`; graceful
//! shutdown finishes in-flight events.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};

use super::events::{self, Action, WebhookBody};
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
/// acknowledged, and flushes the store (a WAL checkpoint).
pub async fn run(
    svc: Arc<Services>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let (jobs, workers) = super::worker::start(svc.clone());
    super::worker::resume(&svc, &jobs).await;
    let checker = svc.spawn(super::checker::run(svc.clone(), jobs.stopping()));
    let state = AppState {
        svc: svc.clone(),
        jobs: jobs.clone(),
        ingress: super::ingress::Ingress::start(svc.ingress.clone()),
    };
    let app = Router::new()
        .route(&svc.cfg.webhook_path, post(webhook))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics))
        .route("/readyz", get(readyz))
        .with_state(state);
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| format!("server: {e}"));
    jobs.stop();
    drop(jobs);
    for w in workers {
        let _ = w.await;
    }
    let _ = checker.await;
    let _ = svc
        .store
        .call(|s| Ok(s.conn().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?))
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

async fn webhook(State(st): State<AppState>, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
    let started = Instant::now();
    let svc = &st.svc;
    let sig = headers.get("x-line-signature").map(|v| v.as_bytes());
    if !signature::verify(svc.secret.expose(), &body, sig) {
        inc(&svc.metrics.bad_signatures);
        return (StatusCode::UNAUTHORIZED, "");
    }
    let Ok(parsed) = serde_json::from_slice::<WebhookBody>(&body) else {
        inc(&svc.metrics.bad_bodies);
        return (StatusCode::BAD_REQUEST, "");
    };
    drop(body);
    let names = svc.names();
    let mut news = Vec::new();
    let mut tokens = Vec::new();
    for e in &parsed.events {
        let action = events::classify(e, &names);
        let (news_e, tok) = to_new_event(svc, e, &action);
        news.push(news_e);
        tokens.push(tok);
    }
    let accepted = match st.ingress.accept(news).await {
        Ok(a) => a,
        // Not acknowledged: LINE redelivers.
        Err(_) => return (StatusCode::INTERNAL_SERVER_ERROR, ""),
    };
    for (r, (reply_token, quote_token, channel)) in accepted.into_iter().zip(tokens) {
        match r {
            None => inc(&svc.metrics.duplicates),
            Some(id) => {
                inc(&svc.metrics.events);
                if let Some(id) = id {
                    st.jobs.send(Job {
                        id,
                        channel,
                        reply_token,
                        quote_token,
                        received: started,
                    });
                }
            }
        }
    }
    svc.metrics.ack_seconds(started.elapsed().as_secs_f64());
    (StatusCode::OK, "{}")
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

fn source_type_is_group(t: &str) -> bool {
    t == "group" || t == "room"
}
