//! The runs browser's queries: one page of runs (newest first, filtered) with their verdict
//! strip and review progress, the latest run, actions that name their reviewer, search over the
//! stored text, and the exact request of an attempt. Pages are read by index (`runs_by_start`,
//! the turns' primary key, `actions_by_run_turn`): opening the browser never scans the store.

use crate::p;

use super::sql::{Kind, Optional};

use super::review::{Mark, fold};
use super::{ActionKind, NewAction, RunStatus, Store, StoreError, require_run, time};
use crate::director::Status;

/// One line of the runs browser.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowseRow {
    pub id: i64,
    pub started_at: String,
    pub topic: String,
    pub model: Option<String>,
    pub status: RunStatus,
    /// Imported runs keep their source path.
    pub source: Option<String>,
    /// The committed turns' statuses in turn order.
    pub strip: Vec<Status>,
    /// Turns carrying a 👍/👎, an override or a note in force.
    pub reviewed: usize,
    /// `compare 3 sample` / `probe`: made by a comparison or a probe, not for review.
    pub sample: Option<String>,
}

/// A page of the browser and how many runs match in all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrowsePage {
    pub rows: Vec<BrowseRow>,
    pub total: usize,
    pub offset: usize,
}

/// A hit of a text search: the run, the turn and the text that matched — the committed text,
/// or an attempt that was not kept (`attempt` names it).
#[derive(Debug, Clone, PartialEq)]
pub struct TextHit {
    pub run_id: i64,
    pub turn: u32,
    pub text: String,
    /// The attempt's number when the match is in an attempt that was not kept; None: the
    /// committed text.
    pub attempt: Option<u32>,
}

/// `LIKE` pattern for a plain substring (`%`, `_` and `\` taken literally).
pub(crate) fn like(needle: &str) -> String {
    let mut s = String::from("%");
    for c in needle.chars() {
        if matches!(c, '%' | '_' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('%');
    s
}

/// `col` contains the `LIKE` pattern `param` (see [`like`]), ASCII letters in any case, on
/// both engines: SQLite's `LIKE` folds ASCII only; on PostgreSQL `LOWER` under the "C"
/// collation folds ASCII only too (`ILIKE` would fold every letter).
pub(crate) fn like_ci(kind: Kind, col: &str, param: &str) -> String {
    match kind {
        Kind::Sqlite => format!("{col} LIKE {param} ESCAPE '\\'"),
        Kind::Postgres => format!(
            "LOWER({col} COLLATE \"C\") LIKE LOWER(CAST({param} AS TEXT) COLLATE \"C\") ESCAPE '\\'"
        ),
    }
}

impl Store {
    /// Runs newest first whose topic, model, status, source or id contains `filter`
    /// (case-insensitive for ASCII); `limit` rows from `offset`.
    pub fn browse(
        &self,
        filter: &str,
        limit: usize,
        offset: usize,
    ) -> Result<BrowsePage, StoreError> {
        let db = self.db();
        let kind = db.kind();
        let pat = like(filter.trim());
        let cond = format!(
            "(?1 = '%%' OR {} OR {} OR {} OR {} OR CAST(r.id AS TEXT) = ?2)",
            like_ci(kind, "r.topic", "?1"),
            like_ci(kind, "r.model", "?1"),
            like_ci(kind, "r.status", "?1"),
            like_ci(kind, "r.source", "?1"),
        );
        let total: i64 = db.one(
            &format!("SELECT COUNT(*) FROM runs r WHERE {cond}"),
            p![pat, filter.trim()],
        )?;
        let mut rows = db.query_map(
            &format!(
                "SELECT r.id, r.started_at, r.topic, r.model, r.status, r.source,
                            {} FROM runs r
                     WHERE {cond} ORDER BY {} DESC, r.id DESC LIMIT ?3 OFFSET ?4",
                super::read::sample_column(kind),
                kind.bytewise("r.started_at")
            ),
            p![pat, filter.trim(), limit as i64, offset as i64],
            |r| {
                let status: String = r.get(4)?;
                Ok(BrowseRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    topic: r.get(2)?,
                    model: r.get(3)?,
                    // An unknown status reads as failed rather than hiding the run.
                    status: RunStatus::parse(&status).unwrap_or(RunStatus::Failed),
                    source: r.get(5)?,
                    strip: Vec::new(),
                    reviewed: 0,
                    sample: super::read::sample(kind, r, 6)?,
                })
            },
        )?;
        for row in &mut rows {
            row.strip = db.query_map(
                "SELECT status FROM turns WHERE run_id = ?1 ORDER BY turn",
                p![row.id],
                |r| Ok(Status::parse(&r.get::<String>(0)?).unwrap_or(Status::Unscored)),
            )?;
            let log = db.query_map(
                "SELECT turn, kind, payload FROM actions
                 WHERE run_id = ?1 AND turn IS NOT NULL
                   AND kind IN ('thumb', 'override', 'feedback', 'note', 'undo') ORDER BY id",
                p![row.id],
                |r| Ok((r.get::<u32>(0)?, r.get::<String>(1)?, r.get::<String>(2)?)),
            )?;
            let parsed: Vec<(u32, ActionKind, serde_json::Value)> = log
                .into_iter()
                .filter_map(|(t, k, p)| {
                    Some((t, ActionKind::parse(&k)?, serde_json::from_str(&p).ok()?))
                })
                .collect();
            row.reviewed = fold(parsed.iter().map(|(t, k, p)| Mark {
                turn: *t,
                kind: *k,
                payload: p,
                reviewer: None,
            }))
            .len();
        }
        Ok(BrowsePage {
            rows,
            total: usize::try_from(total).unwrap_or(0),
            offset,
        })
    }

    /// The newest run to review (by start time, then id): comparison and probe samples are
    /// passed over (issue 23 item 10).
    pub fn latest_run_id(&self) -> Result<Option<i64>, StoreError> {
        let db = self.db();
        match db.kind() {
            Kind::Sqlite => Ok(db
                .one(
                    &format!(
                        "SELECT r.id FROM runs r WHERE ({}) IS NULL
                         ORDER BY r.started_at DESC, r.id DESC LIMIT 1",
                        super::SAMPLE_SQL
                    ),
                    p![],
                )
                .optional()?),
            // PostgreSQL 15 cannot test the options for JSON in SQL: pages of runs, newest
            // first, until one is not a sample (samples are few beside the runs to review).
            Kind::Postgres => {
                const PAGE: i64 = 200;
                let mut offset = 0i64;
                loop {
                    let page = db.query_map(
                        "SELECT r.id, r.options FROM runs r
                         ORDER BY r.started_at COLLATE \"C\" DESC, r.id DESC
                         LIMIT ?1 OFFSET ?2",
                        p![PAGE, offset],
                        |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
                    )?;
                    if let Some((id, _)) = page
                        .iter()
                        .find(|(_, o)| super::pg::read::sample_of(o).is_none())
                    {
                        return Ok(Some(*id));
                    }
                    if (page.len() as i64) < PAGE {
                        return Ok(None);
                    }
                    offset += PAGE;
                }
            }
        }
    }

    /// [`Store::add_action`] with the reviewer's name stored beside it.
    pub fn add_action_by(
        &mut self,
        a: &NewAction,
        reviewer: Option<&str>,
    ) -> Result<i64, StoreError> {
        let payload = if a.payload.is_null() {
            "{}".to_string()
        } else {
            a.payload.to_string()
        };
        self.transact(|tx| {
            require_run(tx, a.run_id)?;
            Ok(tx.one::<i64>(
                "INSERT INTO actions (run_id, turn, attempt_id, kind, payload, created_at,
                                      reviewer)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
                p![
                    a.run_id,
                    a.turn,
                    a.attempt_id,
                    a.kind.as_str(),
                    payload,
                    time::now_iso(),
                    reviewer
                ],
            )?)
        })
    }

    /// The reviewer of each action of a run, by action id (None: unnamed or imported).
    pub fn reviewers(&self, run_id: i64) -> Result<Vec<(i64, Option<String>)>, StoreError> {
        Ok(self.db().query_map(
            "SELECT id, reviewer FROM actions WHERE run_id = ?1 ORDER BY id",
            p![run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// Turns whose committed text, or an attempt not kept, contains `needle`, in one run or
    /// (None) in all runs, newest run first, a turn's committed text before its attempts; at
    /// most `limit` hits.
    pub fn search_text(
        &self,
        run_id: Option<i64>,
        needle: &str,
        limit: usize,
    ) -> Result<Vec<TextHit>, StoreError> {
        let db = self.db();
        let kind = db.kind();
        Ok(db.query_map(
            &format!(
                "SELECT run_id, turn, text, NULL FROM turns
                 WHERE (CAST(?1 AS BIGINT) IS NULL OR run_id = ?1) AND {}
                 UNION ALL
                 SELECT a.run_id, a.turn, a.text, a.attempt FROM attempts a
                 LEFT JOIN turns t ON t.run_id = a.run_id AND t.turn = a.turn
                 WHERE (CAST(?1 AS BIGINT) IS NULL OR a.run_id = ?1) AND {}
                   AND (t.run_id IS NULL
                        OR (a.id IS DISTINCT FROM t.attempt_id AND a.text <> t.text))
                 ORDER BY 1 DESC, 2, 4 NULLS FIRST LIMIT ?3",
                like_ci(kind, "text", "?2"),
                like_ci(kind, "a.text", "?2"),
            ),
            p![run_id, like(needle), limit as i64],
            |r| {
                Ok(TextHit {
                    run_id: r.get(0)?,
                    turn: r.get(1)?,
                    text: r.get(2)?,
                    attempt: r.get(3)?,
                })
            },
        )?)
    }

    /// Keeps the exact request (messages and options, as JSON) an attempt sent.
    pub fn save_request(
        &mut self,
        attempt_id: i64,
        request: &serde_json::Value,
    ) -> Result<(), StoreError> {
        let text = request.to_string();
        self.transact(|tx| {
            tx.execute(
                "INSERT INTO requests (attempt_id, request) VALUES (?1, ?2)
                 ON CONFLICT (attempt_id) DO UPDATE SET request = excluded.request",
                p![attempt_id, text],
            )?;
            Ok(())
        })
    }

    /// The request attempt `attempt` of `turn` in `run` sent, if it was kept: (run, turn,
    /// attempt) is unique (001), so a live run's attempt is found as soon as it is stored.
    pub fn request_at(
        &self,
        run: i64,
        turn: u32,
        attempt: u32,
    ) -> Result<Option<serde_json::Value>, StoreError> {
        let id: Option<i64> = self
            .db()
            .one(
                "SELECT id FROM attempts WHERE run_id = ?1 AND turn = ?2 AND attempt = ?3",
                p![run, turn, attempt],
            )
            .optional()?;
        match id {
            Some(id) => self.request_of(id),
            None => Ok(None),
        }
    }

    /// The request an attempt sent, if it was kept (attempts before 007 have only a hash).
    pub fn request_of(&self, attempt_id: i64) -> Result<Option<serde_json::Value>, StoreError> {
        let s: Option<String> = self
            .db()
            .one(
                "SELECT request FROM requests WHERE attempt_id = ?1",
                p![attempt_id],
            )
            .optional()?;
        s.map(|s| {
            serde_json::from_str(&s)
                .map_err(|e| StoreError::Invalid(format!("request of attempt {attempt_id}: {e}")))
        })
        .transpose()
    }
}

/// Widens the CHECK on `actions.kind` by 'undo' (the documented `writable_schema` edit, as
/// migration 005 does for run statuses: a CHECK that accepts more changes nothing on disk).
pub(super) fn allow_undo(tx: &rusqlite::Transaction<'_>) -> Result<(), rusqlite::Error> {
    const OLD: &str = "'regenerate')";
    const NEW: &str = "'regenerate', 'undo')";
    let sql: String = tx.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'actions'",
        [],
        |r| r.get(0),
    )?;
    if sql.contains("'undo'") || !sql.contains(OLD) {
        return Ok(());
    }
    let schema: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    tx.execute_batch("PRAGMA writable_schema = ON")?;
    let done = tx.execute(
        "UPDATE sqlite_master SET sql = replace(sql, ?1, ?2)
         WHERE type = 'table' AND name = 'actions'",
        [OLD, NEW],
    );
    tx.execute_batch("PRAGMA writable_schema = OFF")?;
    done?;
    tx.pragma_update(None, "schema_version", schema + 1)?;
    Ok(())
}
