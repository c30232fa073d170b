//! Seeing other processes' writes (issue 24 §2, "live marks" on SQLite): a read-only connection
//! of its own whose `PRAGMA data_version` moves whenever another connection — another
//! reviewer's workbench, `kakeai queue judge`, an import — commits to the same file. Polling it
//! costs one pragma (no table is read), so a workbench can ask every few hundred milliseconds and
//! reload its marks only when something changed.
//!
//! On PostgreSQL there is no `data_version`; the watcher asks for the server's current
//! snapshot (`pg_current_snapshot()`: the next transaction id and those in progress), as cheap
//! (no table is read). A transaction id is given only to a transaction that writes, so the
//! snapshot moves when a writer starts and again when it commits or rolls back; reads never
//! move it. It is the cluster's, not the database's: writes to another database of the same
//! server (or autovacuum's analyze) read as changes too — a needless reload, never a missed one.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::StoreError;

/// Watches one store (file or PostgreSQL database) for commits made through other
/// connections.
pub struct Watch {
    conn: Watched,
    last: String,
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
            super::target::Target::Postgres(url) => Watched::Pg(super::sql::PgConn::connect(&url)?),
        };
        let last = version(&conn)?;
        Ok(Watch { conn, last })
    }

    /// True once per batch of commits made elsewhere since the last call.
    pub fn changed(&mut self) -> Result<bool, StoreError> {
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
        Watched::Pg(c) => {
            super::sql::Db::Pg(c).one("SELECT CAST(pg_current_snapshot() AS TEXT)", crate::p![])?
        }
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
