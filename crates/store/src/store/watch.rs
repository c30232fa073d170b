//! Seeing other processes' writes (issue 24 §2, "live marks" on SQLite): a read-only connection
//! of its own whose `PRAGMA data_version` moves whenever another connection — another
//! reviewer's workbench, `kakeai queue judge`, an import — commits to the same file. Polling it
//! costs one pragma (no table is read), so a workbench can ask every few hundred milliseconds and
//! reload its marks only when something changed.
//!
//! On PostgreSQL the watcher listens: every statement writing a table the workbench shows
//! sends `NOTIFY kakeai_changes` (migration 016's triggers), delivered when its transaction
//! commits — never for a rolled-back one, and never for reads or for another database of the
//! same server. A poll drains what arrived and, when nothing did, asks `SELECT 1` so a lost
//! connection is an error rather than silence. A lost connection is made again at a later poll
//! (LISTEN issued again), and that poll counts as a change: whatever was committed while the
//! watcher was away is read again.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::StoreError;

/// The channel migration 016's triggers notify.
pub const CHANNEL: &str = "kakeai_changes";

/// Watches one store (file or PostgreSQL database) for commits made through other
/// connections.
pub struct Watch {
    conn: Watched,
    last: String,
    /// PostgreSQL: the connection's returns after a loss seen so far.
    returns: u64,
}

enum Watched {
    Sqlite(Connection),
    Pg(super::sql::PgConn),
}

/// A read-only connection to an existing store (with the store's busy timeout): it can never
/// create, migrate or write the file.
pub(super) fn read_only(path: &Path) -> Result<Connection, StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_err)?;
    conn.busy_timeout(super::write::BUSY_TIMEOUT)
        .map_err(open_err)?;
    Ok(conn)
}

impl Watch {
    /// Opens a read-only watcher on an existing store: a file, or what a PostgreSQL URL
    /// names (`--db` as typed).
    pub fn open(path: &Path) -> Result<Watch, StoreError> {
        let conn = match super::target::classify(path).map_err(StoreError::Url)? {
            super::target::Target::File(p) => Watched::Sqlite(read_only(&p)?),
            super::target::Target::Postgres(url) => {
                let c = super::sql::PgConn::connect(&url)?;
                c.listen(CHANNEL)?;
                Watched::Pg(c)
            }
        };
        let last = version(&conn)?;
        Ok(Watch {
            conn,
            last,
            returns: 0,
        })
    }

    /// True once per batch of commits made elsewhere since the last call.
    pub fn changed(&mut self) -> Result<bool, StoreError> {
        if let Watched::Pg(c) = &self.conn {
            if !c.notices().is_empty() {
                return Ok(true);
            }
            c.batch("SELECT 1")?;
            // Back after a loss (LISTEN issued again): what others committed meanwhile sent no
            // notice here, so it counts as a change — read everything again.
            if c.reconnects() != self.returns {
                self.returns = c.reconnects();
                let _ = c.notices();
                return Ok(true);
            }
            // A notice that arrived while we asked counts now, not at the next poll.
            return Ok(!c.notices().is_empty());
        }
        let now = version(&self.conn)?;
        let moved = now != self.last;
        self.last = now;
        Ok(moved)
    }
}

fn version(conn: &Watched) -> Result<String, StoreError> {
    Ok(match conn {
        Watched::Sqlite(c) => c
            .query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0))?
            .to_string(),
        Watched::Pg(_) => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewRun, Store};

    fn run(topic: &str) -> NewRun {
        NewRun {
            topic: topic.into(),
            model: None,
            endpoint: None,
            api: None,
            options: serde_json::json!({}),
            persona_version: None,
            ruleset_version: None,
        }
    }

    #[test]
    fn a_commit_from_another_connection_is_seen_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        let mut writer = Store::open(&path).unwrap();
        let mut w = Watch::open(&path).unwrap();
        assert!(!w.changed().unwrap(), "nothing happened yet");
        writer.create_run(&run("一")).unwrap();
        assert!(w.changed().unwrap());
        assert!(!w.changed().unwrap(), "seen once");
        // Another process's store (another connection) is seen too.
        let mut other = Store::open(&path).unwrap();
        other.create_run(&run("二")).unwrap();
        assert!(w.changed().unwrap());
        // Reads change nothing.
        let _ = other.runs(10).unwrap();
        assert!(!w.changed().unwrap());
    }

    #[test]
    fn a_missing_store_is_an_error_not_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.db");
        assert!(Watch::open(&path).is_err());
        assert!(!path.exists());
    }
}
