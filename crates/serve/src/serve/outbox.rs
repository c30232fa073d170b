//! Her lines on their way to LINE, so a crash never makes her say one twice: a line is
//! written `sending` (with how it is being sent) before it is handed to LINE, and settled
//! `sent` / `failed` (LINE's error kept in its trace) / `uncertain` after. A start finds the
//! lines a crash left `sending` and delivers them again where LINE can tell a repeat: a push
//! carries an `X-Line-Retry-Key` derived from the user's message (the same key before and
//! after the crash, so LINE answers 409 to a push it already accepted), and a reply re-uses
//! its single-use reply token (LINE refuses a used one).

use crate::p;
use crate::store::sql::Optional;

use super::store::BotLine;
use crate::store::{Store, StoreError};

/// A line a crash left `sending`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sending {
    pub bot_id: i64,
    pub reply_to: i64,
    pub channel_id: String,
    pub text: String,
    /// The reply token it was being replied with; None: it was being pushed.
    pub reply_token: Option<String>,
}

const REPLY: &str = "sending-reply:";
const PUSH: &str = "sending-push";

/// Writes `line` as `sending` (its user message too), before it is handed to LINE.
pub fn mark_sending(
    store: &mut Store,
    line: &BotLine,
    reply_token: Option<&str>,
) -> Result<i64, StoreError> {
    let marked = BotLine {
        state: "sending",
        delivery: match reply_token {
            Some(t) => format!("{REPLY}{t}"),
            None => PUSH.into(),
        },
        ..line.clone()
    };
    super::store::save_bot_line(store, &marked, "sending")
}

/// Settles a `sending` line: its state, how it went out, a note for its trace (LINE's error
/// for a failure), and its user message's final state. True when this marked the line for
/// review and it was not before (failed, uncertain), so the review counter counts it once.
pub fn settle(
    store: &mut Store,
    bot_id: i64,
    state: &'static str,
    delivery: &str,
    note: Option<&str>,
    user_state: &'static str,
) -> Result<bool, StoreError> {
    store.transact(|tx| {
        let (trace, reply_to, was): (String, i64, bool) = tx.query_row(
            "SELECT trace, reply_to, review FROM line_messages WHERE id = ?1",
            p![bot_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let mut trace: Vec<String> = serde_json::from_str(&trace).unwrap_or_default();
        if let Some(n) = note {
            trace.push(n.to_string());
        }
        let review = state != "sent";
        tx.execute(
            "UPDATE line_messages SET state = ?1, delivery = ?2, trace = ?3,
               review = CASE WHEN review > ?4 THEN review ELSE ?4 END WHERE id = ?5",
            p![
                state,
                delivery,
                serde_json::to_string(&trace).unwrap_or_else(|_| "[]".into()),
                review,
                bot_id
            ],
        )?;
        tx.execute(
            "UPDATE line_messages SET state = ?1 WHERE id = ?2",
            p![user_state, reply_to],
        )?;
        Ok(review && !was)
    })
}

/// The lines a crash left `sending`, oldest first.
pub fn sending(store: &Store) -> Result<Vec<Sending>, StoreError> {
    Ok(store.db().query_map(
        "SELECT id, reply_to, channel_id, text_masked, delivery FROM line_messages
          WHERE role = 'bot' AND state = 'sending' ORDER BY id",
        p![],
        |r| {
            let delivery: String = r.get(4)?;
            Ok(Sending {
                bot_id: r.get(0)?,
                reply_to: r.get(1)?,
                channel_id: r.get(2)?,
                text: r.get(3)?,
                reply_token: delivery.strip_prefix(REPLY).map(str::to_string),
            })
        },
    )?)
}

/// The user-message state a settled line leaves (`answered`, or `unsupported` for her
/// text-only line), read back for a resumed one.
pub fn user_state_of(store: &Store, bot_id: i64) -> Result<&'static str, StoreError> {
    let source: Option<String> = store
        .db()
        .query_row(
            "SELECT source FROM line_messages WHERE id = ?1",
            p![bot_id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(if source.as_deref() == Some("canned") {
        "unsupported"
    } else {
        "answered"
    })
}

/// The push retry key for the answer to a user message: a UUID (LINE wants a hexadecimal
/// UUID) from a digest of the chat and the message, the same on every attempt and every start.
pub fn retry_key(channel: &str, user_row: i64, message_id: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(format!("kakeai-push\n{channel}\n{user_row}\n{message_id}"));
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    uuid::Builder::from_random_bytes(b)
        .into_uuid()
        .hyphenated()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_keys_are_stable_uuids_one_per_message() {
        let a = retry_key("U1", 7, "m7");
        assert_eq!(a, retry_key("U1", 7, "m7"));
        assert_ne!(a, retry_key("U1", 8, "m8"));
        assert_ne!(a, retry_key("U2", 7, "m7"));
        let u = uuid::Uuid::parse_str(&a).unwrap();
        assert_eq!(u.get_version_num(), 4);
        assert_eq!(a.len(), 36);
    }

    /// A line is counted for review once: when a failed or uncertain delivery marks it, not
    /// when it is sent, nor again when it was marked already (the pipeline counted it then).
    #[test]
    fn settle_says_when_it_newly_marks_a_line_for_review() {
        use crate::serve::store::{self as line, NewEvent, NewMessage};
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open(&d.path().join("k.db")).unwrap();
        let cases = [
            ("sent", false, false),
            ("failed", false, true),
            ("uncertain", false, true),
            ("uncertain", true, false),
            ("sent", true, false),
        ];
        for (i, (state, marked, want)) in cases.into_iter().enumerate() {
            let e = NewEvent {
                webhook_event_id: format!("ev-{i}"),
                event_type: "message".into(),
                source_type: "user".into(),
                channel_id: "U0000000000000000000000000000abcd".into(),
                message: Some(NewMessage {
                    channel_id: "U0000000000000000000000000000abcd".into(),
                    source_type: "user".into(),
                    message_id: Some(format!("m{i}")),
                    role: "user",
                    character: "yana".into(),
                    text_masked: "おはよう".into(),
                    at_ms: 1_000,
                    state: "queued",
                    ..NewMessage::default()
                }),
                ..NewEvent::default()
            };
            let user = line::accept(&mut s, &[e]).unwrap()[0].flatten().unwrap();
            let b = BotLine {
                reply_to: user,
                text: "おはよ".into(),
                review: marked,
                ..BotLine::default()
            };
            let id = mark_sending(&mut s, &b, Some("tok")).unwrap();
            let got = settle(&mut s, id, state, "reply", Some("note"), "answered").unwrap();
            assert_eq!(got, want, "{state} marked before: {marked}");
            let review: bool = s
                .db()
                .one("SELECT review FROM line_messages WHERE id = ?1", p![id])
                .unwrap();
            assert_eq!(review, marked || state != "sent");
        }
    }
}
