//! The workers: each chat has its own lane (a task, started on its first message and ended
//! when idle), so one chat's messages are handled in order (outcomes depend on it) and a slow
//! chat never delays another; at most `workers` chats are answered at once. Delivery (see
//! `outbox`): her line is written `sending` first, then the Reply API while the reply token is
//! fresh, else (or on "Invalid reply token") the Push API with a retry key derived from the
//! message; then it is settled, LINE's error kept when it failed.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc};

use super::Services;
use super::lease;
use super::line_api::SendError;
use super::metrics::inc;
use super::outbox::{self, Sending};
use super::pipeline;
use super::store::{self, BotLine, UserLine};
use crate::patterns as pat;

pub struct Job {
    pub id: i64,
    pub channel: String,
    pub reply_token: Option<String>,
    pub quote_token: Option<String>,
    pub received: Instant,
    /// A line a crash left `sending`: delivered again, nothing regenerated.
    pub resend: Option<Sending>,
}

/// A lane with no message for this long ends (a new message starts it again).
const IDLE: Duration = Duration::from_secs(30);

struct Lanes {
    open: bool,
    chats: HashMap<String, mpsc::UnboundedSender<Job>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

#[derive(Clone)]
pub struct Dispatcher {
    svc: Arc<Services>,
    lanes: Arc<std::sync::Mutex<Lanes>>,
    busy: Arc<Semaphore>,
    stopping: Arc<AtomicBool>,
    /// Jobs a store outage interrupted, sent again when it is back.
    parked: Arc<std::sync::Mutex<Vec<Job>>>,
    /// Messages a lane has (queued or being answered, or parked).
    inflight: Arc<std::sync::Mutex<std::collections::HashSet<i64>>>,
}

impl Dispatcher {
    pub fn send(&self, job: Job) {
        let Ok(mut l) = self.lanes.lock() else {
            return;
        };
        // Shutting down: the row stays queued and is resumed on the next start.
        if !l.open {
            return;
        }
        if let Ok(mut f) = self.inflight.lock() {
            f.insert(job.id);
        }
        let job = match l.chats.get(&job.channel) {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                Err(mpsc::error::SendError(job)) => job,
            },
            None => job,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let channel = job.channel.clone();
        let _ = tx.send(job);
        l.chats.insert(channel.clone(), tx);
        l.tasks.retain(|t| !t.is_finished());
        let me = self.clone();
        let task = self.svc.spawn(async move { me.lane(channel, rx).await });
        l.tasks.push(task);
    }

    /// One chat's lane: its jobs in order, one at a time, while a `busy` permit is free.
    async fn lane(self, channel: String, mut rx: mpsc::UnboundedReceiver<Job>) {
        loop {
            let job = match tokio::time::timeout(IDLE, rx.recv()).await {
                Ok(Some(job)) => job,
                Ok(None) => return,
                Err(_) => {
                    // Idle: leave, unless a job slipped in (senders hold the lock).
                    let Ok(mut l) = self.lanes.lock() else {
                        return;
                    };
                    match rx.try_recv() {
                        Ok(job) => {
                            drop(l);
                            job
                        }
                        Err(_) => {
                            l.chats.remove(&channel);
                            return;
                        }
                    }
                }
            };
            let Ok(_permit) = self.busy.acquire().await else {
                return;
            };
            let again = Job {
                id: job.id,
                channel: job.channel.clone(),
                reply_token: job.reply_token.clone(),
                quote_token: job.quote_token.clone(),
                received: job.received,
                resend: job.resend.clone(),
            };
            let id = job.id;
            let done = process(&self.svc, job).await;
            if done.is_ok()
                && let Ok(mut f) = self.inflight.lock()
            {
                f.remove(&id);
            }
            if let Err(e) = done {
                inc(&self.svc.metrics.pipeline_errors);
                // A store failure (the connection lost mid-answer, even if it is back by the
                // time we ask), a store that does not answer now, or a write that lost to
                // other writers past its retries (many parked answers resuming at once).
                let lost = crate::store::sql::lost_connection(&e);
                let contended = crate::store::sql::contended(&e);
                if self.store_away().await || lost || contended {
                    // The store went away or was too busy mid-answer: the message stays held
                    // and queued, and is answered again at the next renewal (`hold`).
                    self.park(again);
                } else {
                    if let Ok(mut f) = self.inflight.lock() {
                        f.remove(&id);
                    }
                    crate::say!("kakeai serve: event not processed: {e}");
                }
            }
        }
    }

    /// Closes the lanes: each finishes what it holds, then ends.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Ok(mut l) = self.lanes.lock() {
            l.open = false;
            l.chats.clear();
        }
    }

    /// Waits for every lane to end, at most `limit`; false when some were still running.
    pub async fn join(&self, limit: Duration) -> bool {
        let tasks = match self.lanes.lock() {
            Ok(mut l) => std::mem::take(&mut l.tasks),
            Err(_) => return true,
        };
        tokio::time::timeout(limit, futures_util::future::join_all(tasks))
            .await
            .is_ok()
    }

    /// Whether the store answers now (a failure is noted in the store's health).
    async fn store_away(&self) -> bool {
        let r = self
            .svc
            .store
            .call(|s| Ok(s.db().one::<i64>("SELECT 1", crate::p![])?))
            .await
            .map(|_| ())
            .map_err(|e| e.to_string());
        let away = r.is_err();
        if let Some(line) = self.svc.store_health.record(r) {
            self.svc.log.write("store", &line);
        }
        away
    }

    /// Keeps a job a store outage interrupted, for [`Dispatcher::unpark`].
    fn park(&self, job: Job) {
        if let Ok(mut p) = self.parked.lock() {
            p.push(job);
        }
    }

    /// Sends every parked job again (the store is back); how many.
    pub fn unpark(&self) -> usize {
        let jobs = match self.parked.lock() {
            Ok(mut p) => std::mem::take(&mut *p),
            Err(_) => return 0,
        };
        let n = jobs.len();
        for j in jobs {
            self.send(j);
        }
        n
    }

    /// Whether a lane has message `id` (queued, being answered or parked).
    pub fn has(&self, id: i64) -> bool {
        self.inflight.lock().is_ok_and(|f| f.contains(&id))
    }

    pub fn stopping(&self) -> Arc<AtomicBool> {
        self.stopping.clone()
    }
}

pub fn start(svc: Arc<Services>) -> Dispatcher {
    Dispatcher {
        busy: Arc::new(Semaphore::new(svc.cfg.workers.max(1))),
        svc,
        lanes: Arc::new(std::sync::Mutex::new(Lanes {
            open: true,
            chats: HashMap::new(),
            tasks: Vec::new(),
        })),
        stopping: Arc::new(AtomicBool::new(false)),
        parked: Arc::new(std::sync::Mutex::new(Vec::new())),
        inflight: Arc::default(),
    }
}

/// After a restart: lines a crash left `sending` are delivered again (LINE tells repeats
/// apart, see `outbox`), then messages acknowledged and never answered are answered — their
/// reply tokens are gone, so by push. On PostgreSQL only what no live instance holds (see
/// `lease`); the rest is taken over by [`hold`] if its holder dies.
pub async fn resume(svc: &Services, jobs: &Dispatcher) {
    let lease = svc.lease.clone();
    match svc.store.call(move |s| lease::at_start(s, &lease)).await {
        Ok(taken) => dispatch(jobs, taken),
        Err(e) => crate::say!("kakeai serve: unanswered messages not resumed: {e}"),
    }
}

/// While the instance runs: renews its holds every third of a lease, and takes over the
/// messages of instances whose holds lapsed (see `lease`).
pub async fn hold(svc: Arc<Services>, jobs: Dispatcher) {
    let every = Duration::from_millis((svc.lease.ms / 3).max(50) as u64);
    let mut unattended = HashMap::new();
    loop {
        tokio::time::sleep(every).await;
        if jobs.stopping().load(Ordering::SeqCst) {
            return;
        }
        let lease = svc.lease.clone();
        let r = svc
            .store
            .call(move |s| {
                let now = crate::patterns::stamp::now_ms();
                lease::renew(s, &lease, now)?;
                lease::take_over(s, &lease, now, false, 500)
            })
            .await;
        let seen = r.as_ref().map(|_| ()).map_err(|e| e.to_string());
        if let Some(line) = svc.store_health.record(seen) {
            svc.log.write("store", &line);
        }
        if r.is_ok() {
            let n = jobs.unpark();
            if n > 0 {
                svc.log.write(
                    "resume",
                    &format!("{n} message(s) a store outage interrupted, answered again"),
                );
            }
            unattended = orphans(&svc, &jobs, unattended).await;
        }
        match r {
            Ok(taken) if !taken.is_empty() => {
                svc.log.write(
                    "takeover",
                    &format!(
                        "{} message(s) from an instance whose hold lapsed",
                        taken.len()
                    ),
                );
                dispatch(&jobs, taken);
            }
            // Said once per outage (above), not once per renewal.
            Ok(_) | Err(_) => {}
        }
    }
}

/// Messages this instance holds that no lane has — an acknowledgement whose commit was only
/// learned after the connection came back, a failure that did not look like an outage — are
/// answered again once seen unattended at two renewals in a row (so one just acknowledged and
/// about to be handed to a lane is never taken for one); at most three times each, then the log
/// says it stays unanswered. `seen`: per message, how many renewals in a row found it
/// unattended.
async fn orphans(
    svc: &Arc<Services>,
    jobs: &Dispatcher,
    seen: HashMap<i64, u32>,
) -> HashMap<i64, u32> {
    let lease = svc.lease.clone();
    let Ok(held) = svc.store.call(move |s| lease::held_here(s, &lease)).await else {
        return seen;
    };
    let id = |t: &lease::Taken| match t {
        lease::Taken::Queued { id, .. } => *id,
        lease::Taken::Sending(r) => r.reply_to,
    };
    let mut now = HashMap::new();
    let mut again = Vec::new();
    for t in held {
        let before = seen.get(&id(&t)).copied().unwrap_or(0);
        if jobs.has(id(&t)) {
            // With a lane now: its count is kept (never reset, so never answered endlessly).
            if before > 0 {
                now.insert(id(&t), before);
            }
            continue;
        }
        let n = before + 1;
        now.insert(id(&t), n);
        match n {
            2 | 5 | 8 => again.push(t),
            9 => svc.log.write(
                "resume",
                &format!(
                    "message {} stays unanswered (held here; answered again 3 times)",
                    id(&t)
                ),
            ),
            _ => {}
        }
    }
    if !again.is_empty() {
        svc.log.write(
            "resume",
            &format!(
                "{} message(s) held here and unanswered, answered again",
                again.len()
            ),
        );
        dispatch(jobs, again);
    }
    now
}

fn dispatch(jobs: &Dispatcher, taken: Vec<lease::Taken>) {
    for t in taken {
        let (id, channel, resend) = match t {
            lease::Taken::Queued { id, channel } => (id, channel, None),
            lease::Taken::Sending(r) => (r.reply_to, r.channel_id.clone(), Some(r)),
        };
        jobs.send(Job {
            id,
            channel,
            reply_token: None,
            quote_token: None,
            received: Instant::now(),
            resend,
        });
    }
}

/// The stored user message `id` (an error when it is gone).
async fn stored_user_line(svc: &Services, id: i64) -> Result<UserLine, String> {
    svc.store
        .call(move |s| store::user_line_by_id(s, id))
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("message {id} is not in the store"))
}

async fn process(svc: &Services, job: Job) -> Result<(), String> {
    if let Some(r) = job.resend {
        return redeliver(svc, r).await;
    }
    let id = job.id;
    let user = stored_user_line(svc, id).await?;
    if user.state == "queued-nontext" {
        let line = BotLine {
            reply_to: user.id,
            text: svc.cfg.lines().text_only.clone(),
            source: "canned".into(),
            ..BotLine::default()
        };
        let tokens = (job.reply_token.as_deref(), job.quote_token.as_deref());
        return send_line(svc, &user, tokens, line, "unsupported").await;
    }
    let mut trace = Vec::new();
    let checking = Instant::now();
    let user = super::pii_pass::check(svc, user, &mut trace).await?;
    let spent = checking.elapsed();
    if user.pii_check != super::pii_pass::FAILED {
        // Pattern learning keeps the text: only a checked one.
        pipeline::log_line(
            svc,
            &user.channel_id,
            pat::ingest::Role::User,
            &user.text_masked,
            None,
            &mut trace,
        )
        .await;
    }
    if user.state != "queued" {
        // A group message that does not mention her: the checker decides (seed 002).
        return Ok(());
    }
    let tokens = (job.reply_token.as_deref(), job.quote_token.as_deref());
    respond(svc, &user, tokens, (job.received, spent), trace).await
}

/// Answers `user` and delivers it; used by the workers and by the checker's late answers.
/// `(reply_token, quote)`; `(received, spent)`: when the message came and how much of the
/// answer budget its PII check already used.
pub async fn respond(
    svc: &Services,
    user: &UserLine,
    (reply_token, quote): (Option<&str>, Option<&str>),
    (received, spent): (Instant, Duration),
    mut trace: Vec<String>,
) -> Result<(), String> {
    let a = pipeline::answer(svc, user, spent).await;
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
        ..BotLine::default()
    };
    let r = send_line(svc, user, (reply_token, quote), line, "answered").await;
    svc.metrics.answer_seconds(received.elapsed().as_secs_f64());
    r
}

/// Stores a line that is not sent (withheld), with the user's message settled as `user_state`.
async fn save(svc: &Services, line: BotLine, user_state: &'static str) -> Result<(), String> {
    svc.store
        .call(move |s| store::save_bot_line(s, &line, user_state))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Writes `line` as `sending`, hands it to LINE, and settles it (LINE's error kept).
async fn send_line(
    svc: &Services,
    user: &UserLine,
    (reply_token, quote): (Option<&str>, Option<&str>),
    line: BotLine,
    user_state: &'static str,
) -> Result<(), String> {
    let text = line.text.clone();
    let token = reply_token.map(str::to_string);
    let bot_id = svc
        .store
        .call(move |s| outbox::mark_sending(s, &line, token.as_deref()))
        .await
        .map_err(|e| e.to_string())?;
    let delivery = deliver(svc, user, reply_token, quote, &text).await;
    if let Err(e) = &delivery {
        // The row keeps LINE's error (settle); the operator's log says it too.
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
    settle(svc, bot_id, delivery, user_state).await
}

async fn settle(
    svc: &Services,
    bot_id: i64,
    delivery: Result<&'static str, String>,
    user_state: &'static str,
) -> Result<(), String> {
    let (state, how, note) = match delivery {
        Ok(how) => ("sent", how.to_string(), None),
        Err(e) => (
            "failed",
            "none".to_string(),
            Some(format!("delivery failed: {e}")),
        ),
    };
    let marked = svc
        .store
        .call(move |s| outbox::settle(s, bot_id, state, &how, note.as_deref(), user_state))
        .await
        .map_err(|e| e.to_string())?;
    counted(svc, marked);
    Ok(())
}

/// A line newly marked for review (a failed or uncertain delivery) counts in
/// `kakeai_line_review_total`, as the store marks it.
fn counted(svc: &Services, marked: bool) {
    if marked {
        inc(&svc.metrics.reviews);
    }
}

/// A line a crash left `sending`, delivered again: by its reply token (LINE refuses a used
/// one: then nothing more is sent and the line is `uncertain`, for a person to look at), or
/// by push with its message's retry key (LINE answers 409 to a push it already took).
async fn redeliver(svc: &Services, r: Sending) -> Result<(), String> {
    let id = r.reply_to;
    let user = stored_user_line(svc, id).await?;
    let bot_id = r.bot_id;
    let user_state = svc
        .store
        .call(move |s| outbox::user_state_of(s, bot_id))
        .await
        .map_err(|e| e.to_string())?;
    if let Some(t) = &r.reply_token {
        match svc.api.reply(t, &r.text, None).await {
            Ok(()) => {
                inc(&svc.metrics.replies);
                return settle(svc, bot_id, Ok("reply"), user_state).await;
            }
            Err(SendError::InvalidReplyToken) => {
                let note = "resumed after a restart: LINE refused the reply token as used or expired — the reply most likely went out before the restart; not pushed, so it is never said twice";
                let marked = svc
                    .store
                    .call(move |s| {
                        outbox::settle(s, bot_id, "uncertain", "reply", Some(note), user_state)
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                counted(svc, marked);
                return Ok(());
            }
            Err(e) => {
                inc(&svc.metrics.send_failures);
                return settle(svc, bot_id, Err(e.to_string()), user_state).await;
            }
        }
    }
    let delivery = push(svc, &user, &r.text, None).await;
    settle(svc, bot_id, delivery, user_state).await
}

async fn push(
    svc: &Services,
    user: &UserLine,
    text: &str,
    quote: Option<&str>,
) -> Result<&'static str, String> {
    let key = outbox::retry_key(&user.channel_id, user.id, &user.message_id);
    match svc.api.push(&user.channel_id, text, quote, &key).await {
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
    push(svc, user, text, quote).await
}
