//! The `comparisons` and `comparison_turns` tables (migration 008): a comparison is created
//! before its first turn, each turn's row is committed as it finishes, and the summary last —
//! so an interrupted comparison keeps every finished turn. Writes go through `Store::write`.

use crate::p;
use crate::store::sql::Optional;
use serde::{Deserialize, Serialize};

use super::outcome::{Summary, TurnRow};
use crate::store::{Store, StoreError, time};

/// What a comparison is, before it has results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub kind: String,
    pub baseline_run: Option<i64>,
    pub variant_name: String,
    pub variant_path: Option<String>,
    pub variant_text: String,
    pub variant_hash: String,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    pub options: serde_json::Value,
    pub sample_runs: Vec<i64>,
}

/// A stored comparison, reopened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    pub id: i64,
    pub header: Header,
    pub created_at: String,
    pub turns: Vec<TurnRow>,
    /// None while (or when) the comparison did not finish, and for unpaired comparisons.
    pub summary: Option<Summary>,
    /// Unpaired mode's result (`compare::unpaired::Unpaired` as JSON).
    #[serde(default)]
    pub unpaired: Option<serde_json::Value>,
}

pub fn create(store: &mut Store, h: &Header) -> Result<i64, StoreError> {
    let options = h.options.to_string();
    let samples = serde_json::to_string(&h.sample_runs).unwrap_or_else(|_| "[]".into());
    store.transact(|tx| {
        Ok(tx.one::<i64>(
            "INSERT INTO comparisons (kind, baseline_run, variant_name, variant_path, variant_text,
                                      variant_hash, model, endpoint, options, sample_runs,
                                      created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id",
            p![
                h.kind,
                h.baseline_run,
                h.variant_name,
                h.variant_path,
                h.variant_text,
                h.variant_hash,
                h.model,
                h.endpoint,
                options,
                samples,
                time::now_iso()
            ],
        )?)
    })
}

/// Sample runs are created after the header (they name it): record them.
pub fn set_sample_runs(store: &mut Store, id: i64, runs: &[i64]) -> Result<(), StoreError> {
    let text = serde_json::to_string(runs).unwrap_or_else(|_| "[]".into());
    store.transact(|tx| {
        tx.execute(
            "UPDATE comparisons SET sample_runs = ?2 WHERE id = ?1",
            p![id, text],
        )?;
        Ok(())
    })
}

pub fn add_turn(store: &mut Store, id: i64, row: &TurnRow) -> Result<(), StoreError> {
    let json = serde_json::to_string(row).map_err(|e| StoreError::Invalid(e.to_string()))?;
    let change = serde_json::to_value(row.change)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    store.transact(|tx| {
        tx.execute(
            "INSERT INTO comparison_turns (comparison_id, turn, speaker, change, row)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (comparison_id, turn) DO UPDATE SET speaker = excluded.speaker,
                 change = excluded.change, row = excluded.row",
            p![id, row.turn as i64, row.speaker, change, json],
        )?;
        Ok(())
    })
}

pub fn set_summary<T: Serialize>(store: &mut Store, id: i64, s: &T) -> Result<(), StoreError> {
    let json = serde_json::to_string(s).map_err(|e| StoreError::Invalid(e.to_string()))?;
    store.transact(|tx| {
        tx.execute(
            "UPDATE comparisons SET summary = ?2 WHERE id = ?1",
            p![id, json],
        )?;
        Ok(())
    })
}

/// A stored comparison; Ok(None) when there is no such id. A row that does not parse is an
/// error naming the comparison and turn (never silently skipped).
pub fn load(store: &Store, id: i64) -> Result<Option<Stored>, StoreError> {
    let conn = store.db();
    type Row = (
        String,
        Option<i64>,
        String,
        Option<String>,
        String,
        String,
        Option<String>,
        Option<String>,
        String,
        String,
        Option<String>,
        String,
    );
    let head: Option<Row> = conn
        .query_row(
            "SELECT kind, baseline_run, variant_name, variant_path, variant_text, variant_hash,
                    model, endpoint, options, sample_runs, summary, created_at
             FROM comparisons WHERE id = ?1",
            p![id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                    r.get(10)?,
                    r.get(11)?,
                ))
            },
        )
        .optional()?;
    let Some(h) = head else { return Ok(None) };
    let bad = |what: String| StoreError::Invalid(format!("comparison {id}: {what}"));
    let (mut summary, mut unpaired) = (None, None);
    if let Some(s) = &h.10 {
        if h.0 == "unpaired" {
            unpaired = Some(serde_json::from_str(s).map_err(|e| bad(format!("summary: {e}")))?);
        } else {
            summary = Some(serde_json::from_str(s).map_err(|e| bad(format!("summary: {e}")))?);
        }
    }
    let raw: Vec<(i64, String)> = conn.query_map(
        "SELECT turn, row FROM comparison_turns WHERE comparison_id = ?1 ORDER BY turn",
        p![id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut turns = Vec::new();
    for (t, json) in raw {
        turns.push(serde_json::from_str(&json).map_err(|e| bad(format!("turn {t}: {e}")))?);
    }
    Ok(Some(Stored {
        id,
        header: Header {
            kind: h.0,
            baseline_run: h.1,
            variant_name: h.2,
            variant_path: h.3,
            variant_text: h.4,
            variant_hash: h.5,
            model: h.6,
            endpoint: h.7,
            options: serde_json::from_str(&h.8).unwrap_or_default(),
            sample_runs: serde_json::from_str(&h.9).unwrap_or_default(),
        },
        created_at: h.11,
        turns,
        summary,
        unpaired,
    }))
}

/// The newest comparison whose baseline is `run`, if any.
pub fn latest_for_run(store: &Store, run: i64) -> Result<Option<i64>, StoreError> {
    Ok(store
        .db()
        .one(
            "SELECT id FROM comparisons WHERE baseline_run = ?1 ORDER BY id DESC LIMIT 1",
            p![run],
        )
        .optional()?)
}
