//! The workers: each acknowledged message is answered on the worker its chat hashes to, so one
//! chat's messages are handled in order (outcomes depend on it). Delivery: the Reply API while
//! the reply token is fresh, else (or on "Invalid reply token") the Push API.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::sync::mpsc;

use super::Services;
use super::line_api::SendError;
use super::metrics::inc;
use super::pipeline;
use super::store::{self, BotLine, UserLine};
use crate::patterns as pat;

pub struct Job {
    pub id: i64,
    pub channel: String,
    pub reply_token: Option<String>,
    pub quote_token: Option<String>,
    pub received: Instant,
}

#[derive(Clone)]
pub struct Dispatcher {
    lanes: Arc<std::sync::Mutex<Vec<mpsc::UnboundedSender<Job>>>>,
    stopping: Arc<AtomicBool>,
}

impl Dispatcher {
    pub fn send(&self, job: Job) {
        let mut h = DefaultHasher::new();
        job.channel.hash(&mut h);
        if let Ok(lanes) = self.lanes.lock()
            && !lanes.is_empty()
        {
            let lane = (h.finish() % lanes.len() as u64) as usize;
            // A closed lane (shutting down): the row stays queued and is resumed on restart.
            let _ = lanes[lane].send(job);
        }
    }

    /// Closes the lanes: the workers finish what they hold, then end.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Ok(mut l) = self.lanes.lock() {
            l.clear();
        }
    }

    pub fn stopping(&self) -> Arc<AtomicBool> {
        self.stopping.clone()
    }
}

pub fn start(svc: Arc<Services>) -> (Dispatcher, Vec<tokio::task::JoinHandle<()>>) {
    let mut lanes = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..svc.cfg.workers {
        let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
        lanes.push(tx);
        let job_svc = svc.clone();
        handles.push(svc.spawn(async move {
            let svc = job_svc;
            while let Some(job) = rx.recv().await {
                if let Err(e) = process(&svc, job).await {
                    inc(&svc.metrics.pipeline_errors);
                    eprintln!("kakeai serve: event not processed: {e}");
                }
            }
        }));
    }
    let d = Dispatcher {
        lanes: Arc::new(std::sync::Mutex::new(lanes)),
        stopping: Arc::new(AtomicBool::new(false)),
    };
    (d, handles)
}

/// Messages acknowledged before a restart and never answered: their reply tokens are gone, so
/// they are answered by push.
pub async fn resume(svc: &Services, jobs: &Dispatcher) {
    if let Ok(rows) = svc.store.call(|s| store::queued(s)).await {
        for r in rows {
            jobs.send(Job {
                id: r.id,
                channel: r.channel_id,
                reply_token: None,
                quote_token: None,
                received: Instant::now(),
            });
        }
    }
}

async fn process(svc: &Services, job: Job) -> Result<(), String> {
    let id = job.id;
    let Some(user) = svc
        .store
        .call(move |s| store::user_line_by_id(s, id))
        .await
        .map_err(|e| e.to_string())?
    else {
        return Err(format!("message {id} is not in the store"));
    };
    if user.state == "queued-nontext" {
        let text = svc.cfg.lines().text_only.clone();
        let delivery = deliver(
            svc,
            &user,
            job.reply_token.as_deref(),
            job.quote_token.as_deref(),
            &text,
        )
        .await;
        let line = BotLine {
            reply_to: user.id,
            text,
            source: "canned".into(),
            ..bot_line(delivery)
        };
        return save(svc, line, "unsupported").await;
    }
    let mut trace = Vec::new();
    pipeline::log_line(
        svc,
        &user.channel_id,
        pat::ingest::Role::User,
        &user.text_masked,
        None,
        &mut trace,
    )
    .await;
    if user.state != "queued" {
        // A group message that does not mention her: the checker decides (seed 002).
        return Ok(());
    }
    respond(
        svc,
        &user,
        job.reply_token.as_deref(),
        job.quote_token.as_deref(),
        job.received,
        trace,
    )
    .await
}

/// Answers `user` and delivers it; used by the workers and by the checker's late answers.
pub async fn respond(
    svc: &Services,
    user: &UserLine,
    reply_token: Option<&str>,
    quote: Option<&str>,
    received: Instant,
    mut trace: Vec<String>,
) -> Result<(), String> {
    let a = pipeline::answer(svc, user).await;
    svc.log.turn(user.id, &user.channel_id, &a.source, &a.trace);
    trace.extend(a.trace.iter().cloned());
    let Some(text) = a.text.clone() else {
        if let Some(kept) = a.withheld.clone() {
            // Nothing usable, not even her fallback: nothing is sent; the turn is kept for
            // review with what was rejected.
            let line = BotLine {
                reply_to: user.id,
                text: kept,
                state: "withheld",
                source: a.source,
                delivery: "none".into(),
                safety: a.safety,
                verdict: a.verdict.and_then(|v| serde_json::to_value(v).ok()),
                attempts: a.attempts,
                review: true,
                trace,
                ..BotLine::default()
            };
            return save(svc, line, "withheld").await;
        }
        let (id, safety) = (user.id, a.safety.clone());
        return svc
            .store
            .call(move |s| store::set_blocked(s, id, safety.as_ref()))
            .await
            .map_err(|e| e.to_string());
    };
    let delivery = deliver(svc, user, reply_token, quote, &text).await;
    if let Err(e) = &delivery {
        // Kept with the row: the conversations view shows why it never arrived.
        trace.push(format!("not delivered: {e}"));
        svc.log.write(
            "send-failed",
            &format!(
                "msg={} chat={} LINE did not take her reply: {e}",
                user.id,
                super::oplog::short_id(&user.channel_id)
            ),
        );
    }
    svc.line_health
        .record(delivery.as_ref().map(|_| ()).map_err(|e| e.clone()));
    svc.metrics.answer_seconds(received.elapsed().as_secs_f64());
    let line = BotLine {
        reply_to: user.id,
        text,
        source: a.source,
        pattern_id: a.pattern_id,
        usage_id: a.usage_id,
        safety: a.safety,
        verdict: a.verdict.and_then(|v| serde_json::to_value(v).ok()),
        attempts: a.attempts,
        review: a.review,
        trace,
        ..bot_line(delivery)
    };
    save(svc, line, "answered").await
}

fn bot_line(delivery: Result<&'static str, String>) -> BotLine {
    match delivery {
        Ok(how) => BotLine {
            state: "sent",
            delivery: how.into(),
            ..BotLine::default()
        },
        Err(e) => BotLine {
            state: "failed",
            delivery: "none".into(),
            trace: vec![e],
            ..BotLine::default()
        },
    }
}

async fn save(svc: &Services, line: BotLine, user_state: &'static str) -> Result<(), String> {
    svc.store
        .call(move |s| store::save_bot_line(s, &line, user_state))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Reply while the token is fresh; push when there is none or LINE says it is invalid.
async fn deliver(
    svc: &Services,
    user: &UserLine,
    token: Option<&str>,
    quote: Option<&str>,
    text: &str,
) -> Result<&'static str, String> {
    if let Some(t) = token {
        match svc.api.reply(t, text, quote).await {
            Ok(()) => {
                inc(&svc.metrics.replies);
                return Ok("reply");
            }
            Err(SendError::InvalidReplyToken) => {}
            Err(e) => {
                inc(&svc.metrics.send_failures);
                return Err(e.to_string());
            }
        }
    }
    match svc.api.push(&user.channel_id, text, quote).await {
        Ok(()) => {
            inc(&svc.metrics.pushes);
            Ok("push")
        }
        Err(e) => {
            inc(&svc.metrics.send_failures);
            Err(e.to_string())
        }
    }
}
