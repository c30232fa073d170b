//! The run store: one SQLite file (WAL) holding runs, attempts, committed turns and reviewer
//! actions; numbered migrations; a single-writer actor for async callers; duo-talk import and
//! jsonl/markdown export.
//!
//! # The writer's contract
//!
//! - **Acknowledged means committed.** Every write method returns only after its transaction
//!   committed; callers acknowledge an action, attempt or turn (a ✓ on screen, an event on
//!   stdout) only after that `Ok`. Within a process all writes go through one connection (the
//!   [`StoreHandle`] thread for async callers), in the order they were made.
//! - **Every write waits for the lock.** Other processes (`kakeai ingest`, `import`, `patterns`)
//!   may write the same file. Writes run in `BEGIN IMMEDIATE` transactions — the write lock is
//!   taken up front, so the busy timeout applies — and are retried a bounded number of times
//!   ([`write::immediate`]). Long writers commit in batches so nobody waits long.
//! - **A write that finally fails is an error, never a success.** The caller turns it into an
//!   error state (a failed run with exit code [`write::EXIT_STORE`] headless, a visible "NOT
//!   saved" in the workbench); it is never reported as done.
//! - **Interrupted work is marked on the next start.** A run still `running` whose process is
//!   gone (quit, kill -9, crash) becomes `interrupted`, and its `streaming` attempts
//!   `cancelled` with their partial text kept ([`Store::mark_interrupted`]).

mod actor;
pub mod branch;
pub mod browse;
pub mod chat;
pub mod duotalk;
pub mod export;
mod migrate;
pub mod pg;
pub mod pii_key;
mod private;
mod read;
mod recover;
mod rekey;
pub mod review;
pub mod sql;
pub mod status;
pub mod target;
pub mod time;
mod types;
pub mod watch;
pub mod write;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, Transaction};

use crate::p;
use sql::Optional;

pub use actor::StoreHandle;
pub use recover::INTERRUPTED;
pub use types::*;

use crate::director::Status;

/// File name of the store inside the data dir.
pub const DB_FILE: &str = "kakeai.db";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "{}: the database is at schema version {found}, but this kakeai only knows up to \
         {supported}; use a newer kakeai (or another --db)",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("{}: could not switch to WAL journaling (journal_mode is {mode})", path.display())]
    NotWal { path: PathBuf, mode: String },
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("database error: {0}")]
    Db(#[from] sql::DbError),
    /// A PostgreSQL store could not be reached, used or migrated.
    #[error("{0}")]
    Pg(#[from] pg::PgError),
    /// `--db` named a URL this kakeai cannot use (never taken as a file name).
    #[error("{0}")]
    Url(String),
    #[error("no run with id {0}")]
    NoSuchRun(i64),
    #[error("no attempt with id {0}")]
    NoSuchAttempt(i64),
    #[error("invalid value: {0}")]
    Invalid(String),
    #[error(
        "no store at {} yet: run or import something first, or create an empty one with `kakeai db migrate --create`",
        .0.display()
    )]
    NoStore(PathBuf),
    #[error("the store thread has stopped")]
    Closed,
    #[error("the store thread panicked while writing: {0}")]
    Panicked(String),
}

/// Owns one connection. Every write method commits before it returns.
pub struct Store {
    /// SQLite: the store's connection. PostgreSQL: an empty in-memory SQLite, so code not yet
    /// written for both engines (through [`Store::conn`]) fails with "no such table" instead
    /// of reading or writing anything — the commands that reach it refuse a URL first.
    conn: Connection,
    /// PostgreSQL: the store's connection.
    pg: Option<sql::PgConn>,
    /// The file, or the URL with its password as `***`.
    path: PathBuf,
    /// Claimed when this process creates its first run.
    owner: Option<recover::Owner>,
}

impl Store {
    /// Opens (creating the file and its parent dirs if needed) and migrates the store. It
    /// holds conversations: dirs it creates are 0700, the file and its WAL 0600 (see `private`).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        file_only(path).map_err(StoreError::Url)?;
        private::prepare(path)?;
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(write::BUSY_TIMEOUT).map_err(open_err)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::NotWal {
                path: path.to_path_buf(),
                mode,
            });
        }
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(open_err)?;
        migrate::apply(&mut conn, path)?;
        Store {
            conn,
            pg: None,
            path: path.to_path_buf(),
            owner: None,
        }
        .started()
    }

    /// Runs a quit or kill -9 left `running` are marked on every start. Best effort: when
    /// another process holds the lock too long, the next start does it.
    fn started(mut self) -> Result<Store, StoreError> {
        if let Err(e) = self.mark_interrupted()
            && !write::BusyCheck::is_busy(&e)
        {
            return Err(e);
        }
        Ok(self)
    }

    /// Opens what `--db` names: an SQLite file ([`Store::open`]) or a PostgreSQL URL
    /// ([`Store::open_pg`]).
    pub fn open_target(db: &Path) -> Result<Store, StoreError> {
        match target::classify(db).map_err(StoreError::Url)? {
            target::Target::File(p) => Store::open(&p),
            target::Target::Postgres(url) => Store::open_pg(&url),
        }
    }

    /// Connects to a PostgreSQL store and migrates it (once, however many instances start
    /// together: the migrations hold an advisory lock). Safe to call from inside a runtime:
    /// the migration runs on a thread of its own.
    pub fn open_pg(url: &target::PgUrl) -> Result<Store, StoreError> {
        let u = url.clone();
        std::thread::spawn(move || -> Result<(), pg::PgError> {
            let pg = pg::Pg::connect(&u)?;
            pg::migrate::apply(&pg).map(|_| ())
        })
        .join()
        .map_err(|_| StoreError::Panicked("migrating the PostgreSQL store".into()))??;
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: PathBuf::from(url.shown()),
            source,
        })?;
        Store {
            conn,
            pg: Some(sql::PgConn::connect(url)?),
            path: PathBuf::from(url.shown()),
            owner: None,
        }
        .started()
    }

    /// `--db`, else `$KAKEAI_DB`, else the data dir's kakeai.db — an SQLite file only (a URL
    /// is refused, never taken as a file name).
    pub fn path_or_default(db: Option<&Path>) -> Result<PathBuf, String> {
        let p = named(db)?;
        file_only(&p)?;
        Ok(p)
    }

    /// `--db` (a file or a PostgreSQL URL), else `$KAKEAI_DB`, else the data dir's kakeai.db:
    /// for the commands that work on both engines ([`Store::open_target`] opens it).
    pub fn target_or_default(db: Option<&Path>) -> Result<PathBuf, String> {
        let p = named(db)?;
        target::classify(&p)?;
        Ok(p)
    }

    /// Opens `db`, or the default store, with an error that names the file.
    /// A PostgreSQL URL opens that database (its password hidden in errors).
    pub fn open_or_default(db: Option<&Path>) -> Result<Store, String> {
        Store::open_existing(db, true).map_err(|(e, _)| e)
    }

    /// Opens what `--db` (or the default) names for a command written for both engines: an
    /// SQLite file — which must exist unless `create` — or a PostgreSQL database (migrated,
    /// as a file is). Errors name the file, or the URL with its password hidden, with the
    /// exit code: 3 when the PostgreSQL server cannot be reached, else 2.
    pub fn open_existing(db: Option<&Path>, create: bool) -> Result<Store, (String, i32)> {
        let p = named(db).map_err(|e| (e, 2))?;
        match target::classify(&p).map_err(|e| (e, 2))? {
            target::Target::File(path) => {
                if !create && !path.exists() {
                    return Err((
                        format!(
                            "no store at {} yet (run or import something first)",
                            path.display()
                        ),
                        2,
                    ));
                }
                Store::open(&path).map_err(|e| (format!("{}: {e}", path.display()), 2))
            }
            target::Target::Postgres(url) => Store::open_pg(&url).map_err(|e| match e {
                // Connection and migration errors name the URL already.
                StoreError::Pg(p) => (p.to_string(), p.exit_code()),
                StoreError::Db(d) if d.is_unreachable() => (d.to_string(), 3),
                StoreError::Db(d) if d.is_refused_write() => {
                    (format!("{}: {d} (a read-only role?)", url.shown()), 4)
                }
                e => (format!("{}: {e}", url.shown()), 2),
            }),
        }
    }

    pub fn default_path() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("KAKEAI_DB").filter(|p| !p.is_empty()) {
            return Some(PathBuf::from(p));
        }
        crate::config::data_dir().map(|d| d.join(DB_FILE))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version this binary writes.
    pub fn schema_version() -> i64 {
        migrate::latest()
    }

    /// The store's connection on either engine, for queries kept outside the store module.
    pub fn db(&self) -> sql::Db<'_> {
        match &self.pg {
            Some(pg) => sql::Db::Pg(pg),
            None => sql::Db::Sqlite(&self.conn),
        }
    }

    /// Which engine holds the store.
    pub fn kind(&self) -> sql::Kind {
        self.db().kind()
    }

    /// The SQLite connection, for code not yet written for both engines (on a PostgreSQL
    /// store: an empty database, see the field).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The raw connection, for the importer's single-transaction writes and for tests.
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub fn create_run(&mut self, r: &NewRun) -> Result<i64, StoreError> {
        let options = if r.options.is_null() {
            "{}".to_string()
        } else {
            r.options.to_string()
        };
        let owner = self.owner_token()?;
        self.transact(|tx| {
            Ok(tx.one::<i64>(
                "INSERT INTO runs (topic, model, endpoint, api, options, persona_version,
                                   ruleset_version, started_at, status, owner)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', ?9) RETURNING id",
                p![
                    r.topic,
                    r.model,
                    r.endpoint,
                    r.api,
                    options,
                    r.persona_version,
                    r.ruleset_version,
                    time::now_iso(),
                    owner
                ],
            )?)
        })
    }

    pub fn finish_run(
        &mut self,
        run_id: i64,
        status: RunStatus,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        let n = self.transact(|tx| {
            Ok(tx.execute(
                "UPDATE runs SET status = ?2, error = ?3, ended_at = ?4 WHERE id = ?1",
                p![run_id, status.as_str(), error, time::now_iso()],
            )?)
        })?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(run_id));
        }
        Ok(())
    }

    /// Writes an attempt in state `streaming`; call it at the first token.
    pub fn start_attempt(&mut self, a: &NewAttempt) -> Result<i64, StoreError> {
        check_speaker(&a.speaker)?;
        check_ordinal("turn", a.turn)?;
        check_ordinal("attempt", a.attempt)?;
        self.transact(|tx| {
            require_run(tx, a.run_id)?;
            Ok(tx.one::<i64>(
                "INSERT INTO attempts (run_id, turn, speaker, attempt, state, text, tokens,
                                       guidance, prompt_hash, started_at, first_token_ms)
                 VALUES (?1, ?2, ?3, ?4, 'streaming', ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
                p![
                    a.run_id,
                    a.turn,
                    a.speaker,
                    a.attempt,
                    a.text,
                    a.tokens,
                    a.guidance,
                    a.prompt_hash,
                    time::iso_utc(a.started_at),
                    a.first_token_ms.map(clamp_i64)
                ],
            )?)
        })
    }

    /// Replaces the partial text of a streaming attempt.
    pub fn update_attempt_text(
        &mut self,
        attempt_id: i64,
        partial: &str,
        tokens: u32,
    ) -> Result<(), StoreError> {
        let n = self.transact(|tx| {
            Ok(tx.execute(
                "UPDATE attempts SET text = ?2, tokens = ?3 WHERE id = ?1",
                p![attempt_id, partial, tokens],
            )?)
        })?;
        if n == 0 {
            return Err(StoreError::NoSuchAttempt(attempt_id));
        }
        Ok(())
    }

    pub fn finish_attempt(
        &mut self,
        attempt_id: i64,
        o: &AttemptOutcome,
    ) -> Result<(), StoreError> {
        if o.state == AttemptState::Streaming {
            return Err(StoreError::Invalid(
                "a finished attempt cannot be in state streaming".into(),
            ));
        }
        let status = o.status.map(status_text).transpose()?;
        let (verdict, judge) = (
            o.verdict.as_ref().map(|v| v.to_string()),
            o.judge.as_ref().map(|v| v.to_string()),
        );
        let n = self.transact(|tx| {
            Ok(tx.execute(
                "UPDATE attempts SET state = ?2, text = ?3, tokens = COALESCE(?4, tokens),
                        status = ?5, verdict = ?6, judge = ?7, judge_raw = ?8, latency_ms = ?9,
                        error = ?10, fallback = ?11
                 WHERE id = ?1",
                p![
                    attempt_id,
                    o.state.as_str(),
                    o.text,
                    o.tokens,
                    status,
                    verdict,
                    judge,
                    o.judge_raw,
                    o.latency_ms.map(clamp_i64),
                    o.error,
                    o.fallback
                ],
            )?)
        })?;
        if n == 0 {
            return Err(StoreError::NoSuchAttempt(attempt_id));
        }
        Ok(())
    }

    /// Records the committed line of a turn. A turn is committed once: a second commit of the
    /// same turn is refused rather than silently rewriting history.
    pub fn commit_turn(&mut self, t: &TurnCommit) -> Result<(), StoreError> {
        check_speaker(&t.speaker)?;
        check_ordinal("turn", t.turn)?;
        let status = status_text(t.status)?;
        self.transact(|tx| {
            require_run(tx, t.run_id)?;
            if let Some(id) = t.attempt_id {
                let owner: Option<(i64, u32)> = tx
                    .query_row(
                        "SELECT run_id, turn FROM attempts WHERE id = ?1",
                        p![id],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                if owner != Some((t.run_id, t.turn)) {
                    return Err(StoreError::Invalid(format!(
                        "attempt {id} does not belong to run {} turn {}",
                        t.run_id, t.turn
                    )));
                }
            }
            let n = tx.execute(
                "INSERT INTO turns (run_id, turn, speaker, attempt_id, text, status, exhausted,
                                    futile, held, hook, hook_depth, committed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                 ON CONFLICT (run_id, turn) DO NOTHING",
                p![
                    t.run_id,
                    t.turn,
                    t.speaker,
                    t.attempt_id,
                    t.text,
                    status,
                    t.flags.exhausted,
                    t.flags.futile,
                    t.flags.held,
                    t.hook,
                    t.hook_depth,
                    time::now_iso()
                ],
            )?;
            if n == 0 {
                return Err(StoreError::Invalid(format!(
                    "turn {} of run {} is already committed",
                    t.turn, t.run_id
                )));
            }
            Ok(())
        })
    }

    /// Drops the committed turns from `from_turn` on (a regeneration rewinds the run). Their
    /// attempts stay: the history of what was tried is kept.
    pub fn truncate_turns(&mut self, run_id: i64, from_turn: u32) -> Result<usize, StoreError> {
        self.transact(|tx| {
            require_run(tx, run_id)?;
            Ok(tx.execute(
                "DELETE FROM turns WHERE run_id = ?1 AND turn >= ?2",
                p![run_id, from_turn],
            )?)
        })
    }

    pub fn add_action(&mut self, a: &NewAction) -> Result<i64, StoreError> {
        let payload = if a.payload.is_null() {
            "{}".to_string()
        } else {
            a.payload.to_string()
        };
        self.transact(|tx| {
            require_run(tx, a.run_id)?;
            Ok(tx.one::<i64>(
                "INSERT INTO actions (run_id, turn, attempt_id, kind, payload, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                p![
                    a.run_id,
                    a.turn,
                    a.attempt_id,
                    a.kind.as_str(),
                    payload,
                    time::now_iso()
                ],
            )?)
        })
    }

    /// Runs `f` as one committed write on either engine (see [`sql`]'s doc: IMMEDIATE on
    /// SQLite, SERIALIZABLE on PostgreSQL, retried while another writer is in the way). `f`
    /// may run more than once.
    pub fn transact<T>(
        &mut self,
        f: impl FnMut(sql::Db<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match &self.pg {
            Some(pg) => sql::pg_write(pg, f),
            None => sql::sqlite_write(&mut self.conn, f),
        }
    }

    /// [`Store::transact`] for any error type a `DbError` converts into (queue and other
    /// module errors).
    pub fn transact_with<T, E>(
        &mut self,
        f: impl FnMut(sql::Db<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<sql::DbError> + write::BusyCheck,
    {
        match &self.pg {
            Some(pg) => sql::pg_write(pg, f),
            None => sql::sqlite_write(&mut self.conn, f),
        }
    }

    /// Runs `f` as one committed write: IMMEDIATE, waiting for and retrying a busy lock (see
    /// [`write::immediate`]). `f` may run more than once. SQLite only (see [`Store::conn`]).
    pub fn write<T>(
        &mut self,
        f: impl FnMut(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        write::immediate(&mut self.conn, f)
    }
}

impl StoreError {
    /// The exit code of a command that could not open or use its store: 3 when a PostgreSQL
    /// server cannot be reached or used at all, 4 when it refused a write (a read-only role),
    /// 2 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            StoreError::Pg(e) => e.exit_code(),
            StoreError::Db(e) if e.is_unreachable() => 3,
            StoreError::Db(e) if e.is_refused_write() => 4,
            _ => 2,
        }
    }
}

/// Refuses a URL before anything touches the file system (see [`target`]).
/// A store error from any message (a pattern or queue error raised inside a store call).
pub fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Invalid(e.to_string())
}

/// What `--db` names: itself, else `$KAKEAI_DB`, else the data dir's kakeai.db.
fn named(db: Option<&Path>) -> Result<PathBuf, String> {
    db.map(Path::to_path_buf)
        .or_else(Store::default_path)
        .ok_or_else(|| "no data directory found; pass --db PATH or set KAKEAI_DATA_DIR".into())
}

fn file_only(p: &Path) -> Result<(), String> {
    match target::classify(p)? {
        target::Target::File(_) => Ok(()),
        target::Target::Postgres(u) => Err(format!(
            "--db {}: this step needs an SQLite file, and a URL is never taken as a file name; pass a file path with --db (or unset KAKEAI_DB)",
            u.shown()
        )),
    }
}

fn require_run(db: sql::Db<'_>, run_id: i64) -> Result<(), StoreError> {
    let found: Option<i64> = db
        .one("SELECT id FROM runs WHERE id = ?1", p![run_id])
        .optional()?;
    found.map(|_| ()).ok_or(StoreError::NoSuchRun(run_id))
}

/// Character ids the schema accepts.
pub const SPEAKERS: [&str; 2] = ["yana", "ayu"];

fn check_speaker(s: &str) -> Result<(), StoreError> {
    if SPEAKERS.contains(&s) {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "speaker must be yana or ayu, not {s:?}"
        )))
    }
}

fn check_ordinal(what: &str, n: u32) -> Result<(), StoreError> {
    if n == 0 {
        Err(StoreError::Invalid(format!("{what} numbers start at 1")))
    } else {
        Ok(())
    }
}

/// Statuses a line can have; `Info` belongs to findings only.
pub(crate) fn status_text(s: Status) -> Result<&'static str, StoreError> {
    if s == Status::Info {
        Err(StoreError::Invalid(
            "INFO is a finding status, not a line status".into(),
        ))
    } else {
        Ok(s.as_str())
    }
}

fn clamp_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
