//! Dropouts (seed 000 §7 Phase 2): bot lines after which the user went quiet.
//!
//! A bot message is a dropout when it is the last bot message before the user's silence — the
//! next message of the conversation is not another bot line — and either the user's next
//! message came more than the window after it, or there is none and the window has closed by
//! `as_of`. Its id is the bot message's `message_id`; it is computed from the log each time, so
//! a later ingest that shows the user came back in time makes it disappear.

use crate::p;
use crate::store::sql::{Db, DbError, Optional};
use serde::Serialize;

use super::ingest::Role;
use super::stamp::Millis;
use super::{Character, PatternError};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dropout {
    /// The bot message's id.
    pub dropout_id: i64,
    pub conversation_id: String,
    pub user_id: String,
    pub character: Option<Character>,
    pub pattern_id: Option<i64>,
    /// When the bot said it (ISO-8601 UTC).
    pub at: String,
    /// The bot line the user did not answer (masked).
    pub bot_text: String,
    /// The user's last message before it (masked), if any.
    pub user_text: Option<String>,
    pub user_at: Option<String>,
    /// Seconds until the user spoke again in the same conversation; `None`: never (so far).
    pub returned_after_seconds: Option<i64>,
    /// Counterfactual drafts stored for it, and how many of them a reviewer accepted.
    pub drafts: u32,
    pub accepted: u32,
}

struct Row {
    id: i64,
    conv: String,
    role: Role,
    text: String,
    at_ms: Millis,
    at: String,
    character: Option<String>,
    pattern_id: Option<i64>,
}

fn load(conn: Db<'_>, conv: Option<&str>) -> Result<Vec<Row>, PatternError> {
    // Two statements: `?1 IS NULL OR conversation_id = ?1` cannot use the index, and one
    // conversation's lookup would scan every message. Conversations are ordered byte by byte
    // on both engines (detection walks them in that order).
    let order = format!(
        "ORDER BY {}, at_ms, message_id",
        conn.kind().bytewise("conversation_id")
    );
    let map = |r: &crate::store::sql::Row| -> Result<Row, DbError> {
        let role: String = r.get(2)?;
        Ok(Row {
            id: r.get(0)?,
            conv: r.get(1)?,
            role: if role == "user" {
                Role::User
            } else {
                Role::Bot
            },
            text: r.get(3)?,
            at_ms: r.get(4)?,
            at: r.get(5)?,
            character: r.get(6)?,
            pattern_id: r.get(7)?,
        })
    };
    let rows = match conv {
        Some(c) => conn.query_map(
            &format!(
                "SELECT message_id, conversation_id, role, text, at_ms, at, character, pattern_id
                 FROM conversation_messages WHERE conversation_id = ?1 {order}"
            ),
            p![c],
            map,
        )?,
        None => conn.query_map(
            &format!(
                "SELECT message_id, conversation_id, role, text, at_ms, at, character, pattern_id
                 FROM conversation_messages {order}"
            ),
            p![],
            map,
        )?,
    };
    Ok(rows)
}

fn detect(
    conn: Db<'_>,
    rows: &[Row],
    window_secs: i64,
    as_of: Millis,
) -> Result<Vec<Dropout>, PatternError> {
    let window_ms = window_secs.saturating_mul(1000);
    let mut out = Vec::new();
    let mut last_user: Option<&Row> = None;
    for (i, r) in rows.iter().enumerate() {
        let next = rows.get(i + 1).filter(|n| n.conv == r.conv);
        if r.role == Role::User {
            last_user = Some(r);
            continue;
        }
        if last_user.is_some_and(|u| u.conv != r.conv) {
            last_user = None;
        }
        let returned = match next {
            Some(n) if n.role == Role::Bot => continue,
            Some(n) if n.at_ms - r.at_ms > window_ms => Some((n.at_ms - r.at_ms + 500) / 1000),
            Some(_) => continue,
            None if as_of.saturating_sub(r.at_ms) >= window_ms => None,
            None => continue,
        };
        let (drafts, accepted): (u32, u32) = conn.query_row(
            "SELECT COUNT(*), COUNT(pattern_id) FROM counterfactual_drafts WHERE dropout_id = ?1",
            p![r.id],
            |q| Ok((q.get(0)?, q.get(1)?)),
        )?;
        let user_id: String = conn.query_row(
            "SELECT user_id FROM conversations WHERE conversation_id = ?1",
            p![r.conv],
            |q| q.get(0),
        )?;
        out.push(Dropout {
            dropout_id: r.id,
            conversation_id: r.conv.clone(),
            user_id,
            character: r.character.as_deref().and_then(Character::parse),
            pattern_id: r.pattern_id,
            at: r.at.clone(),
            bot_text: r.text.clone(),
            user_text: last_user.map(|u| u.text.clone()),
            user_at: last_user.map(|u| u.at.clone()),
            returned_after_seconds: returned,
            drafts,
            accepted,
        });
    }
    Ok(out)
}

/// Every dropout, by conversation and time.
pub fn dropouts(
    conn: Db<'_>,
    window_secs: i64,
    as_of: Millis,
) -> Result<Vec<Dropout>, PatternError> {
    detect(conn, &load(conn, None)?, window_secs, as_of)
}

/// The dropouts of one conversation.
pub fn in_conversation(
    conn: Db<'_>,
    conversation_id: &str,
    window_secs: i64,
    as_of: Millis,
) -> Result<Vec<Dropout>, PatternError> {
    detect(
        conn,
        &load(conn, Some(conversation_id))?,
        window_secs,
        as_of,
    )
}

/// One dropout by id; [`PatternError::NotADropout`] when the message is not one (or is no
/// bot message at all).
pub fn dropout(
    conn: Db<'_>,
    dropout_id: i64,
    window_secs: i64,
    as_of: Millis,
) -> Result<Dropout, PatternError> {
    let conv: Option<String> = conn
        .query_row(
            "SELECT conversation_id FROM conversation_messages WHERE message_id = ?1",
            p![dropout_id],
            |r| r.get(0),
        )
        .optional()?;
    let conv = conv.ok_or(PatternError::NotADropout(dropout_id))?;
    in_conversation(conn, &conv, window_secs, as_of)?
        .into_iter()
        .find(|d| d.dropout_id == dropout_id)
        .ok_or(PatternError::NotADropout(dropout_id))
}
