//! How every write reaches the database: inside a `BEGIN IMMEDIATE` transaction (the write lock
//! is taken up front, so SQLite's busy timeout applies — a deferred transaction that upgrades
//! to a write fails at once with "database is locked"), retried a bounded number of times while
//! another process holds the lock, committed before the caller hears of success.

use std::time::Duration;

use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};

/// How long one attempt waits for another writer's lock (SQLite's busy handler).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Attempts after the first when the lock is still held once [`BUSY_TIMEOUT`] ran out, so a
/// write waits at most about `(1 + BUSY_RETRIES) × BUSY_TIMEOUT` before it fails.
pub const BUSY_RETRIES: u32 = 3;

/// Exit code of a command whose write could not get the store's lock in time (or otherwise
/// could not be written): not bad input (2), not an endpoint failure (3).
pub const EXIT_STORE: i32 = 4;

/// True when `e` says another connection holds a lock (SQLITE_BUSY / SQLITE_LOCKED and their
/// extended codes): worth waiting and trying again, and not the input's fault.
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `f` in an IMMEDIATE transaction and commits it. When the lock cannot be had (at BEGIN,
/// during `f`, or at COMMIT) the transaction is rolled back and the whole of `f` is tried again,
/// up to [`BUSY_RETRIES`] times; any other error rolls back and is returned at once. `f` may
/// therefore run more than once: it must only touch the database through `tx`.
pub fn immediate<T, E>(
    conn: &mut Connection,
    mut f: impl FnMut(&Transaction<'_>) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<rusqlite::Error> + BusyCheck,
{
    while_busy(|| {
        let tx = immediate_tx(conn)?;
        let v = f(&tx)?;
        tx.commit()?;
        Ok(v)
    })
}

/// Runs `once` again while it fails because the lock is held, up to [`BUSY_RETRIES`] times
/// with a growing pause; any other outcome is returned as it is.
pub fn while_busy<T, E: BusyCheck>(mut once: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut tries = 0;
    loop {
        match once() {
            Err(e) if tries < BUSY_RETRIES && e.is_busy() => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20 * u64::from(tries)));
            }
            r => return r,
        }
    }
}

/// A transaction holding the write lock from its start.
pub fn immediate_tx(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

/// Errors that can say "the lock was busy".
pub trait BusyCheck {
    fn is_busy(&self) -> bool;
}

impl BusyCheck for rusqlite::Error {
    fn is_busy(&self) -> bool {
        is_busy(self)
    }
}

impl BusyCheck for super::StoreError {
    fn is_busy(&self) -> bool {
        match self {
            super::StoreError::Sql(e) => is_busy(e),
            super::StoreError::Db(e) => e.is_busy(),
            _ => false,
        }
    }
}

impl BusyCheck for crate::patterns::PatternError {
    fn is_busy(&self) -> bool {
        match self {
            crate::patterns::PatternError::Sql(e) => is_busy(e),
            crate::patterns::PatternError::Db(e) => e.is_busy(),
            _ => false,
        }
    }
}

impl BusyCheck for super::sql::DbError {
    fn is_busy(&self) -> bool {
        super::sql::DbError::is_busy(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two(dir: &std::path::Path) -> (Connection, Connection) {
        let p = dir.join("t.db");
        let a = Connection::open(&p).unwrap();
        a.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (v INTEGER);")
            .unwrap();
        let b = Connection::open(&p).unwrap();
        (a, b)
    }

    #[test]
    fn a_write_waits_for_the_lock_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let (a, mut b) = two(dir.path());
        drop(a);
        b.busy_timeout(Duration::from_secs(5)).unwrap();
        let path = dir.path().join("t.db");
        let (locked_tx, locked) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            let mut a = Connection::open(&path).unwrap();
            let tx = a
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .unwrap();
            tx.execute("INSERT INTO t VALUES (1)", []).unwrap();
            locked_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            tx.commit().unwrap();
        });
        locked.recv().unwrap();
        let n: i64 = immediate(&mut b, |tx| {
            tx.execute("INSERT INTO t VALUES (2)", [])?;
            tx.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
        })
        .unwrap();
        holder.join().unwrap();
        assert_eq!(
            n, 2,
            "the write waited for the holder's commit, then saw its row"
        );
    }

    #[test]
    fn a_lock_held_too_long_is_a_busy_error_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let (mut a, mut b) = two(dir.path());
        b.busy_timeout(Duration::from_millis(10)).unwrap();
        let tx = a
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .unwrap();
        let mut runs = 0;
        let r: Result<(), rusqlite::Error> = immediate(&mut b, |tx| {
            runs += 1;
            tx.execute("INSERT INTO t VALUES (3)", []).map(drop)
        });
        let e = r.unwrap_err();
        assert!(is_busy(&e), "{e}");
        assert_eq!(
            runs, 0,
            "f never ran: BEGIN IMMEDIATE itself waited and failed"
        );
        tx.rollback().unwrap();
        let n: i64 = b
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }
}
