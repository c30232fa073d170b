//! The usage log: recording that a pattern answered, resolving the outcome once against the
//! dropout window, and 👍/👎 feedback (seed 000 §6.1) without double counting.
//!
//! Feedback: one vote per usage-log row. A first vote adds one to like_count or dislike_count;
//! the same vote again changes nothing; the opposite vote moves the row's one vote (−1 from the
//! old counter, +1 to the new), so a pattern's like_count + dislike_count always equals its
//! voted rows. The pattern is the one the row names — the seed's function took the pattern id
//! separately and could credit the wrong pattern.

use crate::p;
use crate::store::sql::{Db, Optional};
use serde::Serialize;

use super::stamp::{self, Millis};
use super::{Character, Pattern, PatternError, atomic, db};
use crate::safety::pii;

/// One use of a pattern in a conversation. Texts are PII-masked before they are stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewUse {
    pub pattern_id: i64,
    pub conversation_id: Option<String>,
    pub user_id: Option<String>,
    /// The user's message the pattern answered.
    pub user_message: Option<String>,
    /// What was said; `None` = the pattern's bot_response.
    pub bot_response: Option<String>,
    /// `None` = the pattern's character; anything else must match it.
    pub character: Option<Character>,
    pub at: Millis,
}

/// Writes a usage-log row and counts the use on the pattern (used_count + 1, last_used_at).
/// Returns the row's log_id.
pub fn record_use(db: Db<'_>, u: &NewUse) -> Result<i64, PatternError> {
    atomic(db, |conn| {
        let p = db::get(conn, u.pattern_id)?;
        if let Some(c) = u.character.filter(|c| *c != p.character) {
            return Err(PatternError::invalid(
                "character",
                format!("pattern {} is {}'s, not {c}'s", p.pattern_id, p.character),
            ));
        }
        let masked = |s: &str| pii::shared().mask(s).masked_text;
        // Identifiers that look personal are stored as keyed pseudonyms, as ingest stores them.
        let conversation = u
            .conversation_id
            .as_deref()
            .map(pii::pseudonym)
            .transpose()?;
        let user = u.user_id.as_deref().map(pii::pseudonym).transpose()?;
        let at = stamp::iso(u.at);
        let log_id: i64 = conn.one(
            "INSERT INTO prowrestling_usage_log (pattern_id, conversation_id, user_id,
                 user_message, bot_response, character, timestamp)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING log_id",
            p![
                p.pattern_id,
                conversation,
                user,
                u.user_message.as_deref().map(masked),
                masked(u.bot_response.as_deref().unwrap_or(&p.bot_response)),
                p.character.as_str(),
                at
            ],
        )?;
        // ISO-8601 UTC text sorts as time (byte by byte), so the larger keeps the latest use.
        let kind = conn.kind();
        conn.execute(
            &format!(
                "UPDATE prowrestling_patterns
                 SET used_count = COALESCE(used_count, 0) + 1,
                     last_used_at = {},
                     updated_at = ?3
                 WHERE pattern_id = ?1",
                kind.greatest(
                    &kind.bytewise("COALESCE(last_used_at, '')"),
                    &kind.bytewise("CAST(?2 AS TEXT)")
                )
            ),
            p![p.pattern_id, at, stamp::iso(stamp::now_ms())],
        )?;
        Ok(log_id)
    })
}

/// What is known about the user after a pattern's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// The user's next message came at `at`; `continued`: they spoke again after it without a
    /// silence longer than the window (the banter went on).
    Replied { at: Millis, continued: bool },
    /// No user message up to `as_of`.
    Silent { as_of: Millis },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Resolution {
    /// Answered within the window (success_count + 1).
    Success {
        reaction_time_seconds: i64,
        continued: bool,
    },
    /// No answer within the window (failure_count + 1).
    Failure,
    /// No answer yet, but the window is still open: nothing written.
    Pending,
}

/// Resolves a use's outcome against a window of `window_secs`: a reply at most `window_secs`
/// after the use is a success (its reaction time recorded, next_message_exists = 1); a later
/// reply, or silence once the window has closed, is a failure. Each use is resolved once.
pub fn resolve_use(
    db: Db<'_>,
    log_id: i64,
    obs: Observation,
    window_secs: i64,
) -> Result<Resolution, PatternError> {
    if window_secs <= 0 {
        return Err(PatternError::invalid(
            "window",
            "must be at least one second",
        ));
    }
    atomic(db, |conn| {
        let (pattern_id, at, reaction) = load_log(conn, log_id)?;
        if reaction.is_some() {
            return Err(PatternError::AlreadyResolved(log_id));
        }
        let used = at
            .as_deref()
            .and_then(stamp::from_db)
            .ok_or_else(|| PatternError::invalid("timestamp", format!("log {log_id} has none")))?;
        let window_ms = window_secs.saturating_mul(1000);
        let resolution = match obs {
            Observation::Replied { at, .. } if at < used => {
                return Err(PatternError::invalid(
                    "reply",
                    format!(
                        "the reply ({}) is before the use ({})",
                        stamp::iso(at),
                        stamp::iso(used)
                    ),
                ));
            }
            Observation::Replied { at, continued } if at - used <= window_ms => {
                Resolution::Success {
                    reaction_time_seconds: (at - used + 500) / 1000,
                    continued,
                }
            }
            Observation::Replied { .. } => Resolution::Failure,
            Observation::Silent { as_of } if as_of.saturating_sub(used) >= window_ms => {
                Resolution::Failure
            }
            Observation::Silent { .. } => return Ok(Resolution::Pending),
        };
        let counter = match resolution {
            Resolution::Success {
                reaction_time_seconds,
                continued,
            } => {
                let label = if continued { "continued" } else { "replied" };
                conn.execute(
                    "UPDATE prowrestling_usage_log SET user_reaction = ?2,
                         reaction_time_seconds = ?3, next_message_exists = 1 WHERE log_id = ?1",
                    p![log_id, label, reaction_time_seconds],
                )?;
                "success_count"
            }
            _ => {
                conn.execute(
                    "UPDATE prowrestling_usage_log SET user_reaction = 'dropout',
                         next_message_exists = 0 WHERE log_id = ?1",
                    p![log_id],
                )?;
                "failure_count"
            }
        };
        if let Some(pid) = pattern_id {
            conn.execute(
                &format!(
                    "UPDATE prowrestling_patterns SET {counter} = COALESCE({counter}, 0) + 1,
                         updated_at = ?2 WHERE pattern_id = ?1"
                ),
                p![pid, stamp::iso(stamp::now_ms())],
            )?;
        }
        Ok(resolution)
    })
}

/// Marks a successful use whose banter went on (more evidence arrived after it was resolved).
/// Counters are untouched; returns whether the row changed.
pub fn mark_continued(conn: Db<'_>, log_id: i64) -> Result<bool, PatternError> {
    load_log(conn, log_id)?;
    let n = conn.execute(
        "UPDATE prowrestling_usage_log SET user_reaction = 'continued'
         WHERE log_id = ?1 AND user_reaction = 'replied'",
        p![log_id],
    )?;
    Ok(n > 0)
}

/// A usage-log row's pattern, timestamp and outcome label.
type LogHead = (Option<i64>, Option<String>, Option<String>);

fn load_log(conn: Db<'_>, log_id: i64) -> Result<LogHead, PatternError> {
    conn.query_row(
        "SELECT pattern_id, timestamp, user_reaction FROM prowrestling_usage_log
         WHERE log_id = ?1",
        p![log_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .optional()?
    .ok_or(PatternError::NoSuchLog(log_id))
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeedbackChange {
    pub log_id: i64,
    pub feedback: i64,
    /// The row's vote before this call.
    pub previous: Option<i64>,
    /// The pattern after the change (`None` for a row without a pattern).
    pub pattern: Option<Pattern>,
}

/// Records 👍 (+1) or 👎 (−1) on a usage-log row; anything else is refused.
pub fn feedback(db: Db<'_>, log_id: i64, value: i64) -> Result<FeedbackChange, PatternError> {
    if value != 1 && value != -1 {
        return Err(PatternError::BadFeedback(value));
    }
    atomic(db, |conn| {
        let (pattern_id, previous): (Option<i64>, Option<i64>) = conn
            .query_row(
                "SELECT pattern_id, feedback FROM prowrestling_usage_log WHERE log_id = ?1",
                p![log_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?
            .ok_or(PatternError::NoSuchLog(log_id))?;
        if previous != Some(value) {
            conn.execute(
                "UPDATE prowrestling_usage_log SET feedback = ?2 WHERE log_id = ?1",
                p![log_id, value],
            )?;
            if let Some(pid) = pattern_id {
                let (like, dislike) = match (previous, value) {
                    (Some(_), 1) => (1, -1),
                    (Some(_), _) => (-1, 1),
                    (None, 1) => (1, 0),
                    (None, _) => (0, 1),
                };
                let kind = conn.kind();
                conn.execute(
                    &format!(
                        "UPDATE prowrestling_patterns
                         SET like_count = {}, dislike_count = {}, updated_at = ?4
                         WHERE pattern_id = ?1",
                        kind.greatest("0", "COALESCE(like_count, 0) + ?2"),
                        kind.greatest("0", "COALESCE(dislike_count, 0) + ?3"),
                    ),
                    p![pid, like, dislike, stamp::iso(stamp::now_ms())],
                )?;
            }
        }
        let pattern = pattern_id.map(|p| db::get(conn, p)).transpose()?;
        Ok(FeedbackChange {
            log_id,
            feedback: value,
            previous,
            pattern,
        })
    })
}
