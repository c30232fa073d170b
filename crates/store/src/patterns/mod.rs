//! The プロレス reply-pattern DB (issue 6 §4, seed 000 §5–§7): patterns and their usage log,
//! outcomes within the dropout window, 👍/👎 feedback, score and rank, best match, conversation
//! log ingest, dropouts and counterfactual drafts.
//!
//! Every function takes a [`Db`] of a migrated [`crate::store::Store`] on either engine
//! (`store.db()`, or the `Db` of an open transaction, e.g. inside `store.transact`) and is
//! atomic on its own: it runs inside a savepoint, so it also nests inside a caller's
//! transaction (see [`atomic`]).

pub mod best;
pub mod carry;
pub mod cold;
pub mod counterfactual;
pub mod db;
pub mod dropouts;
pub mod exchange;
pub mod ingest;
pub mod logline;
pub mod review;
pub mod score;
pub mod stamp;
mod types;
pub mod usage;

pub use best::{BestMatch, BestQuery, best_match, relevance};
pub use db::{add, get, list, list_scored, scored};
pub use score::{Rank, ScoreInputs, confidence, rank, score};
pub use types::*;
pub use usage::{
    FeedbackChange, NewUse, Observation, Resolution, feedback, mark_continued, record_use,
    resolve_use,
};

use crate::store::sql::{Db, DbError};
use crate::store::write::BusyCheck;

/// The seed's dropout window: no user message within 30 minutes of a bot line.
pub const DEFAULT_WINDOW_SECS: i64 = 30 * 60;

#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("database error: {0}")]
    Db(#[from] crate::store::sql::DbError),
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("no pattern with id {0}")]
    NoSuchPattern(i64),
    #[error("no usage-log row with id {0}")]
    NoSuchLog(i64),
    #[error("usage-log row {0} already has its outcome; an outcome is recorded once")]
    AlreadyResolved(i64),
    #[error("feedback must be +1 (👍) or -1 (👎), not {0}")]
    BadFeedback(i64),
    #[error(
        "a pattern with the same user_message_type, bot_response and character already exists \
         (pattern {existing})"
    )]
    Duplicate { existing: i64 },
    #[error("message {0} is not a dropout (a bot line the user did not answer within the window)")]
    NotADropout(i64),
    /// The installation secret for keyed digests could not be read or created.
    #[error(transparent)]
    Key(#[from] crate::safety::pii::KeyError),
}

impl PatternError {
    pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> PatternError {
        PatternError::Invalid {
            field,
            message: message.into(),
        }
    }
}

/// Runs `f` atomically: all of it is kept, or none of it. Inside a caller's transaction (either
/// engine) it runs in a savepoint, so it nests. Outside one it is a write transaction of its
/// own: on SQLite an IMMEDIATE one (the write lock up front, waiting for it through the busy
/// timeout, rather than failing when a read has to become a write), run once; on PostgreSQL a
/// SERIALIZABLE one, run again while another writer is in the way — so `f` may run more than
/// once and must only touch the database through the `Db` it is given.
pub(crate) fn atomic<T, E>(db: Db<'_>, mut f: impl FnMut(Db<'_>) -> Result<T, E>) -> Result<T, E>
where
    E: From<DbError> + BusyCheck,
{
    match db {
        Db::Sqlite(conn) if conn.is_autocommit() => {
            begin_immediate(conn).map_err(DbError::from)?;
            match f(db) {
                Ok(v) => {
                    if let Err(e) = conn.execute_batch("COMMIT") {
                        let _ = conn.execute_batch("ROLLBACK");
                        return Err(DbError::from(e).into());
                    }
                    Ok(v)
                }
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    Err(e)
                }
            }
        }
        Db::Sqlite(_) => savepoint(db, f),
        Db::Pg(c) if c.in_transaction() => savepoint(db, f),
        Db::Pg(c) => crate::store::sql::pg_write(c, f),
    }
}

const SAVEPOINT: &str = "SAVEPOINT kakeai_patterns";

fn savepoint<T, E: From<DbError>>(
    db: Db<'_>,
    mut f: impl FnMut(Db<'_>) -> Result<T, E>,
) -> Result<T, E> {
    db.batch(SAVEPOINT)?;
    released(db, f(db))
}

/// Ends the savepoint `r` ran in: released when it succeeded, rolled back when it failed.
fn released<T, E: From<DbError>>(db: Db<'_>, r: Result<T, E>) -> Result<T, E> {
    match r {
        Ok(v) => {
            db.batch("RELEASE kakeai_patterns")?;
            Ok(v)
        }
        Err(e) => {
            // The rollback can only fail if the connection is gone; the first error says more.
            // (On PostgreSQL it also ends the aborted state the error left the transaction in.)
            let _ = db.batch("ROLLBACK TO kakeai_patterns; RELEASE kakeai_patterns");
            Err(e)
        }
    }
}

/// `BEGIN IMMEDIATE`, tried again (after the busy timeout ran out) a bounded number of times.
fn begin_immediate(conn: &rusqlite::Connection) -> Result<(), rusqlite::Error> {
    let mut tries = 0;
    loop {
        match conn.execute_batch("BEGIN IMMEDIATE") {
            Err(e)
                if tries < crate::store::write::BUSY_RETRIES
                    && crate::store::write::is_busy(&e) =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20 * u64::from(tries)));
            }
            r => return r,
        }
    }
}
