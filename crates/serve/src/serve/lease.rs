//! Several `kakeai serve --line` instances on one store (issue 24 §3). Every webhook event is
//! stored once (its `webhookEventId` is unique, so a redelivery to any instance is a
//! duplicate); the user message it carries is **held** by the instance that acknowledged it
//! (`lease_owner`, `lease_until`), which renews its holds while it lives. An instance that
//! dies stops renewing: once a hold has lapsed, another instance takes the message over — a
//! message never answered, or a line left `sending` (delivered again under the same retry
//! key, so LINE drops a repeat). Whatever happens to the holds, a message is answered at most
//! once: her line is written only while its message is still unanswered, in a transaction
//! that serialises with every other writer (`store::save_bot_line`).

use crate::p;
use crate::patterns::stamp::{self, Millis};
use crate::store::sql::Kind;
use crate::store::{Store, StoreError};

use super::outbox::{self, Sending};

/// User-message states an instance may hold: acknowledged and not yet settled.
pub const HELD_STATES: &str = "('queued', 'queued-nontext', 'sending')";

/// This instance's claim: its token and how long a hold lasts.
#[derive(Debug, Clone)]
pub struct Lease {
    pub owner: String,
    pub ms: i64,
}

impl Lease {
    /// A fresh token for this process (pid and start time: unique across restarts).
    pub fn new(seconds: f64) -> Lease {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Lease {
            owner: format!("serve-{}-{nanos}", std::process::id()),
            ms: (seconds * 1000.0).round().max(1.0) as i64,
        }
    }

    /// When a hold taken or renewed at `now` lapses.
    pub fn until(&self, now: Millis) -> Millis {
        now + self.ms
    }
}

/// A message taken over from an instance whose hold lapsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Taken {
    /// Never answered: answer it (by push; its reply token went with the other instance).
    Queued { id: i64, channel: String },
    /// Her line was on its way when the holder stopped: deliver it again.
    Sending(Sending),
}

/// Extends this instance's holds on the messages it still answers; how many.
pub fn renew(store: &mut Store, lease: &Lease, now: Millis) -> Result<usize, StoreError> {
    store.transact(|tx| {
        Ok(tx.execute(
            &format!(
                "UPDATE line_messages SET lease_until = ?1
                  WHERE lease_owner = ?2 AND role = 'user' AND state IN {HELD_STATES}"
            ),
            p![lease.until(now), lease.owner],
        )?)
    })
}

/// Takes over (at most `limit`) messages nobody holds any more: holds that lapsed before
/// `now`, and messages held by nobody. With `everything` (one instance on an SQLite file,
/// starting) every unsettled message is taken, as a restart always did.
pub fn take_over(
    store: &mut Store,
    lease: &Lease,
    now: Millis,
    everything: bool,
    limit: usize,
) -> Result<Vec<Taken>, StoreError> {
    let rows: Vec<(i64, String, String)> = store.transact(|tx| {
        let rows: Vec<(i64, String, String)> = tx.query_map(
            &format!(
                "SELECT id, channel_id, state FROM line_messages
                  WHERE role = 'user' AND state IN {HELD_STATES}
                    AND (?1 = 1 OR lease_until IS NULL OR lease_until < ?2)
                    AND lease_owner IS DISTINCT FROM ?3
                  ORDER BY id LIMIT ?4"
            ),
            p![everything, now, lease.owner, limit as i64],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        for (id, _, _) in &rows {
            tx.execute(
                "UPDATE line_messages SET lease_owner = ?1, lease_until = ?2 WHERE id = ?3",
                p![lease.owner, lease.until(now), id],
            )?;
        }
        Ok(rows)
    })?;
    as_taken(store, rows)
}

/// The messages this instance holds and has not settled (to find those no worker has: see
/// `worker::hold`).
pub fn held_here(store: &mut Store, lease: &Lease) -> Result<Vec<Taken>, StoreError> {
    let rows: Vec<(i64, String, String)> = store.db().query_map(
        &format!(
            "SELECT id, channel_id, state FROM line_messages
              WHERE role = 'user' AND state IN {HELD_STATES} AND lease_owner = ?1
              ORDER BY id LIMIT 500"
        ),
        p![lease.owner],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    as_taken(store, rows)
}

/// Held rows (id, channel, state) as work: a line left `sending` is delivered again, the rest
/// answered.
fn as_taken(store: &mut Store, rows: Vec<(i64, String, String)>) -> Result<Vec<Taken>, StoreError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let sending = outbox::sending(store)?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, channel, state)| match state.as_str() {
            "sending" => sending
                .iter()
                .find(|s| s.reply_to == id)
                .cloned()
                .map(Taken::Sending),
            _ => Some(Taken::Queued { id, channel }),
        })
        .collect())
}

/// A starting instance takes over everything on SQLite (one machine: nobody else answers),
/// only lapsed holds on PostgreSQL (other instances may be answering).
pub fn at_start(store: &mut Store, lease: &Lease) -> Result<Vec<Taken>, StoreError> {
    let everything = store.kind() == Kind::Sqlite;
    take_over(store, lease, stamp::now_ms(), everything, 10_000)
}
