//! Runs nobody finishes: the owner token a live process holds (a lock file next to the
//! database, locked for the process's lifetime and released by the kernel however it ends),
//! marking runs left `running` by a dead owner as interrupted, and stopping a run on Ctrl-C.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::sql::{Db, Kind};
use super::{Store, StoreError, time};
use crate::p;

/// The message written on runs (and their streaming attempts) found interrupted.
pub const INTERRUPTED: &str =
    "interrupted: the process ended before the run finished (quit, killed or crashed)";

/// This process's claim on the runs it creates: the token stored in `runs.owner`, and the
/// locked file that says the process still lives.
pub(super) struct Owner {
    pub token: String,
    path: PathBuf,
    /// SQLite: the locked file; PostgreSQL: none (the lock lives with the connection).
    _file: Option<File>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        if self._file.is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn owners_dir(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push("-owners");
    db.with_file_name(name)
}

fn lock_path(db: &Path, token: &str) -> PathBuf {
    owners_dir(db).join(format!("{token}.lock"))
}

/// A fresh token with its lock file, locked.
pub(super) fn claim(db: &Path) -> Result<Owner, StoreError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let token = format!("{}-{nanos}", std::process::id());
    let dir = owners_dir(db);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let path = lock_path(db, &token);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(&path))?;
    file.lock().map_err(io(&path))?;
    Ok(Owner {
        token,
        path,
        _file: Some(file),
    })
}

/// True when the owner's process still holds its lock. A token without a lock file, or whose
/// lock can be taken, belongs to a process that is gone.
fn alive(db: &Path, token: &str) -> bool {
    let path = lock_path(db, token);
    let Ok(file) = OpenOptions::new().write(true).open(&path) else {
        return false;
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = std::fs::remove_file(&path);
            false
        }
        Err(TryLockError::WouldBlock) => true,
        // Cannot tell: fail closed, leave the run as it is.
        Err(TryLockError::Error(_)) => true,
    }
}

impl Store {
    /// Marks runs left `running` by a process that is gone as `interrupted`, and their
    /// `streaming` attempts `cancelled` (the partial text kept). Runs of a live process (this
    /// one included) are left alone; runs from before owners were recorded count as gone.
    /// Returns the run ids marked.
    pub fn mark_interrupted(&mut self) -> Result<Vec<i64>, StoreError> {
        let mine = self.owner.as_ref().map(|o| o.token.clone());
        let candidates: Vec<(i64, Option<String>)> = self.db().query_map(
            "SELECT id, owner FROM runs WHERE status = 'running' ORDER BY id",
            p![],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let path = self.path.clone();
        let mut dead = Vec::new();
        for (id, owner) in candidates {
            let gone = match &owner {
                None => true,
                Some(o) if Some(o) == mine.as_ref() => false,
                Some(o) => match self.kind() {
                    Kind::Sqlite => !alive(&path, o),
                    Kind::Postgres => !pg_alive(self.db(), o)?,
                },
            };
            if gone {
                dead.push(id);
            }
        }
        if dead.is_empty() {
            return Ok(dead);
        }
        self.transact(|tx| {
            for id in &dead {
                end_run(tx, *id, "interrupted", INTERRUPTED)?;
            }
            Ok(())
        })?;
        Ok(dead)
    }

    /// Ends a run that is still running as `stopped` (e.g. on Ctrl-C), its streaming attempts
    /// cancelled with their partial text kept. False when the run had already ended.
    pub fn stop_run(&mut self, run_id: i64, why: &str) -> Result<bool, StoreError> {
        self.transact(|tx| end_run(tx, run_id, "stopped", why))
    }

    /// The token written as `runs.owner`, claiming (and locking) it on first use.
    pub(super) fn owner_token(&mut self) -> Result<String, StoreError> {
        if self.owner.is_none() {
            self.owner = Some(match self.kind() {
                Kind::Sqlite => claim(&self.path)?,
                Kind::Postgres => pg_claim(self.db())?,
            });
        }
        Ok(self
            .owner
            .as_ref()
            .map(|o| o.token.clone())
            .unwrap_or_default())
    }
}

/// On PostgreSQL the owner's claim is a session advisory lock keyed by the token: held by the
/// store's connection, released by the server when that connection ends however the process
/// ended (a `kill -9` closes its socket).
fn pg_claim(db: Db<'_>) -> Result<Owner, StoreError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let token = format!("pg-{}-{nanos}", std::process::id());
    db.execute(
        "SELECT pg_advisory_lock(hashtextextended(?1, 24))",
        p![token],
    )?;
    Ok(Owner {
        token,
        path: PathBuf::new(),
        _file: None,
    })
}

/// True when another session holds the owner's advisory lock. Taking it means the owner is
/// gone; it is given back at once.
fn pg_alive(db: Db<'_>, token: &str) -> Result<bool, StoreError> {
    let took: bool = db.one(
        "SELECT pg_try_advisory_lock(hashtextextended(?1, 24))",
        p![token],
    )?;
    if took {
        db.execute(
            "SELECT pg_advisory_unlock(hashtextextended(?1, 24))",
            p![token],
        )?;
    }
    Ok(!took)
}

fn end_run(tx: Db<'_>, run_id: i64, status: &str, why: &str) -> Result<bool, StoreError> {
    let n = tx.execute(
        "UPDATE runs SET status = ?2, error = COALESCE(error, ?3), ended_at = ?4
         WHERE id = ?1 AND status = 'running'",
        p![run_id, status, why, time::now_iso()],
    )?;
    tx.execute(
        "UPDATE attempts SET state = 'cancelled', error = COALESCE(error, ?2)
         WHERE run_id = ?1 AND state = 'streaming'",
        p![run_id, why],
    )?;
    Ok(n > 0)
}
