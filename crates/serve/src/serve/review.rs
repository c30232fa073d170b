//! The review side of LINE traffic, for the workbench's conversations view: conversations
//! newest first, each bot reply with its verdict (or the reviewer's override), pattern and
//! outcome (continued / replied / dropout, or pending while the window is open), and the
//! reviewer's 👍/👎 (for a pattern reply also the pattern's like_rate), override and note.

use crate::p;
use crate::store::sql::Db;

use crate::patterns::stamp::Millis;
use crate::store::{Store, StoreError};

#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub channel_id: String,
    pub source_type: String,
    pub last_at: Millis,
    pub replies: Vec<Reply>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub id: i64,
    pub user_text: String,
    pub text: String,
    /// The Director's status, or the reviewer's override (then `overridden`).
    pub verdict: String,
    pub overridden: bool,
    pub source: String,
    pub pattern_id: Option<i64>,
    pub outcome: Outcome,
    pub review: bool,
    pub thumb: Option<i64>,
    pub note: Option<String>,
    pub delivery: String,
    pub at: Millis,
    /// sent | failed (LINE did not take it) | withheld (nothing usable, nothing sent) |
    /// blocked (a user message the safety layers stopped: no reply, `text` empty).
    pub state: String,
    /// Why it did not reach the user: LINE's error, the withheld reason, the block's layer and
    /// reason.
    pub error: Option<String>,
    /// The verdict's findings at WARN or above, `rule STATUS: message`.
    pub findings: Vec<String>,
}

/// The findings worth showing from a stored verdict JSON.
pub fn findings_of(verdict: Option<&str>) -> Vec<String> {
    let Some(v) = verdict.and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok()) else {
        return Vec::new();
    };
    v["findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .filter(|f| !matches!(f["status"].as_str(), Some("PASS" | "INFO") | None))
                .map(|f| {
                    format!(
                        "{} {}: {}",
                        f["rule"].as_str().unwrap_or("?"),
                        f["status"].as_str().unwrap_or("?"),
                        f["message"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Why a stored bot line did not reach the user, from its state and trace.
fn error_of(state: &str, trace: &str) -> Option<String> {
    let lines: Vec<String> = serde_json::from_str(trace).unwrap_or_default();
    match state {
        "failed" => Some(
            lines
                .iter()
                .rev()
                .find_map(|l| l.strip_prefix("not delivered: ").map(str::to_string))
                .or_else(|| lines.last().cloned())
                .unwrap_or_else(|| "LINE did not take it (no error kept)".into()),
        ),
        "withheld" => Some(
            lines
                .iter()
                .find(|l| l.contains("NOTHING is sent"))
                .cloned()
                .unwrap_or_else(|| "nothing usable: nothing sent".into()),
        ),
        _ => None,
    }
}

/// The block's layer and reason from a stored safety judgment.
fn block_reason(safety: Option<&str>) -> String {
    let v = safety
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
        .unwrap_or_default();
    match (v["layer"].as_u64(), v["reason"].as_str()) {
        (Some(l), Some(r)) => format!("blocked at L{l} ({r})"),
        _ => "blocked (reason not kept)".into(),
    }
}

/// The user's blocked messages in chat `ch`, as rows of the view.
fn blocked(conn: Db<'_>, ch: &str) -> Result<Vec<Reply>, StoreError> {
    let rows = conn.query_map(
        "SELECT id, text_masked, safety, at_ms FROM line_messages
         WHERE channel_id = ?1 AND role = 'user' AND state = 'blocked'",
        p![ch],
        |r| {
            let safety: Option<String> = r.get(2)?;
            Ok(Reply {
                id: r.get(0)?,
                user_text: r.get(1)?,
                text: String::new(),
                verdict: "BLOCKED".into(),
                overridden: false,
                source: "blocked".into(),
                pattern_id: None,
                outcome: Outcome::Pending,
                review: false,
                thumb: None,
                note: None,
                delivery: "none".into(),
                at: r.get(3)?,
                state: "blocked".into(),
                error: Some(block_reason(safety.as_deref())),
                findings: Vec::new(),
            })
        },
    )?;
    Ok(rows)
}

/// What the user did after her reply (as `kakeai ingest` reads it: answered within the window
/// = replied; spoke twice = continued; silent past the window = dropout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Continued,
    Replied,
    Dropout,
    Pending,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Continued => "continued",
            Outcome::Replied => "replied",
            Outcome::Dropout => "dropout",
            Outcome::Pending => "pending",
        }
    }
}

/// The outcome from the times of the user's later lines in the chat.
pub fn outcome(
    reply_at: Millis,
    later_user_lines: &[Millis],
    now: Millis,
    window_ms: i64,
) -> Outcome {
    let within: Vec<&Millis> = later_user_lines.iter().filter(|t| **t > reply_at).collect();
    match within.first() {
        Some(first) if **first - reply_at <= window_ms => {
            if within.len() >= 2 {
                Outcome::Continued
            } else {
                Outcome::Replied
            }
        }
        Some(_) => Outcome::Dropout,
        None if now - reply_at > window_ms => Outcome::Dropout,
        None => Outcome::Pending,
    }
}

/// Every LINE conversation with its replies, newest conversation first (at most `limit`).
pub fn conversations(
    store: &Store,
    now: Millis,
    window_ms: i64,
    limit: usize,
) -> Result<Vec<Conversation>, StoreError> {
    let conn = store.db();
    // The chat's source type from its newest row (a chat keeps one; SQLite took any row's).
    let chans: Vec<(String, String, Millis)> = conn.query_map(
        "SELECT c.channel_id, m.source_type, c.last_at FROM
           (SELECT channel_id, MAX(at_ms) AS last_at, MAX(id) AS last_id FROM line_messages
             GROUP BY channel_id) c JOIN line_messages m ON m.id = c.last_id
         ORDER BY c.last_id DESC LIMIT ?1",
        p![limit as i64],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let mut out = Vec::new();
    for (ch, st, last) in chans {
        let users: Vec<Millis> = conn.query_map(
            "SELECT at_ms FROM line_messages WHERE channel_id = ?1 AND role = 'user' ORDER BY at_ms",
            p![ch],
            |r| r.get(0),
        )?;
        let replies = conn.query_map(
            "SELECT b.id, COALESCE(u.text_masked, ''), b.text_masked, b.verdict, b.verdict_override,
                    b.source, b.pattern_id, b.review, b.thumb, b.note, b.delivery, b.at_ms,
                    b.state, b.trace
             FROM line_messages b LEFT JOIN line_messages u ON u.id = b.reply_to
             WHERE b.channel_id = ?1 AND b.role = 'bot' ORDER BY b.id DESC",
            p![ch],
            |r| {
                let verdict: Option<String> = r.get(3)?;
                let over: Option<String> = r.get(4)?;
                let state: String = r.get(12)?;
                let trace: String = r.get(13)?;
                let findings = findings_of(verdict.as_deref());
                let status = verdict
                    .and_then(|v| serde_json::from_str::<serde_json::Value>(&v).ok())
                    .and_then(|v| v["status"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "—".into());
                let at: Millis = r.get(11)?;
                Ok(Reply {
                    id: r.get(0)?,
                    user_text: r.get(1)?,
                    text: r.get(2)?,
                    overridden: over.is_some(),
                    verdict: over.unwrap_or(status),
                    source: r.get(5)?,
                    pattern_id: r.get(6)?,
                    review: r.get(7)?,
                    thumb: r.get(8)?,
                    note: r.get(9)?,
                    delivery: r.get(10)?,
                    at,
                    outcome: outcome(at, &users, now, window_ms),
                    error: error_of(&state, &trace),
                    state,
                    findings,
                })
            },
        )?;
        let mut replies = replies;
        replies.extend(blocked(conn, &ch)?);
        replies.sort_by_key(|r| std::cmp::Reverse(r.id));
        out.push(Conversation {
            channel_id: ch,
            source_type: st,
            last_at: last,
            replies,
        });
    }
    Ok(out)
}

/// 👍 (`up`) or 👎 on a reply; a pattern reply's use also takes it (the pattern's like_rate).
pub fn thumb(store: &mut Store, reply_id: i64, up: bool) -> Result<Option<i64>, StoreError> {
    let v = if up { 1 } else { -1 };
    let usage: Option<i64> = store.transact(|tx| {
        let n = tx.execute(
            "UPDATE line_messages SET thumb = ?1 WHERE id = ?2 AND role = 'bot'",
            p![v, reply_id],
        )?;
        if n == 0 {
            return Err(StoreError::Invalid(format!("no LINE reply {reply_id}")));
        }
        Ok(tx.query_row(
            "SELECT usage_id FROM line_messages WHERE id = ?1",
            p![reply_id],
            |r| r.get(0),
        )?)
    })?;
    if let Some(u) = usage {
        crate::patterns::usage::feedback(store.db(), u, v)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
    }
    Ok(usage)
}

/// The reviewer's verdict (PASS / WARN / RETRY), or None to clear it.
pub fn set_override(
    store: &mut Store,
    reply_id: i64,
    status: Option<&str>,
) -> Result<(), StoreError> {
    if let Some(s) = status
        && !["PASS", "WARN", "RETRY"].contains(&s)
    {
        return Err(StoreError::Invalid(format!(
            "an override is PASS, WARN or RETRY, not {s:?}"
        )));
    }
    store.transact(|tx| {
        tx.execute(
            "UPDATE line_messages SET verdict_override = ?1 WHERE id = ?2 AND role = 'bot'",
            p![status, reply_id],
        )?;
        Ok(())
    })
}

pub fn set_note(store: &mut Store, reply_id: i64, note: &str) -> Result<(), StoreError> {
    let note = note.trim();
    store.transact(|tx| {
        tx.execute(
            "UPDATE line_messages SET note = ?1 WHERE id = ?2 AND role = 'bot'",
            p![(!note.is_empty()).then_some(note), reply_id],
        )?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::store::{self as line, BotLine, NewEvent, NewMessage};

    fn said(s: &mut Store, msg: &str, text: &str) -> i64 {
        let e = NewEvent {
            webhook_event_id: format!("ev-{msg}"),
            event_type: "message".into(),
            source_type: "user".into(),
            channel_id: "U0000000000000000000000000000abcd".into(),
            message: Some(NewMessage {
                channel_id: "U0000000000000000000000000000abcd".into(),
                source_type: "user".into(),
                message_id: Some(msg.into()),
                role: "user",
                character: "yana".into(),
                text_masked: text.into(),
                at_ms: 1_000,
                state: "queued",
                ..NewMessage::default()
            }),
            ..NewEvent::default()
        };
        line::accept(s, &[e]).unwrap()[0].flatten().unwrap()
    }

    #[test]
    fn failures_blocks_and_findings_are_shown() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open(&d.path().join("k.db")).unwrap();
        let u1 = said(&mut s, "m1", "こんにちは");
        let verdict = serde_json::json!({"status": "WARN", "findings": [
            {"rule": "tone", "status": "WARN", "message": "口調が弱め"},
            {"rule": "length", "status": "PASS", "message": "ok"}]});
        line::save_bot_line(
            &mut s,
            &BotLine {
                reply_to: u1,
                text: "やっほー".into(),
                state: "failed",
                source: "llm".into(),
                delivery: "none".into(),
                verdict: Some(verdict),
                trace: vec![
                    "attempt 1: Director WARN".into(),
                    "not delivered: LINE 400: {\"message\":\"The request body has 1 error(s)\"}"
                        .into(),
                ],
                ..BotLine::default()
            },
            "answered",
        )
        .unwrap();
        let u2 = said(&mut s, "m2", "死ね");
        let safety = serde_json::json!({"action": "block", "layer": 3, "reason": "pattern_ng"});
        line::set_blocked(&mut s, u2, Some(&safety)).unwrap();
        let u3 = said(&mut s, "m3", "秘密は？");
        line::save_bot_line(
            &mut s,
            &BotLine {
                reply_to: u3,
                text: "（却下された行）".into(),
                state: "withheld",
                source: "withheld".into(),
                trace: vec![
                    "her fallback line is RETRY too (leak): NOTHING is sent, marked for review"
                        .into(),
                ],
                ..BotLine::default()
            },
            "withheld",
        )
        .unwrap();
        let c = conversations(&s, 2_000, 60_000, 10).unwrap();
        let r = &c[0].replies;
        assert_eq!(r.len(), 3);
        assert_eq!(
            (
                r[0].state.as_str(),
                r[0].error.as_deref().unwrap_or("").contains("NOTHING")
            ),
            ("withheld", true)
        );
        assert_eq!(
            (r[1].state.as_str(), r[1].error.as_deref()),
            ("blocked", Some("blocked at L3 (pattern_ng)"))
        );
        assert_eq!(r[1].user_text, "死ね");
        assert_eq!(r[2].state, "failed");
        assert!(
            r[2].error
                .as_deref()
                .unwrap_or("")
                .contains("The request body has 1 error"),
            "{:?}",
            r[2].error
        );
        assert_eq!(r[2].findings, vec!["tone WARN: 口調が弱め".to_string()]);
    }

    #[test]
    fn outcomes_follow_the_window() {
        let w = 30 * 60_000;
        for gap in [1_000i64, 60_000, w - 1, w] {
            assert_eq!(outcome(0, &[gap], gap + 1, w), Outcome::Replied);
            assert_eq!(outcome(0, &[gap, gap + 5], gap + 9, w), Outcome::Continued);
        }
        assert_eq!(outcome(0, &[w + 1], w + 2, w), Outcome::Dropout);
        assert_eq!(outcome(0, &[], w + 1, w), Outcome::Dropout);
        assert_eq!(outcome(0, &[], w, w), Outcome::Pending);
        // Earlier lines do not count.
        assert_eq!(outcome(100, &[50, 99], 200, w), Outcome::Pending);
    }
}
