//! Numbered schema migrations, embedded, applied in order and tracked by `PRAGMA user_version`.

use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

/// (version, sql): version N brings an N-1 database to N.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("migrations/001_init.sql")),
    (2, include_str!("migrations/002_patterns.sql")),
    (3, include_str!("migrations/003_chat.sql")),
    (4, include_str!("migrations/004_keyed_digests.sql")),
    (5, include_str!("migrations/005_interrupted.sql")),
    (6, include_str!("migrations/006_fallback.sql")),
    (7, include_str!("migrations/007_review.sql")),
    (8, include_str!("migrations/008_comparisons.sql")),
    (9, include_str!("migrations/009_line.sql")),
    (10, include_str!("migrations/010_interviews.sql")),
    (11, include_str!("migrations/011_scorecard.sql")),
    (12, include_str!("migrations/012_line_speaker.sql")),
    (13, include_str!("migrations/013_queues.sql")),
    (14, include_str!("migrations/014_pii_check.sql")),
    (15, include_str!("migrations/015_line_lease.sql")),
    (16, include_str!("migrations/016_notify.sql")),
    (17, include_str!("migrations/017_pii_key_check.sql")),
    (18, include_str!("migrations/018_gold_labels.sql")),
    (19, include_str!("migrations/019_queue_guidelines.sql")),
];

/// Steps SQL cannot express, run after version N's SQL in the same transaction.
fn rust_step(version: i64, tx: &rusqlite::Transaction) -> Result<(), StoreError> {
    match version {
        4 => super::rekey::migrate(tx),
        5 => Ok(allow_interrupted(tx)?),
        7 => Ok(super::browse::allow_undo(tx)?),
        _ => Ok(()),
    }
}

/// Every schema version, oldest first.
pub(super) fn versions() -> impl Iterator<Item = i64> {
    MIGRATIONS.iter().map(|(v, _)| *v)
}

pub(super) fn latest() -> i64 {
    MIGRATIONS.last().map(|(v, _)| *v).unwrap_or(0)
}

/// Brings the database up to [`latest`]; each step is one transaction, so a failed step leaves
/// the previous version intact. A database from a newer kakeai is refused, never downgraded.
pub(super) fn apply(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > latest() {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: latest(),
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the write lock.
        let now: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if now >= *version {
            continue;
        }
        tx.execute_batch(sql)?;
        rust_step(*version, &tx)?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
    }
    Ok(())
}

/// Widens the CHECK on `runs.status` by 'interrupted'. A CHECK that only accepts more values
/// changes nothing on disk, so SQLite's documented `writable_schema` edit is enough (no table
/// rebuild, which would also drop columns other migrations add).
fn allow_interrupted(tx: &rusqlite::Transaction<'_>) -> Result<(), rusqlite::Error> {
    const OLD: &str = "'failed', 'imported')";
    const NEW: &str = "'failed', 'imported', 'interrupted')";
    let sql: String = tx.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
        [],
        |r| r.get(0),
    )?;
    if sql.contains("'interrupted'") || !sql.contains(OLD) {
        return Ok(());
    }
    let schema: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    tx.execute_batch("PRAGMA writable_schema = ON")?;
    let done = tx.execute(
        "UPDATE sqlite_master SET sql = replace(sql, ?1, ?2) WHERE type = 'table' AND name = 'runs'",
        [OLD, NEW],
    );
    tx.execute_batch("PRAGMA writable_schema = OFF")?;
    done?;
    tx.pragma_update(None, "schema_version", schema + 1)?;
    Ok(())
}
