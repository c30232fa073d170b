//! Reading a store on PostgreSQL, as the SQLite store reads it (issue 24 §1): the same rows in
//! the same order and shape, so `kakeai runs` prints the same listing from either engine
//! (checked on a store copied there and back in tests/pg_store.rs).

use super::{Pg, PgError};
use crate::director::Status;
use crate::store::review::{Mark, fold};
use crate::store::{ActionKind, RunStatus, RunSummary};

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

/// `Store::browse` on PostgreSQL: runs newest first whose topic, model, status, source or id
/// contains `filter`, `limit` rows from `offset`, with their verdict strip and review progress.
/// Matching folds ASCII case only and ordering compares bytes, as on SQLite; the strips and
/// marks of the page are read in two queries, not two per run.
pub fn browse(
    pg: &Pg,
    filter: &str,
    limit: usize,
    offset: usize,
) -> Result<crate::store::browse::BrowsePage, PgError> {
    use crate::store::browse::{BrowsePage, BrowseRow};
    let needle = filter.trim().to_string();
    let pat = crate::store::browse::like(&needle);
    let (limit, skip) = (
        i64::try_from(limit).unwrap_or(i64::MAX),
        i64::try_from(offset).unwrap_or(i64::MAX),
    );
    // SQLite's LIKE folds A–Z only: translate() does exactly that on both sides.
    const FOLD: &str = "translate(%s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')";
    let m = |col: &str| {
        format!(
            "{} LIKE {} ESCAPE '\\'",
            FOLD.replace("%s", col),
            FOLD.replace("%s", "$1")
        )
    };
    let cond = format!(
        "($1 = '%%' OR {} OR {} OR {} OR {} OR r.id::text = $2)",
        m("r.topic"),
        m("r.model"),
        m("r.status"),
        m("r.source")
    );
    let (total, rows, strips, marks) = pg
        .block(async |c| {
            let total: i64 = c
                .query_one(
                    &format!("SELECT COUNT(*) FROM runs r WHERE {cond}"),
                    &[&pat, &needle],
                )
                .await?
                .get(0);
            let rows = c
                .query(
                    &format!(
                        "SELECT r.id, r.started_at, r.topic, r.model, r.status, r.source, r.options
                         FROM runs r WHERE {cond}
                         ORDER BY r.started_at COLLATE \"C\" DESC, r.id DESC LIMIT $3 OFFSET $4"
                    ),
                    &[&pat, &needle, &limit, &skip],
                )
                .await?;
            let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
            let strips = c
                .query(
                    "SELECT run_id, status FROM turns WHERE run_id = ANY($1) ORDER BY run_id, turn",
                    &[&ids],
                )
                .await?;
            let marks = c
                .query(
                    "SELECT run_id, turn, kind, payload FROM actions
                     WHERE run_id = ANY($1) AND turn IS NOT NULL
                       AND kind IN ('thumb', 'override', 'feedback', 'note', 'undo')
                     ORDER BY id",
                    &[&ids],
                )
                .await?;
            Ok((total, rows, strips, marks))
        })
        .map_err(|e| no_tables(pg, e))?;
    let mut page = Vec::new();
    for r in &rows {
        let id: i64 = r.get(0);
        let status: String = r.get(4);
        let options: String = r.get(6);
        let strip = strips
            .iter()
            .filter(|s| s.get::<_, i64>(0) == id)
            .map(|s| Status::parse(&s.get::<_, String>(1)).unwrap_or(Status::Unscored))
            .collect();
        let parsed: Vec<(u32, ActionKind, serde_json::Value)> = marks
            .iter()
            .filter(|m| m.get::<_, i64>(0) == id)
            .filter_map(|m| {
                let turn = u32::try_from(m.get::<_, i64>(1)).ok()?;
                let kind = ActionKind::parse(&m.get::<_, String>(2))?;
                Some((
                    turn,
                    kind,
                    serde_json::from_str(&m.get::<_, String>(3)).ok()?,
                ))
            })
            .collect();
        let reviewed = fold(parsed.iter().map(|(t, k, p)| Mark {
            turn: *t,
            kind: *k,
            payload: p,
            reviewer: None,
        }))
        .len();
        page.push(BrowseRow {
            id,
            started_at: r.get(1),
            topic: r.get(2),
            model: r.get(3),
            // An unknown status reads as failed rather than hiding the run (as on SQLite).
            status: RunStatus::parse(&status).unwrap_or(RunStatus::Failed),
            source: r.get(5),
            strip,
            reviewed,
            sample: sample_of(&options),
        });
    }
    Ok(BrowsePage {
        rows: page,
        total: usize::try_from(total).unwrap_or(0),
        offset,
    })
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
