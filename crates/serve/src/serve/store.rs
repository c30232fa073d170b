//! The serve tables (migration 009): webhook events deduplicated by `webhookEventId` and LINE
//! messages in and out (masked text only). Seed 002's repository is in `cache_store`, re-exported
//! here. Every write goes through `Store::write` (BEGIN IMMEDIATE, retried).

use crate::p;
use crate::store::sql::{Db, DbError, Optional, Row};

use crate::patterns::stamp::{self, Millis};
use crate::store::{Store, StoreError};

pub use super::cache_store::{all_caches, delete_cache, delete_expired, find_cache, save_cache};

/// One accepted webhook event, as the ack path writes it.
#[derive(Debug, Clone, Default)]
pub struct NewEvent {
    pub webhook_event_id: String,
    pub event_type: String,
    pub source_type: String,
    pub channel_id: String,
    pub redelivery: bool,
    /// A text message (masked already) to write with it.
    pub message: Option<NewMessage>,
    /// Not LINE's shape: why (recorded as state `malformed: <why>`, nothing answered).
    pub malformed: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct NewMessage {
    pub channel_id: String,
    pub source_type: String,
    /// The LINE id of the message this one quotes (resolved to its thread on insert).
    pub quoted: Option<String>,
    pub message_id: Option<String>,
    pub webhook_event_id: Option<String>,
    pub role: &'static str,
    pub character: String,
    pub text_masked: String,
    pub original_content_hash: String,
    pub pii_kinds: Vec<String>,
    pub mention: bool,
    pub at_ms: Millis,
    pub state: &'static str,
    /// Who said it in a group or room (LINE's userId); '' in a 1:1 chat.
    pub speaker: String,
}

/// The bot's line, written once it was handed to LINE (or failed to be).
#[derive(Debug, Clone, Default)]
pub struct BotLine {
    pub reply_to: i64,
    pub text: String,
    pub state: &'static str,
    pub source: String,
    pub delivery: String,
    pub pattern_id: Option<i64>,
    pub usage_id: Option<i64>,
    pub safety: Option<serde_json::Value>,
    pub verdict: Option<serde_json::Value>,
    pub attempts: usize,
    pub review: bool,
    pub trace: Vec<String>,
    /// When it was said; 0: now.
    pub at_ms: Millis,
}

/// A stored user message, as the worker and the checker read it.
#[derive(Debug, Clone, PartialEq)]
pub struct UserLine {
    pub id: i64,
    pub channel_id: String,
    pub source_type: String,
    pub thread_ts: Option<String>,
    pub message_id: String,
    pub character: String,
    pub text_masked: String,
    pub at_ms: Millis,
    pub state: String,
    /// The PII second opinion: '' not run, 'llm' merged, 'failed' (see migration 014).
    pub pii_check: String,
}

/// Writes the new events (and their messages) in one transaction; returns, per event, the id
/// of its stored message when the event was new (`Some(None)` for a new event without one, or
/// a malformed one) and `None` for a duplicate — an event id seen before, or a new event id
/// carrying a LINE message id seen before (a replay: its row is settled `duplicate`).
pub fn accept(
    store: &mut Store,
    events: &[NewEvent],
) -> Result<Vec<Option<Option<i64>>>, StoreError> {
    accept_held(store, events, None)
}

/// [`accept`], the new messages held by `lease`'s instance (see `lease`).
pub fn accept_held(
    store: &mut Store,
    events: &[NewEvent],
    lease: Option<&super::lease::Lease>,
) -> Result<Vec<Option<Option<i64>>>, StoreError> {
    let now = crate::store::time::now_iso();
    let hold = lease.map(|l| (l.owner.as_str(), l.until(stamp::now_ms())));
    store.transact(|tx| {
        let mut out = Vec::with_capacity(events.len());
        for e in events {
            let n = tx.execute(
                "INSERT INTO line_events (webhook_event_id, event_type, source_type,
                   channel_id, redelivery, state, received_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT DO NOTHING",
                p![
                    e.webhook_event_id,
                    e.event_type,
                    e.source_type,
                    e.channel_id,
                    e.redelivery,
                    match (&e.malformed, &e.message) {
                        (Some(why), _) => format!("malformed: {why}"),
                        (None, Some(_)) => "queued".into(),
                        (None, None) => "done".into(),
                    },
                    now
                ],
            )?;
            if n == 0 {
                out.push(None);
                continue;
            }
            match &e.message {
                Some(m) if e.malformed.is_none() => match insert_message(tx, m, &now, hold)? {
                    Some(id) => out.push(Some(Some(id))),
                    None => {
                        tx.execute(
                            "UPDATE line_events SET state = 'duplicate' WHERE webhook_event_id = ?1",
                            p![&e.webhook_event_id],
                        )?;
                        out.push(None);
                    }
                },
                _ => out.push(Some(None)),
            }
        }
        Ok(out)
    })
}

/// Inserts a message (a LINE message id seen before is ignored: `None`).
fn insert_message(
    tx: Db<'_>,
    m: &NewMessage,
    now: &str,
    hold: Option<(&str, Millis)>,
) -> Result<Option<i64>, StoreError> {
    // Only a message someone must answer is held (a group message waits for the checker).
    let hold = hold.filter(|_| m.state.starts_with("queued"));
    let thread: Option<String> = match &m.quoted {
        None => None,
        Some(q) => Some(
            tx.query_row(
                "SELECT thread_ts FROM line_messages WHERE message_id = ?1",
                p![q],
                |r| r.get::<Option<String>>(0),
            )
            .optional()?
            .flatten()
            .unwrap_or_else(|| q.clone()),
        ),
    };
    let id: Option<i64> = tx
        .query_row(
            "INSERT INTO line_messages (channel_id, source_type, thread_ts, message_id,
           webhook_event_id, role, character, text_masked, original_content_hash, pii_kinds,
           mention, at_ms, state, created_at, speaker, lease_owner, lease_until)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
         ON CONFLICT DO NOTHING RETURNING id",
            p![
                m.channel_id,
                m.source_type,
                thread,
                m.message_id,
                m.webhook_event_id,
                m.role,
                m.character,
                m.text_masked,
                m.original_content_hash,
                serde_json::to_string(&m.pii_kinds).unwrap_or_else(|_| "[]".into()),
                m.mention,
                m.at_ms,
                m.state,
                now,
                m.speaker,
                hold.map(|h| h.0),
                hold.map(|h| h.1)
            ],
            |r| r.get(0),
        )
        .optional()?;
    Ok(id)
}

const USER_COLS: &str =
    "id, channel_id, source_type, thread_ts, message_id, character, text_masked, at_ms, state,
     pii_check";

fn user_line(r: &Row) -> Result<UserLine, DbError> {
    Ok(UserLine {
        id: r.get(0)?,
        channel_id: r.get(1)?,
        source_type: r.get(2)?,
        thread_ts: r.get(3)?,
        message_id: r.get::<Option<String>>(4)?.unwrap_or_default(),
        character: r.get(5)?,
        text_masked: r.get(6)?,
        at_ms: r.get(7)?,
        state: r.get(8)?,
        pii_check: r.get(9)?,
    })
}

pub fn user_line_by_id(store: &Store, id: i64) -> Result<Option<UserLine>, StoreError> {
    Ok(store
        .db()
        .query_row(
            &format!("SELECT {USER_COLS} FROM line_messages WHERE id = ?1"),
            p![id],
            user_line,
        )
        .optional()?)
}

/// Stores the PII second opinion's outcome for user message `id`: its new masked text and
/// kinds when the model found more, and `check` ('llm' | 'failed').
pub fn set_pii_check(
    store: &mut Store,
    id: i64,
    masked: Option<(&str, &[String])>,
    check: &str,
) -> Result<(), StoreError> {
    store.transact(|tx| {
        match masked {
            Some((text, kinds)) => tx.execute(
                "UPDATE line_messages SET text_masked = ?1, pii_kinds = ?2, pii_check = ?3
                  WHERE id = ?4",
                p![
                    text,
                    serde_json::to_string(kinds).unwrap_or_default(),
                    check,
                    id
                ],
            )?,
            None => tx.execute(
                "UPDATE line_messages SET pii_check = ?1 WHERE id = ?2",
                p![check, id],
            )?,
        };
        Ok(())
    })
}

/// User messages acknowledged but not yet answered (a restart resumes them, by push).
pub fn queued(store: &Store) -> Result<Vec<UserLine>, StoreError> {
    Ok(store.db().query_map(
        &format!(
            "SELECT {USER_COLS} FROM line_messages WHERE role = 'user' AND state = 'queued' ORDER BY id"
        ),
        p![],
        user_line,
    )?)
}

pub fn set_state(store: &mut Store, id: i64, state: &'static str) -> Result<(), StoreError> {
    store.transact(|tx| {
        tx.execute(
            "UPDATE line_messages SET state = ?1 WHERE id = ?2",
            p![state, id],
        )?;
        Ok(event_done(tx, id)?)
    })
}

/// The webhook event that carried message `id` is done.
fn event_done(tx: Db<'_>, id: i64) -> Result<(), DbError> {
    tx.execute(
        "UPDATE line_events SET state = 'done' WHERE webhook_event_id =
           (SELECT webhook_event_id FROM line_messages WHERE id = ?1)",
        p![id],
    )?;
    Ok(())
}

/// A user message the safety layers blocked: its state, and the judgment (layer, reason) that
/// the conversations view shows.
pub fn set_blocked(
    store: &mut Store,
    id: i64,
    safety: Option<&serde_json::Value>,
) -> Result<(), StoreError> {
    let json = safety.map(|v| v.to_string());
    store.transact(|tx| {
        tx.execute(
            "UPDATE line_messages SET state = 'blocked', safety = ?1 WHERE id = ?2",
            p![json, id],
        )?;
        Ok(event_done(tx, id)?)
    })
}

/// Writes her line and settles the user message it answers, in one transaction.
pub fn save_bot_line(
    store: &mut Store,
    b: &BotLine,
    user_state: &'static str,
) -> Result<i64, StoreError> {
    let now = crate::store::time::now_iso();
    let json = |v: &Option<serde_json::Value>| v.as_ref().map(|v| v.to_string());
    store.transact(|tx| {
        let (channel, source_type, thread, character, state): (String, String, Option<String>, String, String) = tx.query_row(
            "SELECT channel_id, source_type, thread_ts, character, state FROM line_messages WHERE id = ?1",
            p![b.reply_to],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        // Answered at most once: another instance (or an earlier try) settled it already.
        if !UNANSWERED.contains(&state.as_str()) {
            return Err(StoreError::Invalid(format!(
                "message {} is {state} already: it is not answered twice",
                b.reply_to
            )));
        }
        let id: i64 = tx.one(
            "INSERT INTO line_messages (channel_id, source_type, thread_ts, role, character,
               text_masked, at_ms, state, reply_to, source, delivery, pattern_id, usage_id, safety,
               verdict, attempts, review, trace, created_at)
             VALUES (?1, ?2, ?3, 'bot', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
             RETURNING id",
            p![
                channel,
                source_type,
                thread,
                character,
                b.text,
                if b.at_ms > 0 { b.at_ms } else { stamp::now_ms() },
                b.state,
                b.reply_to,
                b.source,
                b.delivery,
                b.pattern_id,
                b.usage_id,
                json(&b.safety),
                json(&b.verdict),
                b.attempts as i64,
                b.review,
                serde_json::to_string(&b.trace).unwrap_or_else(|_| "[]".into()),
                now
            ],
        )?;
        tx.execute(
            "UPDATE line_messages SET state = ?1 WHERE id = ?2",
            p![user_state, b.reply_to],
        )?;
        tx.execute(
            "UPDATE line_events SET state = 'done' WHERE webhook_event_id =
               (SELECT webhook_event_id FROM line_messages WHERE id = ?1)",
            p![b.reply_to],
        )?;
        Ok(id)
    })
}

/// User-message states her line may still answer.
pub const UNANSWERED: [&str; 3] = ["queued", "queued-nontext", "pending"];

/// One scope with unreplied messages, as the checker sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingScope {
    pub channel_id: String,
    pub thread_ts: Option<String>,
    /// The newest pending message of the scope (seed 002: `message.id`).
    pub latest: UserLine,
}

/// Scopes whose newest pending message is at least `min_wait` old and at most `max_age` old.
pub fn pending_scopes(
    store: &Store,
    now: Millis,
    min_wait_ms: i64,
    max_age_ms: i64,
) -> Result<Vec<PendingScope>, StoreError> {
    let rows: Vec<UserLine> = store.db().query_map(
        &format!(
            "SELECT {USER_COLS} FROM line_messages m WHERE role = 'user' AND state = 'pending'
               AND id = (SELECT MAX(id) FROM line_messages n WHERE n.role = 'user'
                          AND n.channel_id = m.channel_id
                          AND n.thread_ts IS NOT DISTINCT FROM m.thread_ts)
               AND at_ms <= ?1 AND at_ms >= ?2
             ORDER BY id"
        ),
        p![now - min_wait_ms, now - max_age_ms],
        user_line,
    )?;
    Ok(rows
        .into_iter()
        .map(|l| PendingScope {
            channel_id: l.channel_id.clone(),
            thread_ts: l.thread_ts.clone(),
            latest: l,
        })
        .collect())
}

/// A message's text as a model may see it: one the PII second opinion could not check is a
/// placeholder (`pii_pass`, fail closed).
pub const MODEL_TEXT: &str =
    "CASE WHEN pii_check = 'failed' THEN '［確認できなかったメッセージ］' ELSE text_masked END";

/// The scope's last `limit` lines (both sides), oldest first: (role, masked text, at).
pub fn scope_lines(
    store: &Store,
    channel: &str,
    thread: Option<&str>,
    limit: usize,
) -> Result<Vec<(String, String, Millis)>, StoreError> {
    let mut v: Vec<(String, String, Millis)> = store.db().query_map(
        &format!(
            "SELECT role, {MODEL_TEXT}, at_ms FROM line_messages
              WHERE channel_id = ?1 AND thread_ts IS NOT DISTINCT FROM ?2
              ORDER BY id DESC LIMIT ?3"
        ),
        p![channel, thread, limit as i64],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    v.reverse();
    Ok(v)
}

/// Marks every pending message of the scope up to `upto` (row id) with `state`.
pub fn settle_scope(
    store: &mut Store,
    channel: &str,
    thread: Option<&str>,
    upto: i64,
    state: &'static str,
) -> Result<usize, StoreError> {
    store.transact(|tx| {
        Ok(tx.execute(
            "UPDATE line_messages SET state = ?1 WHERE role = 'user' AND state = 'pending'
               AND channel_id = ?2 AND thread_ts IS NOT DISTINCT FROM ?3 AND id <= ?4",
            p![state, channel, thread, upto],
        )?)
    })
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
