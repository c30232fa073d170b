//! One SQL interface over two engines (issue 24 §1): SQLite for one machine, PostgreSQL for a
//! team. Code that reads or writes the store takes a [`Db`] — a borrowed connection or
//! transaction on either engine — and runs statements written once ([`dialect`]); values
//! cross as [`Value`]s.
//!
//! Writes go through `Store::transact` ([`sqlite_write`] / [`pg_write`]): on SQLite a `BEGIN IMMEDIATE` transaction (the write
//! lock up front, see `store::write`), on PostgreSQL a `SERIALIZABLE` one, so a transaction
//! sees the database as if it ran alone on both engines; a lock held too long (SQLite) or a
//! serialization failure or deadlock (PostgreSQL) rolls back and runs the closure again, a
//! bounded number of times; on PostgreSQL a transaction whose connection was lost before it
//! committed runs once more on a new connection. The closure may therefore run more than once
//! and must only touch the database through the `Db` it is given. Acknowledged means
//! committed, on both.

pub mod dialect;
mod pgconn;
mod pgtypes;
mod resolve;
mod value;

use std::time::Duration;

pub use dialect::Kind;
pub use pgconn::{Notice, PgConn, QUIET, RESOLVE, lost_connection};
pub use value::{FromValue, Row, ToValue, Value};

/// Why a statement failed, on either engine.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{message}")]
    Pg {
        /// SQLSTATE (`40001`, `23505`, …) when the server sent one.
        code: Option<String>,
        message: String,
    },
    /// The URL (password hidden), then why and what to do.
    #[error("{0}")]
    Connect(String),
    #[error("the query returned no rows")]
    NoRows,
    #[error("{0}")]
    Column(String),
    #[error("the database connection has closed")]
    Closed,
    /// The PostgreSQL connection was lost (a restart, a crash, a network cut) or could not be
    /// made again; the next statement tries again. `unsure`: lost during a COMMIT whose
    /// outcome could not be learned (not acknowledged, not retried).
    #[error("{message}")]
    Lost { message: String, unsure: bool },
}

impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> DbError {
        match e.as_db_error() {
            Some(db) => DbError::Pg {
                code: Some(db.code().code().to_string()),
                message: db.message().to_string(),
            },
            None => DbError::Pg {
                code: None,
                message: crate::store::pg::chain(&e),
            },
        }
    }
}

impl DbError {
    /// Another writer is in the way: worth running the transaction again.
    pub fn is_busy(&self) -> bool {
        match self {
            DbError::Sqlite(e) => crate::store::write::is_busy(e),
            DbError::Pg { code: Some(c), .. } => c == "40001" || c == "40P01",
            _ => false,
        }
    }

    /// The server could not be reached or the connection was lost: what `cannot reach` means
    /// (exit 3).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, DbError::Connect(_) | DbError::Lost { .. })
    }

    /// The server refused to write: a read-only role or transaction (25006) or no privilege
    /// on the table (42501). Exit 4, as any write the store did not take.
    pub fn is_refused_write(&self) -> bool {
        matches!(self, DbError::Pg { code: Some(c), .. } if c == "25006" || c == "42501")
    }

    /// A UNIQUE (or primary key) constraint refused the row.
    pub fn is_unique_violation(&self) -> bool {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            }
            DbError::Pg { code: Some(c), .. } => c == "23505",
            _ => false,
        }
    }
}

/// `Ok(None)` for "no rows", as rusqlite's `OptionalExtension`.
pub trait Optional<T> {
    fn optional(self) -> Result<Option<T>, DbError>;
}

impl<T> Optional<T> for Result<T, DbError> {
    fn optional(self) -> Result<Option<T>, DbError> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(DbError::NoRows) | Err(DbError::Sqlite(rusqlite::Error::QueryReturnedNoRows)) => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// A borrowed connection (or open transaction) on either engine.
#[derive(Clone, Copy)]
pub enum Db<'a> {
    Sqlite(&'a rusqlite::Connection),
    Pg(&'a PgConn),
}

impl<'a> Db<'a> {
    pub fn kind(&self) -> Kind {
        match self {
            Db::Sqlite(_) => Kind::Sqlite,
            Db::Pg(_) => Kind::Postgres,
        }
    }

    /// Runs a statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: &[Value]) -> Result<usize, DbError> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                Ok(st.execute(rusqlite::params_from_iter(params.iter()))?)
            }
            Db::Pg(c) => c.execute(sql, params),
        }
    }

    /// Every row of a query, each mapped by `f`.
    pub fn query_map<T>(
        &self,
        sql: &str,
        params: &[Value],
        mut f: impl FnMut(&Row) -> Result<T, DbError>,
    ) -> Result<Vec<T>, DbError> {
        self.rows(sql, params)?.iter().map(&mut f).collect()
    }

    /// The first row of a query mapped by `f`; [`DbError::NoRows`] when there is none.
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnOnce(&Row) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        match self.rows(sql, params)?.first() {
            Some(r) => f(r),
            None => Err(DbError::NoRows),
        }
    }

    /// The first column of the first row (`SELECT COUNT(*) …`).
    pub fn one<T: FromValue>(&self, sql: &str, params: &[Value]) -> Result<T, DbError> {
        self.query_row(sql, params, |r| r.get(0))
    }

    /// Plain SQL without parameters, possibly several statements.
    pub fn batch(&self, sql: &str) -> Result<(), DbError> {
        match self {
            Db::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Db::Pg(c) => c.batch(sql),
        }
    }

    /// All rows of a query, read into values.
    pub fn rows(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        match self {
            Db::Sqlite(c) => sqlite_rows(c, sql, params),
            Db::Pg(c) => c.query(sql, params),
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn sqlite_rows(c: &rusqlite::Connection, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
    use rusqlite::types::ValueRef;
    let mut st = c.prepare_cached(sql)?;
    let names: std::sync::Arc<[String]> = st.column_names().map(|n| n.to_string()).collect();
    let width = names.len();
    let mut rows = st.query(rusqlite::params_from_iter(params.iter()))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            values.push(match r.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Int(i),
                ValueRef::Real(f) => Value::Real(f),
                ValueRef::Text(t) => Value::Text(
                    std::str::from_utf8(t)
                        .map_err(|e| DbError::Column(format!("column {i}: {e}")))?
                        .to_string(),
                ),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            });
        }
        out.push(Row {
            names: names.clone(),
            values,
        });
    }
    Ok(out)
}

/// Whether an error's text says the write lost to other writers (a serialization failure or
/// deadlock on PostgreSQL, a lock on SQLite) after its retries: nothing of it was committed and
/// the same write may simply run again later.
pub fn contended(text: &str) -> bool {
    [
        "could not serialize access",
        "deadlock detected",
        "database is locked",
        "database table is locked",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Attempts after the first when PostgreSQL reports a serialization failure or deadlock.
/// Higher than SQLite's lock retries: there a busy wait already waited 5 s.
pub const PG_RETRIES: u32 = 12;

/// Runs `f` in one SQLite write transaction and commits it (see the module doc).
pub fn sqlite_write<T, E>(
    c: &mut rusqlite::Connection,
    mut f: impl FnMut(Db<'_>) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<DbError> + crate::store::write::BusyCheck,
{
    use crate::store::write::{immediate_tx, while_busy};
    while_busy(|| {
        let tx = immediate_tx(c).map_err(DbError::from)?;
        let v = f(Db::Sqlite(&tx))?;
        tx.commit().map_err(DbError::from)?;
        Ok(v)
    })
}

/// Runs `f` in one PostgreSQL SERIALIZABLE transaction and commits it (see the module doc).
pub fn pg_write<T, E>(c: &PgConn, mut f: impl FnMut(Db<'_>) -> Result<T, E>) -> Result<T, E>
where
    E: From<DbError> + crate::store::write::BusyCheck,
{
    let mut tries = 0u32;
    let mut again_after_loss = true;
    loop {
        let once = (|| -> Result<T, E> {
            c.begin("BEGIN ISOLATION LEVEL SERIALIZABLE")?;
            let v = f(Db::Pg(c))?;
            c.end("COMMIT")?;
            Ok(v)
        })();
        match once {
            Ok(v) => return Ok(v),
            Err(e) => {
                // A failed COMMIT has ended the transaction already; ROLLBACK then only warns.
                // A transaction whose connection was lost before anything of it committed runs
                // once more, on a new connection (`PgConn`'s module doc).
                if c.rollback() && std::mem::take(&mut again_after_loss) {
                    continue;
                }
                if tries < PG_RETRIES && e.is_busy() {
                    tries += 1;
                    let jitter = u64::from(std::process::id() % 7 + tries * 3);
                    std::thread::sleep(Duration::from_millis(2 * u64::from(tries) + jitter));
                    continue;
                }
                return Err(e);
            }
        }
    }
}

#[cfg(test)]
mod contended_tests {
    use super::contended;

    /// PostgreSQL's and SQLite's own texts for a write that lost to other writers
    /// (src/backend/storage/lmgr/predicate.c, deadlock.c; sqlite3ErrStr), as the store's
    /// errors carry them, and texts of failures that are not that.
    #[test]
    fn only_losing_to_other_writers_counts() {
        for text in [
            "database error: could not serialize access due to read/write dependencies among transactions",
            "database error: could not serialize access due to concurrent update",
            "database error: deadlock detected",
            "database is locked",
            "database table is locked: messages",
        ] {
            assert!(contended(text), "{text}");
        }
        for text in [
            "database error: connection closed",
            "database error: duplicate key value violates unique constraint \"events_pkey\"",
            "database error: permission denied for table messages",
            "message 1553 is not in the store",
        ] {
            assert!(!contended(text), "{text}");
        }
    }
}
