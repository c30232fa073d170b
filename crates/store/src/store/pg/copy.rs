//! `kakeai db copy` between SQLite and PostgreSQL, either direction (issue 24 §1): every kakeai
//! table, row by row in primary-key order, committed in batches. Lossless: each table's rows are
//! digested on both sides afterwards and must match. Resumable: the destination remembers the
//! copy in `kakeai_copy` until it is whole; run the same command again after a kill and it goes
//! on from the rows already committed. The destination must be empty otherwise.

use std::path::Path;

use rusqlite::types::{Value as SqlValue, ValueRef};
use sha2::{Digest, Sha256};
use tokio_postgres::types::ToSql;

use super::{Pg, PgError, migrate};
use crate::store::{Store, StoreError};

/// One cell, engine-neutral.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A kakeai table as the copy sees it: its writable columns and the order rows are read in.
#[derive(Debug, Clone)]
struct Table {
    name: String,
    columns: Vec<String>,
    /// The key columns rows are read in, and whether each holds text.
    order: Vec<(String, bool)>,
}

/// What a copy did: rows per table, and whether it went on from an earlier, killed run.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyReport {
    pub tables: Vec<(String, i64)>,
    pub resumed: bool,
}

/// Progress callback: (table, rows done in it, rows in it).
pub type Progress<'a> = &'a mut dyn FnMut(&str, i64, i64);

/// A PostgreSQL identifier, quoted.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn se(e: rusqlite::Error) -> PgError {
    PgError::Other(format!("SQLite: {e}"))
}

/// kakeai's tables in creation order (parents before children), from an SQLite store at the
/// latest schema: writable columns (generated ones are computed on each side) and the primary
/// key to read them in.
fn tables(conn: &rusqlite::Connection) -> Result<Vec<Table>, PgError> {
    let names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table'
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'kakeai\\_%' ESCAPE '\\'
             ORDER BY rowid",
        )
        .map_err(se)?
        .query_map([], |r| r.get(0))
        .map_err(se)?
        .collect::<Result<_, _>>()
        .map_err(se)?;
    let mut out = Vec::new();
    for name in names {
        // (name, declared type, position in the key, hidden)
        let mut cols: Vec<(String, String, i64, i64)> = conn
            .prepare(&format!("PRAGMA table_xinfo({})", ident(&name)))
            .map_err(se)?
            .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(5)?, r.get(6)?)))
            .map_err(se)?
            .collect::<Result<_, _>>()
            .map_err(se)?;
        let is_text = |ty: &str| {
            !matches!(
                ty.to_ascii_uppercase().as_str(),
                "INTEGER" | "REAL" | "BOOLEAN"
            )
        };
        let mut pk: Vec<(i64, String, bool)> = cols
            .iter()
            .filter(|c| c.2 > 0)
            .map(|c| (c.2, c.0.clone(), is_text(&c.1)))
            .collect();
        pk.sort();
        cols.retain(|c| c.3 == 0);
        let order = if pk.is_empty() {
            cols.iter().map(|c| (c.0.clone(), is_text(&c.1))).collect()
        } else {
            pk.into_iter().map(|p| (p.1, p.2)).collect()
        };
        let columns: Vec<String> = cols.into_iter().map(|c| c.0).collect();
        out.push(Table {
            name,
            columns,
            order,
        });
    }
    Ok(out)
}

/// The rows of `t` in key order — the same order on both engines: PostgreSQL compares text
/// by bytes (`COLLATE "C"`, as SQLite's BINARY does, whatever the database's own collation)
/// and puts NULLs first (as SQLite does).
fn select(t: &Table, offset: i64, limit: Option<i64>, pg: bool) -> String {
    let cols: Vec<String> = t.columns.iter().map(|c| ident(c)).collect();
    let order: Vec<String> = t
        .order
        .iter()
        .map(|(c, text)| match (pg, text) {
            (true, true) => format!("{} COLLATE \"C\" NULLS FIRST", ident(c)),
            (true, false) => format!("{} NULLS FIRST", ident(c)),
            (false, _) => ident(c),
        })
        .collect();
    let limit = match (limit, pg) {
        (Some(l), _) => l.to_string(),
        (None, true) => "ALL".to_string(),
        (None, false) => "-1".to_string(),
    };
    format!(
        "SELECT {} FROM {} ORDER BY {} LIMIT {limit} OFFSET {offset}",
        cols.join(", "),
        ident(&t.name),
        order.join(", "),
    )
}

/// An SQLite cell; text that is not UTF-8 stops the copy (PostgreSQL's text cannot hold it,
/// and replacing bytes would not be lossless).
fn from_sqlite(v: ValueRef<'_>) -> Result<Val, std::str::Utf8Error> {
    Ok(match v {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(i) => Val::Int(i),
        ValueRef::Real(f) => Val::Real(f),
        ValueRef::Text(t) => Val::Text(std::str::from_utf8(t)?.to_string()),
        ValueRef::Blob(b) => Val::Blob(b.to_vec()),
    })
}

fn to_sqlite(v: Val) -> SqlValue {
    match v {
        Val::Null => SqlValue::Null,
        Val::Int(i) => SqlValue::Integer(i),
        Val::Real(f) => SqlValue::Real(f),
        Val::Text(t) => SqlValue::Text(t),
        Val::Blob(b) => SqlValue::Blob(b),
    }
}

/// A PostgreSQL cell read by its column's type.
fn from_pg(row: &tokio_postgres::Row, i: usize) -> Result<Val, tokio_postgres::Error> {
    use tokio_postgres::types::Type;
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::INT8 => row
            .try_get::<_, Option<i64>>(i)?
            .map_or(Val::Null, Val::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map_or(Val::Null, |v| Val::Int(v.into())),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)?
            .map_or(Val::Null, Val::Real),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(Val::Null, |b| Val::Int(b.into())),
        Type::BYTEA => row
            .try_get::<_, Option<Vec<u8>>>(i)?
            .map_or(Val::Null, Val::Blob),
        _ => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Val::Null, Val::Text),
    })
}

/// A value as a parameter for a column of PostgreSQL type `ty` — or why it cannot be one
/// (text where an integer belongs: the copy stops, naming the cell, rather than guess).
fn to_pg(v: &Val, ty: &str) -> Result<Box<dyn ToSql + Sync + Send>, String> {
    Ok(match (ty, v) {
        ("bigint", Val::Null) => Box::new(None::<i64>),
        ("bigint", Val::Int(i)) => Box::new(*i),
        ("double precision", Val::Null) => Box::new(None::<f64>),
        ("double precision", Val::Real(f)) => Box::new(*f),
        ("double precision", Val::Int(i)) => Box::new(*i as f64),
        ("bytea", Val::Null) => Box::new(None::<Vec<u8>>),
        ("bytea", Val::Blob(b)) => Box::new(b.clone()),
        ("text", Val::Null) => Box::new(None::<String>),
        ("text", Val::Text(t)) => Box::new(t.clone()),
        (ty, v) => return Err(format!("{v:?} does not fit a {ty} column")),
    })
}

/// The digest of one table's rows in key order (both engines feed it the same `Val`s).
#[derive(Default)]
struct RowDigest(Sha256, i64);

impl RowDigest {
    fn add(&mut self, row: &[Val]) {
        for v in row {
            let bytes: Vec<u8> = match v {
                Val::Null => vec![0],
                Val::Int(i) => [&[1u8][..], &i.to_le_bytes()].concat(),
                Val::Real(f) => [&[2u8][..], &f.to_bits().to_le_bytes()].concat(),
                Val::Text(t) => {
                    [&[3u8][..], &(t.len() as u64).to_le_bytes(), t.as_bytes()].concat()
                }
                Val::Blob(b) => [&[4u8][..], &(b.len() as u64).to_le_bytes(), b].concat(),
            };
            self.0.update(&bytes);
        }
        self.1 += 1;
    }

    fn finish(self) -> (String, i64) {
        let hex: String = self
            .0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        (hex, self.1)
    }
}

fn sqlite_rows(
    conn: &rusqlite::Connection,
    t: &Table,
    offset: i64,
    each: &mut dyn FnMut(Vec<Val>) -> Result<(), PgError>,
) -> Result<(), PgError> {
    let mut st = conn.prepare(&select(t, offset, None, false)).map_err(se)?;
    let mut rows = st.query([]).map_err(se)?;
    while let Some(r) = rows.next().map_err(se)? {
        let mut row = Vec::with_capacity(t.columns.len());
        for (i, col) in t.columns.iter().enumerate() {
            let v = r.get_ref(i).map_err(se)?;
            row.push(from_sqlite(v).map_err(|e| {
                PgError::Other(format!(
                    "{}.{col}: text that is not UTF-8 ({e}); fix the row in the SQLite store, then copy again",
                    t.name
                ))
            })?);
        }
        each(row)?;
    }
    Ok(())
}

fn sqlite_digest(conn: &rusqlite::Connection, t: &Table) -> Result<(String, i64), PgError> {
    let mut d = RowDigest::default();
    sqlite_rows(conn, t, 0, &mut |row| {
        d.add(&row);
        Ok(())
    })?;
    Ok(d.finish())
}

fn pg_digest(pg: &Pg, t: &Table) -> Result<(String, i64), PgError> {
    let q = select(t, 0, None, true);
    pg.block(async |c| {
        let rows = c.query(&q, &[]).await?;
        let mut d = RowDigest::default();
        for r in &rows {
            let row: Vec<Val> = (0..r.len())
                .map(|i| from_pg(r, i))
                .collect::<Result<_, _>>()?;
            d.add(&row);
        }
        Ok(d.finish())
    })
}

/// PostgreSQL column types of `table`, by column name.
fn pg_types(pg: &Pg, table: &str) -> Result<std::collections::HashMap<String, String>, PgError> {
    pg.block(async |c| {
        let rows = c
            .query(
                "SELECT column_name::text, data_type::text FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = $1",
                &[&table],
            )
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    })
}

/// The copy's bookkeeping in the destination: `Some(true)` an unfinished copy of `source` to
/// go on with, `Some(false)` an empty destination, `None` a destination holding other data.
fn pg_copy_state(pg: &Pg, source: &str) -> Result<Option<bool>, PgError> {
    let counts = super::status::status(pg)?;
    let empty = counts.tables.iter().all(|(_, n)| *n == 0);
    // Only read here: a refused destination is left as it was.
    let mine = pg.block(async |c| {
        let exists: bool = c
            .query_one("SELECT to_regclass('kakeai_copy') IS NOT NULL", &[])
            .await?
            .get(0);
        if !exists {
            return Ok(false);
        }
        let r = c
            .query_opt("SELECT 1 FROM kakeai_copy WHERE source = $1", &[&source])
            .await?;
        Ok(r.is_some())
    })?;
    Ok(if mine {
        Some(true)
    } else if empty {
        Some(false)
    } else {
        None
    })
}

/// Where a copy stands: how often to commit, when to stop (tests: a kill), batches so far.
struct Run<'a> {
    batch: usize,
    stop_after: Option<usize>,
    batches: usize,
    progress: Progress<'a>,
}

impl<'a> Run<'a> {
    fn new(batch: usize, stop_after: Option<usize>, progress: Progress<'a>) -> Run<'a> {
        Run {
            batch,
            stop_after,
            batches: 0,
            progress,
        }
    }

    /// Counts a committed batch; true when the copy should stop here.
    fn committed(&mut self, table: &str, done: i64, total: i64) -> bool {
        self.batches += 1;
        (self.progress)(table, done, total);
        self.stop_after.is_some_and(|n| self.batches >= n)
    }
}

fn stopped() -> PgError {
    PgError::Other("stopped (as asked) before the copy was whole".into())
}

/// Each table digests the same on both sides, or the copy is not whole.
fn verify(
    list: &[Table],
    mut source: impl FnMut(&Table) -> Result<(String, i64), PgError>,
    mut dest: impl FnMut(&Table) -> Result<(String, i64), PgError>,
) -> Result<Vec<(String, i64)>, PgError> {
    let mut report = Vec::new();
    for t in list {
        let (a, n) = source(t)?;
        let (b, m) = dest(t)?;
        if a != b || n != m {
            return Err(PgError::Other(format!(
                "{}: {n} rows in the source, {m} copied, and their contents differ — the copy is not whole; run it again",
                t.name
            )));
        }
        report.push((t.name.clone(), n));
    }
    Ok(report)
}

fn rows_in(total: &[(String, i64)], table: &str) -> i64 {
    total
        .iter()
        .find(|(n, _)| n == table)
        .map_or(0, |(_, n)| *n)
}

fn insert_sql(t: &Table, placeholders: &[String]) -> String {
    format!(
        "INSERT INTO {} ({}) VALUES ({})",
        ident(&t.name),
        t.columns
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(", "),
        placeholders.join(", ")
    )
}

/// Readies PostgreSQL `to` for a copy of `key`: migrated, empty or holding this copy's
/// unfinished rows (then: true, a resume).
fn pg_destination(to: &Pg, key: &str) -> Result<bool, PgError> {
    migrate::apply(to)?;
    let resumed = pg_copy_state(to, key)?.ok_or_else(|| {
        PgError::Other(format!(
            "{} already holds kakeai data: a copy goes into an empty database only",
            to.shown()
        ))
    })?;
    to.block(async |c| {
        c.batch_execute(
            "CREATE TABLE IF NOT EXISTS kakeai_copy (source TEXT PRIMARY KEY, started_at TEXT NOT NULL)",
        )
        .await?;
        c.execute(
            "INSERT INTO kakeai_copy (source, started_at) VALUES ($1, now()::text) ON CONFLICT DO NOTHING",
            &[&key],
        )
        .await
        .map(|_| ())
    })?;
    Ok(resumed)
}

/// Copies the SQLite store `from` into the PostgreSQL database `to` (migrated to the latest
/// schema first). `stop_after` stops after that many committed batches (tests: a kill).
pub fn sqlite_to_pg(
    from: &Path,
    to: &Pg,
    batch: usize,
    stop_after: Option<usize>,
    progress: Progress<'_>,
) -> Result<CopyReport, PgError> {
    let source = crate::store::status::status(from).map_err(|e| PgError::Other(e.to_string()))?;
    if source.too_new {
        return Err(PgError::Other(
            crate::store::StoreError::TooNew {
                path: from.to_path_buf(),
                found: source.schema_version,
                supported: migrate::latest(),
            }
            .to_string(),
        ));
    }
    if !source.pending.is_empty() {
        return Err(PgError::Other(format!(
            "{}: schema version {} — run `kakeai db migrate --db {}` first (this kakeai copies version {})",
            from.display(),
            source.schema_version,
            from.display(),
            migrate::latest()
        )));
    }
    let resumed = pg_destination(to, &format!("sqlite:{}", from.display()))?;
    let conn = crate::store::watch::read_only(from).map_err(|e| PgError::Other(e.to_string()))?;
    let list = tables(&conn)?;
    let mut run = Run::new(batch, stop_after, progress);
    for t in &list {
        let total = rows_in(&source.tables, &t.name);
        if table_to_pg(&conn, to, t, total, &mut run)? {
            return Err(stopped());
        }
    }
    reset_identities(to)?;
    let tables = verify(&list, |t| sqlite_digest(&conn, t), |t| pg_digest(to, t))?;
    to.block(async |c| c.batch_execute("DROP TABLE kakeai_copy").await)?;
    Ok(CopyReport { tables, resumed })
}

/// One table's rows not yet in `to`, in batches; true when the run stopped half-way.
fn table_to_pg(
    conn: &rusqlite::Connection,
    to: &Pg,
    t: &Table,
    total: i64,
    run: &mut Run<'_>,
) -> Result<bool, PgError> {
    let types = pg_types(to, &t.name)?;
    let col_types: Vec<String> =
        t.columns
            .iter()
            .map(|c| {
                types.get(c).cloned().ok_or_else(|| {
                    PgError::Other(format!("{}.{c} is missing on PostgreSQL", t.name))
                })
            })
            .collect::<Result<_, _>>()?;
    let already: i64 = to.block(async |c| {
        let q = format!("SELECT COUNT(*) FROM {}", ident(&t.name));
        Ok(c.query_one(&q, &[]).await?.get(0))
    })?;
    let mut copied = already;
    let placeholders: Vec<String> = (1..=t.columns.len()).map(|i| format!("${i}")).collect();
    let insert = insert_sql(t, &placeholders);
    (run.progress)(&t.name, copied, total);
    let mut pending: Vec<Vec<Val>> = Vec::with_capacity(run.batch);
    let mut stop = false;
    let mut flush = |rows: &mut Vec<Vec<Val>>, run: &mut Run<'_>| -> Result<bool, PgError> {
        let params = pg_params(t, rows, &col_types)?;
        to.block(async |c| {
            let tx = c.transaction().await?;
            let st = tx.prepare(&insert).await?;
            for p in &params {
                let refs: Vec<&(dyn ToSql + Sync)> = p
                    .iter()
                    .map(|b| b.as_ref() as &(dyn ToSql + Sync))
                    .collect();
                tx.execute(&st, &refs).await?;
            }
            tx.commit().await
        })?;
        copied += rows.len() as i64;
        rows.clear();
        Ok(run.committed(&t.name, copied, total))
    };
    sqlite_rows(conn, t, already, &mut |row| {
        if !stop {
            pending.push(row);
            if pending.len() >= run.batch {
                stop = flush(&mut pending, run)?;
            }
        }
        Ok(())
    })?;
    if !stop && !pending.is_empty() {
        stop = flush(&mut pending, run)?;
    }
    Ok(stop)
}

/// Rows as parameters for `t`'s PostgreSQL columns; a value that does not fit stops the copy
/// naming its table and column.
fn pg_params(
    t: &Table,
    rows: &[Vec<Val>],
    col_types: &[String],
) -> Result<Vec<Vec<Box<dyn ToSql + Sync + Send>>>, PgError> {
    rows.iter()
        .map(|row| {
            row.iter()
                .zip(col_types)
                .zip(&t.columns)
                .map(|((v, ty), col)| {
                    to_pg(v, ty).map_err(|e| PgError::Other(format!("{}.{col}: {e}", t.name)))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .collect()
}

/// After explicit ids were copied, each identity column's next value follows the largest id.
fn reset_identities(pg: &Pg) -> Result<(), PgError> {
    pg.block(async |c| {
        let cols = c
            .query(
                "SELECT table_name::text, column_name::text FROM information_schema.columns
                 WHERE table_schema = current_schema() AND is_identity = 'YES'",
                &[],
            )
            .await?;
        for r in cols {
            let (t, col): (String, String) = (r.get(0), r.get(1));
            let q = format!(
                "SELECT setval(pg_get_serial_sequence($1, $2), COALESCE(MAX({c}), 1), MAX({c}) IS NOT NULL) FROM {t}",
                c = ident(&col),
                t = ident(&t)
            );
            c.query_one(&q, &[&ident(&t), &col]).await?;
        }
        Ok(())
    })
}

/// Whether an existing SQLite store may take a copy of `key`: `Some(true)` it holds this
/// copy's unfinished rows, `Some(false)` it is empty, `None` it holds other data. Read-only:
/// a refused store is neither migrated nor written.
fn sqlite_copy_state(to: &Path, key: &str) -> Result<Option<bool>, PgError> {
    let status = crate::store::status::status(to).map_err(|e| PgError::Other(e.to_string()))?;
    if status.tables.iter().any(|(t, _)| t == "kakeai_copy") {
        let conn = crate::store::watch::read_only(to).map_err(|e| PgError::Other(e.to_string()))?;
        let mine: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM kakeai_copy WHERE source = ?1",
                [key],
                |r| r.get(0),
            )
            .map_err(se)?;
        if mine > 0 {
            return Ok(Some(true));
        }
    }
    let empty = status
        .tables
        .iter()
        .all(|(t, n)| *n == 0 || t.starts_with("kakeai_"));
    Ok(empty.then_some(false))
}

/// Opens (creating at the latest schema) SQLite `to` for a copy of `key`: new, empty, or
/// holding this copy's unfinished rows (then: true, a resume).
fn sqlite_destination(
    to: &Path,
    key: &str,
) -> Result<(rusqlite::Connection, Vec<Table>, bool), PgError> {
    let mine = if to.exists() {
        sqlite_copy_state(to, key)?.ok_or_else(|| {
            PgError::Other(format!(
                "{} already holds kakeai data: a copy goes into a new or empty store only",
                to.display()
            ))
        })?
    } else {
        false
    };
    drop(Store::open(to).map_err(|e: StoreError| PgError::Other(e.to_string()))?);
    let conn = rusqlite::Connection::open(to).map_err(se)?;
    conn.execute_batch(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE IF NOT EXISTS kakeai_copy (source TEXT PRIMARY KEY, started_at TEXT NOT NULL)",
    )
    .map_err(se)?;
    conn.execute(
        "INSERT OR IGNORE INTO kakeai_copy (source, started_at) VALUES (?1, datetime('now'))",
        [key],
    )
    .map_err(se)?;
    let list = tables(&conn)?;
    Ok((conn, list, mine))
}

/// Copies the PostgreSQL store `from` into a new SQLite store `to`. Resumable the same way: an
/// unfinished copy leaves `kakeai_copy` in `to`.
pub fn pg_to_sqlite(
    from: &Pg,
    to: &Path,
    batch: usize,
    stop_after: Option<usize>,
    progress: Progress<'_>,
) -> Result<CopyReport, PgError> {
    let version = migrate::known_version(from)?;
    if version != migrate::latest() {
        return Err(PgError::Other(format!(
            "{}: schema version {version} — run `kakeai db migrate --db …` on it first (this kakeai copies version {})",
            from.shown(),
            migrate::latest()
        )));
    }
    let key = format!("postgresql:{}", from.shown());
    let (mut conn, list, resumed) = sqlite_destination(to, &key)?;
    let counts = super::status::status(from)?;
    let mut run = Run::new(batch, stop_after, progress);
    for t in &list {
        let total = rows_in(&counts.tables, &t.name);
        if table_to_sqlite(from, &mut conn, t, total, &mut run)? {
            return Err(stopped());
        }
    }
    let tables = verify(&list, |t| pg_digest(from, t), |t| sqlite_digest(&conn, t))?;
    conn.execute_batch("DROP TABLE kakeai_copy").map_err(se)?;
    Ok(CopyReport { tables, resumed })
}

/// One table's rows not yet in SQLite, in batches; true when the run stopped half-way.
fn table_to_sqlite(
    from: &Pg,
    conn: &mut rusqlite::Connection,
    t: &Table,
    total: i64,
    run: &mut Run<'_>,
) -> Result<bool, PgError> {
    let mut done: i64 = conn
        .query_row(
            &format!("SELECT COUNT(*) FROM {}", ident(&t.name)),
            [],
            |r| r.get(0),
        )
        .map_err(se)?;
    (run.progress)(&t.name, done, total);
    let insert = insert_sql(t, &vec!["?".to_string(); t.columns.len()]);
    loop {
        let q = select(t, done, Some(run.batch as i64), true);
        let rows: Vec<Vec<Val>> = from.block(async |c| {
            let rows = c.query(&q, &[]).await?;
            rows.iter()
                .map(|r| (0..r.len()).map(|i| from_pg(r, i)).collect())
                .collect()
        })?;
        if rows.is_empty() {
            return Ok(false);
        }
        let n = rows.len();
        let tx = conn.transaction().map_err(se)?;
        {
            let mut st = tx.prepare(&insert).map_err(se)?;
            for row in rows {
                let vals: Vec<SqlValue> = row.into_iter().map(to_sqlite).collect();
                st.execute(rusqlite::params_from_iter(vals)).map_err(se)?;
            }
        }
        tx.commit().map_err(se)?;
        done += n as i64;
        if run.committed(&t.name, done, total) {
            return Ok(true);
        }
    }
}
