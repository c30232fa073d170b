//! Seed 002's periodic checker: every `check_interval_seconds`, each scope (group/room, thread
//! or top level) with unreplied messages between `min_wait_seconds` and
//! `max_message_age_seconds` old is judged — unless its cached judgment is still valid — and
//! answered by push when she should speak. `delete_expired` runs once a day.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::Services;
use super::judgment::{self, JudgmentCache, JudgmentResult};
use super::metrics::inc;
use super::store::{self, PendingScope};
use crate::llm::{ChatRequest, Client, Message, ResponseFormat};
use crate::patterns::stamp;

const DAY_MS: i64 = 86_400_000;

pub async fn run(svc: Arc<Services>, stopping: Arc<AtomicBool>) {
    let every = Duration::from_secs_f64(svc.cfg.response.check_interval_seconds);
    let mut last_cleanup: Option<i64> = None;
    while !stopping.load(Ordering::SeqCst) {
        let now = stamp::now_ms();
        if last_cleanup.is_none_or(|t| now - t >= DAY_MS) {
            last_cleanup = Some(now);
            let _ = svc.store.call(move |s| store::delete_expired(s, now)).await;
        }
        check(&svc, now).await;
        // Sleep in short steps so a shutdown is not held up by a long interval.
        let until = Instant::now() + every;
        while Instant::now() < until && !stopping.load(Ordering::SeqCst) {
            tokio::time::sleep((until - Instant::now()).min(Duration::from_millis(100))).await;
        }
    }
}

/// One pass over the pending scopes.
pub async fn check(svc: &Services, now: i64) {
    let r = &svc.cfg.response;
    let (wait, age) = (r.min_wait_seconds * 1000, r.max_message_age_seconds * 1000);
    let Ok(scopes) = svc
        .store
        .call(move |s| store::pending_scopes(s, now, wait, age))
        .await
    else {
        return;
    };
    for sc in scopes {
        if sc.latest.pii_check.is_empty() && svc.cfg.pii.llm != crate::safety::pii::PiiLlmMode::Off
        {
            // Its worker is still asking the PII second opinion: judged next round.
            continue;
        }
        scope(svc, sc, now).await;
    }
}

async fn scope(svc: &Services, sc: PendingScope, now: i64) {
    let skip = &svc.cfg.response.judgment_skip;
    let (ch, th) = (sc.channel_id.clone(), sc.thread_ts.clone());
    let cache = svc
        .store
        .call(move |s| store::find_cache(s, &ch, th.as_deref()))
        .await
        .ok()
        .flatten();
    if judgment::should_skip(skip, cache.as_ref(), now, &sc.latest.message_id) {
        inc(&svc.metrics.judgments_saved);
        return;
    }
    let result = judge(svc, &sc, now).await;
    inc(&svc.metrics.judgments);
    if skip.enabled {
        let row = JudgmentCache::from_result(
            &sc.channel_id,
            sc.thread_ts.as_deref(),
            &sc.latest.message_id,
            &result,
            skip,
            now,
        );
        let _ = svc.store.call(move |s| store::save_cache(s, &row)).await;
    }
    if !result.should_respond {
        return;
    }
    let trace = vec![format!(
        "seed 002: should respond (confidence {:.2}): {}",
        result.confidence, result.reason
    )];
    // A late answer: the reply token is gone, so it goes by push.
    if let Err(e) = super::worker::respond(
        svc,
        &sc.latest,
        (None, None),
        (Instant::now(), Duration::ZERO),
        trace,
    )
    .await
    {
        inc(&svc.metrics.pipeline_errors);
        crate::say!("kakeai serve: late answer failed: {e}");
    }
    let (ch, th, upto) = (sc.channel_id.clone(), sc.thread_ts.clone(), sc.latest.id);
    let _ = svc
        .store
        .call(move |s| store::settle_scope(s, &ch, th.as_deref(), upto, "answered"))
        .await;
}

/// Asks the model with seed 002's prompt (her name, the current time) and the scope's lines.
async fn judge(svc: &Services, sc: &PendingScope, now: i64) -> JudgmentResult {
    let (ch, th, limit) = (
        sc.channel_id.clone(),
        sc.thread_ts.clone(),
        svc.cfg.response.message_limit,
    );
    let lines = svc
        .store
        .call(move |s| store::scope_lines(s, &ch, th.as_deref(), limit))
        .await
        .unwrap_or_default();
    let me = &svc.me.display_name;
    let convo: Vec<String> = lines
        .iter()
        .map(|(role, text, at)| {
            let who = if role == "bot" {
                me.as_str()
            } else {
                "参加者"
            };
            format!("[{}] {who}: {text}", stamp::iso(*at))
        })
        .collect();
    let messages = vec![
        Message::system(judgment::system_prompt(me, now)),
        Message::user(format!("会話:\n{}", convo.join("\n"))),
    ];
    let client = match Client::new(svc.llm.clone()) {
        Ok(c) => c,
        Err(e) => return judgment::parse_response(&format!("(no model: {e})")),
    };
    match client
        .chat(&ChatRequest::judge(messages, ResponseFormat::Json))
        .await
    {
        Ok(c) => judgment::parse_response(&c.text),
        Err(e) => JudgmentResult {
            should_respond: false,
            reason: format!("the model did not answer: {e}"),
            confidence: 0.0,
        },
    }
}
