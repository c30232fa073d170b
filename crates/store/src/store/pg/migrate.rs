//! The schema on PostgreSQL: the same numbered versions as SQLite's (`../migrations/`), each
//! written for PostgreSQL in `../migrations_pg/`, tracked in `kakeai_schema`. Each step is one
//! transaction under an advisory lock, so several instances starting at once migrate once.

use super::{Pg, PgError};

/// (version, sql): version N brings an N-1 database to N. Versioned together with SQLite's
/// list (a test checks both lists name the same versions).
pub const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../migrations_pg/001_init.sql")),
    (2, include_str!("../migrations_pg/002_patterns.sql")),
    (3, include_str!("../migrations_pg/003_chat.sql")),
    (4, include_str!("../migrations_pg/004_keyed_digests.sql")),
    (5, include_str!("../migrations_pg/005_interrupted.sql")),
    (6, include_str!("../migrations_pg/006_fallback.sql")),
    (7, include_str!("../migrations_pg/007_review.sql")),
    (8, include_str!("../migrations_pg/008_comparisons.sql")),
    (9, include_str!("../migrations_pg/009_line.sql")),
    (10, include_str!("../migrations_pg/010_interviews.sql")),
    (11, include_str!("../migrations_pg/011_scorecard.sql")),
    (12, include_str!("../migrations_pg/012_line_speaker.sql")),
    (13, include_str!("../migrations_pg/013_queues.sql")),
    (14, include_str!("../migrations_pg/014_pii_check.sql")),
    (15, include_str!("../migrations_pg/015_line_lease.sql")),
    (16, include_str!("../migrations_pg/016_notify.sql")),
    (17, include_str!("../migrations_pg/017_pii_key_check.sql")),
    (18, include_str!("../migrations_pg/018_gold_labels.sql")),
    (
        19,
        include_str!("../migrations_pg/019_queue_guidelines.sql"),
    ),
];

/// Any constant key: kakeai's migrations hold this advisory lock while they run.
const LOCK_KEY: i64 = 0x6b61_6b65_6169;

pub fn latest() -> i64 {
    MIGRATIONS.last().map(|(v, _)| *v).unwrap_or(0)
}

/// The schema version (0: no kakeai schema yet).
pub fn version(pg: &Pg) -> Result<i64, PgError> {
    pg.block(async |c| {
        let exists: bool = c
            .query_one("SELECT to_regclass('kakeai_schema') IS NOT NULL", &[])
            .await?
            .get(0);
        if !exists {
            return Ok(0);
        }
        let row = c
            .query_one("SELECT COALESCE(MAX(version), 0) FROM kakeai_schema", &[])
            .await?;
        Ok(row.get::<_, i64>(0))
    })
}

/// The schema version, refusing a database from a newer kakeai ([`PgError::TooNew`], as
/// `migrate` and every command that opens a store refuse it): for the commands that read
/// without migrating (`runs`, `db copy`).
pub fn known_version(pg: &Pg) -> Result<i64, PgError> {
    let found = version(pg)?;
    if found > latest() {
        return Err(PgError::TooNew {
            url: pg.shown().to_string(),
            found,
            supported: latest(),
        });
    }
    Ok(found)
}

/// Brings the database up to [`latest`]: (version before, version after). A database from a
/// newer kakeai is refused, never downgraded.
pub fn apply(pg: &Pg) -> Result<(i64, i64), PgError> {
    let server: String =
        pg.block(async |c| Ok(c.query_one("SHOW server_version_num", &[]).await?.get(0)))?;
    supported_server(&server, pg.shown())?;
    let found = version(pg)?;
    if found > latest() {
        return Err(PgError::TooNew {
            url: pg.shown().to_string(),
            found,
            supported: latest(),
        });
    }
    for (v, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        pg.block(async |c| {
            let tx = c.transaction().await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
                .await?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS kakeai_schema (
                     version BIGINT PRIMARY KEY,
                     applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            )
            .await?;
            // Another instance may have migrated while we waited for the lock.
            let now: i64 = tx
                .query_one("SELECT COALESCE(MAX(version), 0) FROM kakeai_schema", &[])
                .await?
                .get(0);
            if now >= *v {
                return tx.commit().await;
            }
            tx.batch_execute(sql).await?;
            tx.execute("INSERT INTO kakeai_schema (version) VALUES ($1)", &[v])
                .await?;
            tx.commit().await
        })?;
    }
    Ok((found, version(pg)?))
}

/// The oldest server the schema runs on: stored generated columns (migration 002) are
/// PostgreSQL 12's.
pub const OLDEST_SERVER: i64 = 120_000;

/// Refuses a server older than [`OLDEST_SERVER`] (`server_version_num`, e.g. "110022"), before
/// any migration step, naming the URL and the fix.
pub fn supported_server(version_num: &str, shown: &str) -> Result<(), PgError> {
    let n: i64 = version_num.trim().parse().unwrap_or(0);
    if n >= OLDEST_SERVER {
        return Ok(());
    }
    Err(PgError::Other(format!(
        "{shown}: PostgreSQL {} is too old for kakeai's schema (it needs {} or newer); upgrade \
         the server, or keep the store in an SQLite file",
        if n > 0 {
            (n / 10_000).to_string()
        } else {
            format!("{version_num:?}")
        },
        OLDEST_SERVER / 10_000
    )))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_server_older_than_12_is_refused_naming_the_url_and_the_fix() {
        for (num, ok) in [
            ("120000", true),
            ("150004", true),
            ("170000", true),
            ("110022", false),
            ("90624", false),
            ("", false),
            ("x", false),
        ] {
            let r = super::supported_server(num, "postgresql://kakeai:***@db/kakeai");
            assert_eq!(r.is_ok(), ok, "{num}");
            if let Err(e) = r {
                let m = e.to_string();
                assert!(
                    m.starts_with("postgresql://kakeai:***@db/kakeai: PostgreSQL"),
                    "{m}"
                );
                assert!(m.contains("needs 12 or newer"), "{m}");
            }
        }
    }

    #[test]
    fn both_engines_name_the_same_schema_versions() {
        let pg: Vec<i64> = super::MIGRATIONS.iter().map(|(v, _)| *v).collect();
        let sqlite: Vec<i64> = crate::store::migrate::versions().collect();
        assert_eq!(pg, sqlite);
    }
}
