//! Reading a store on PostgreSQL, as the SQLite store reads it (issue 24 §1): the same rows in
//! the same order and shape, so `kakeai runs` prints the same listing from either engine
//! (checked on a store copied there and back in tests/pg_store.rs).

use super::{Pg, PgError};
use crate::store::{RunStatus, RunSummary};

/// The newest `limit` runs, newest first — `Store::runs` on PostgreSQL. Text is compared
/// byte by byte (`COLLATE "C"`), as SQLite does.
pub fn runs(pg: &Pg, limit: usize) -> Result<Vec<RunSummary>, PgError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = pg
        .block(async |c| {
            c.query(
                "SELECT r.id, r.started_at, r.topic, r.model, r.status, r.source, r.options,
                        (SELECT COUNT(*) FROM turns t WHERE t.run_id = r.id)
                 FROM runs r ORDER BY r.started_at COLLATE \"C\" DESC, r.id DESC LIMIT $1",
                &[&limit],
            )
            .await
        })
        .map_err(|e| no_tables(pg, e))?;
    rows.iter()
        .map(|r| {
            let status: String = r.get(4);
            let options: String = r.get(6);
            let turns: i64 = r.get(7);
            Ok(RunSummary {
                id: r.get(0),
                started_at: r.get(1),
                topic: r.get(2),
                model: r.get(3),
                status: RunStatus::parse(&status).ok_or_else(|| {
                    PgError::Other(format!(
                        "{}: run {} has an unknown status {status:?}",
                        pg.shown(),
                        r.get::<_, i64>(0)
                    ))
                })?,
                source: r.get(5),
                turns: u32::try_from(turns).unwrap_or(u32::MAX),
                sample: sample_of(&options),
            })
        })
        .collect()
}

/// What `SAMPLE_SQL` says of a run's options on SQLite: `compare N sample` when they name a
/// comparison, `probe` for a vault probe's run, else nothing (invalid JSON: nothing).
pub fn sample_of(options: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(options).ok()?;
    // json_extract gives a string without its quotes, any other value as JSON text; a JSON
    // null is SQL NULL.
    let text = |x: &serde_json::Value| match x {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Bool(b) => Some(if *b { "1" } else { "0" }.to_string()),
        other => Some(other.to_string()),
    };
    if let Some(c) = v.get("compare").and_then(text) {
        return Some(format!("compare {c} sample"));
    }
    v.get("probe").and_then(text).map(|_| "probe".to_string())
}

/// A database with no kakeai tables says how to make them.
fn no_tables(pg: &Pg, e: PgError) -> PgError {
    match &e {
        PgError::Sql { source, .. }
            if source.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) =>
        {
            PgError::Other(format!(
                "{}: no kakeai tables here — `kakeai db migrate --db URL` creates them, or \
                 `kakeai db copy FILE URL` brings a store",
                pg.shown()
            ))
        }
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::sample_of;

    #[test]
    fn samples_read_as_sqlite_reads_them() {
        for (options, want) in [
            (r#"{"compare": 3}"#, Some("compare 3 sample")),
            (r#"{"compare": "b"}"#, Some("compare b sample")),
            (r#"{"compare": null, "probe": true}"#, Some("probe")),
            (r#"{"probe": null}"#, None),
            (r#"{}"#, None),
            ("not json", None),
            (r#"{"compare": 2.5}"#, Some("compare 2.5 sample")),
            (r#"{"compare": true}"#, Some("compare 1 sample")),
        ] {
            assert_eq!(sample_of(options).as_deref(), want, "{options}");
        }
    }
}
