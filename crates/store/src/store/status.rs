//! `kakeai db status` and `kakeai db migrate` (issue 24 §1, the SQLite engine): what a store is
//! — engine, file, size, journal mode, schema version against this kakeai's, pending
//! migrations, rows per table — read without changing it (a read-only connection, no
//! migration), and the explicit migration an operator runs before an upgrade goes live.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::Serialize;

use super::{Store, StoreError, migrate};

/// A store as `db status` reports it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DbStatus {
    pub engine: &'static str,
    pub path: PathBuf,
    pub size_bytes: u64,
    pub journal_mode: String,
    pub schema_version: i64,
    /// The newest schema this kakeai knows.
    pub latest: i64,
    /// Versions `db migrate` (or the next start) would apply.
    pub pending: Vec<i64>,
    /// Newer than this kakeai: it refuses to open it (never downgrades).
    pub too_new: bool,
    /// (table, rows), kakeai's own tables in name order.
    pub tables: Vec<(String, i64)>,
}

/// Reads `path` without changing it. A missing file is an error (nothing is created).
pub fn status(path: &Path) -> Result<DbStatus, StoreError> {
    if !path.exists() {
        return Err(StoreError::NoStore(path.to_path_buf()));
    }
    let conn = super::watch::read_only(path)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let journal_mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    let names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
             ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut tables = Vec::with_capacity(names.len());
    for n in names {
        // A name from sqlite_master, quoted as an identifier.
        let rows: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM \"{}\"", n.replace('"', "\"\"")),
            [],
            |r| r.get(0),
        )?;
        tables.push((n, rows));
    }
    let latest = migrate::latest();
    Ok(DbStatus {
        engine: "sqlite",
        path: path.to_path_buf(),
        size_bytes: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        journal_mode,
        schema_version: version,
        latest,
        pending: migrate::versions().filter(|v| *v > version).collect(),
        too_new: version > latest,
        tables,
    })
}

/// Brings `path` to the newest schema (creating the store when `create`): `(from, to)`.
pub fn migrate(path: &Path, create: bool) -> Result<(i64, i64), StoreError> {
    let from = if path.exists() {
        status(path)?.schema_version
    } else if create {
        0
    } else {
        return Err(StoreError::NoStore(path.to_path_buf()));
    };
    let store = Store::open(path)?;
    let to: i64 = store
        .conn()
        .query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok((from, to))
}

impl DbStatus {
    /// The text `db status` prints.
    pub fn text(&self) -> String {
        let mut out = format!(
            "engine: {}\nstore: {}\nsize: {} bytes · journal {}",
            self.engine,
            self.path.display(),
            self.size_bytes,
            self.journal_mode,
        );
        out.push_str(&schema_text(
            self.schema_version,
            self.latest,
            &self.pending,
            self.too_new,
            "`kakeai db migrate` applies them; so does the next start",
            &self.tables,
        ));
        out
    }
}

/// The end of `db status` for either engine: the schema version and how it stands against this kakeai's
/// (`hint`: what applies pending migrations), then the rows per table.
pub(crate) fn schema_text(
    version: i64,
    latest: i64,
    pending: &[i64],
    too_new: bool,
    hint: &str,
    tables: &[(String, i64)],
) -> String {
    let mut out = format!("\nschema: version {version} of {latest}");
    if too_new {
        out.push_str(" — made by a newer kakeai: this one will not open it");
    } else if version == 0 {
        out.push_str(" — no kakeai schema yet (`kakeai db migrate` creates it)");
    } else if pending.is_empty() {
        out.push_str(" (up to date)");
    } else {
        let list: Vec<String> = pending.iter().map(|v| v.to_string()).collect();
        out.push_str(&format!(" — pending: {} ({hint})", list.join(", ")));
    }
    out.push_str("\ntables:");
    for (t, n) in tables {
        out.push_str(&format!("\n  {t:<28} {n:>9}"));
    }
    out
}

/// Copies store `from` into a new store `to` with SQLite's online backup (a consistent
/// snapshot while other processes keep writing), `pages` pages per step, reporting
/// `(copied, total)` pages. The copy is written to `to`.partial and renamed only once it is
/// whole and passes `PRAGMA integrity_check` with the same rows in every table, so a killed
/// copy leaves no store at `to` — running it again starts over. `to` must not exist.
pub fn copy(
    from: &Path,
    to: &Path,
    pages: std::ffi::c_int,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<DbStatus, StoreError> {
    let source = status(from)?;
    if to.exists() {
        return Err(StoreError::Invalid(format!(
            "{} exists: a copy never overwrites a store (move it away or pick another name)",
            to.display()
        )));
    }
    let partial = to.with_extension("partial");
    let _ = std::fs::remove_file(&partial);
    // The copy holds what the store holds: created 0600 (in a 0700 dir when there is none)
    // before SQLite opens it, as the store itself is — never a world-readable 0644.
    super::private::prepare(&partial)?;
    let src = super::watch::read_only(from)?;
    let mut dst = Connection::open(&partial).map_err(|source| StoreError::Open {
        path: partial.clone(),
        source,
    })?;
    {
        let b = rusqlite::backup::Backup::new(&src, &mut dst)?;
        loop {
            let step = b.step(pages)?;
            let p = b.progress();
            progress(
                (p.pagecount - p.remaining).max(0) as usize,
                p.pagecount.max(0) as usize,
            );
            match step {
                rusqlite::backup::StepResult::Done => break,
                rusqlite::backup::StepResult::More => {}
                // Another connection holds a lock: wait a little and go on.
                _ => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
    }
    let ok: String = dst.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    drop(dst);
    let copied = status(&partial)?;
    if ok != "ok" || copied.tables != source.tables {
        let _ = std::fs::remove_file(&partial);
        return Err(StoreError::Invalid(format!(
            "the copy did not check out (integrity: {ok}); nothing was written to {}",
            to.display()
        )));
    }
    std::fs::rename(&partial, to).map_err(|source| StoreError::Io {
        path: to.to_path_buf(),
        source,
    })?;
    status(to)
}
