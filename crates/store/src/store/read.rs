//! Typed read queries: the run list and one whole run.

use crate::p;

use super::sql::{DbError, Kind, Optional, Row};

use super::{
    ActionKind, ActionRow, AttemptRow, AttemptState, RunRecord, RunRow, RunStatus, RunSummary,
    Store, StoreError, TurnFlags, TurnRow,
};
use crate::director::Status;

impl Store {
    /// The newest runs first (by start time, then id).
    pub fn runs(&self, limit: usize) -> Result<Vec<RunSummary>, StoreError> {
        let db = self.db();
        let kind = db.kind();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = db.query_map(
            &format!(
                "SELECT r.id, r.started_at, r.topic, r.model, r.status, r.source,
                        (SELECT COUNT(*) FROM turns t WHERE t.run_id = r.id), {}
                 FROM runs r ORDER BY {} DESC, r.id DESC LIMIT ?1",
                sample_column(kind),
                kind.bytewise("r.started_at")
            ),
            p![limit],
            |r| {
                Ok(RunSummary {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    topic: r.get(2)?,
                    model: r.get(3)?,
                    status: run_status(r, 4)?,
                    source: r.get(5)?,
                    turns: r.get(6)?,
                    sample: sample(kind, r, 7)?,
                })
            },
        )?;
        Ok(rows)
    }

    /// The run with its turns, every attempt (committed or not) and its actions.
    pub fn load_run(&self, run_id: i64) -> Result<RunRecord, StoreError> {
        let db = self.db();
        let run = db
            .query_row(
                "SELECT id, topic, model, endpoint, api, options, persona_version,
                        ruleset_version, started_at, ended_at, status, error, source
                 FROM runs WHERE id = ?1",
                p![run_id],
                |r| {
                    Ok(RunRow {
                        id: r.get(0)?,
                        topic: r.get(1)?,
                        model: r.get(2)?,
                        endpoint: r.get(3)?,
                        api: r.get(4)?,
                        options: json(r, 5)?.unwrap_or(serde_json::Value::Null),
                        persona_version: r.get(6)?,
                        ruleset_version: r.get(7)?,
                        started_at: r.get(8)?,
                        ended_at: r.get(9)?,
                        status: run_status(r, 10)?,
                        error: r.get(11)?,
                        source: r.get(12)?,
                    })
                },
            )
            .optional()?
            .ok_or(StoreError::NoSuchRun(run_id))?;

        let turns = db.query_map(
            "SELECT turn, speaker, attempt_id, text, status, exhausted, futile, held, hook,
                    hook_depth, committed_at
             FROM turns WHERE run_id = ?1 ORDER BY turn",
            p![run_id],
            |r| {
                Ok(TurnRow {
                    turn: r.get(0)?,
                    speaker: r.get(1)?,
                    attempt_id: r.get(2)?,
                    text: r.get(3)?,
                    status: status(r, 4)?.unwrap_or(Status::Unscored),
                    flags: TurnFlags {
                        exhausted: r.get(5)?,
                        futile: r.get(6)?,
                        held: r.get(7)?,
                        withheld: false,
                    },
                    hook: r.get(8)?,
                    hook_depth: r.get(9)?,
                    committed_at: r.get(10)?,
                })
            },
        )?;

        let attempts = db.query_map(
            "SELECT id, turn, speaker, attempt, state, text, status, verdict, judge, judge_raw,
                    guidance, prompt_hash, started_at, first_token_ms, latency_ms, tokens, error,
                    origin, fallback
             FROM attempts WHERE run_id = ?1 ORDER BY turn, attempt",
            p![run_id],
            |r| {
                Ok(AttemptRow {
                    id: r.get(0)?,
                    turn: r.get(1)?,
                    speaker: r.get(2)?,
                    attempt: r.get(3)?,
                    state: parse_col(r, 4, AttemptState::parse)?,
                    text: r.get(5)?,
                    status: status(r, 6)?,
                    verdict: json(r, 7)?,
                    judge: json(r, 8)?,
                    judge_raw: r.get(9)?,
                    guidance: r.get(10)?,
                    prompt_hash: r.get(11)?,
                    started_at: r.get(12)?,
                    first_token_ms: non_negative(r, 13)?,
                    latency_ms: non_negative(r, 14)?,
                    tokens: r.get(15)?,
                    error: r.get(16)?,
                    origin: json(r, 17)?,
                    fallback: r.get(18)?,
                })
            },
        )?;

        let actions = db.query_map(
            "SELECT id, turn, attempt_id, kind, payload, created_at, source, reviewer
             FROM actions WHERE run_id = ?1 ORDER BY id",
            p![run_id],
            |r| {
                Ok(ActionRow {
                    id: r.get(0)?,
                    turn: r.get(1)?,
                    attempt_id: r.get(2)?,
                    kind: parse_col(r, 3, ActionKind::parse)?,
                    payload: json(r, 4)?.unwrap_or(serde_json::Value::Null),
                    created_at: r.get(5)?,
                    source: r.get(6)?,
                    reviewer: r.get(7)?,
                })
            },
        )?;

        let mut turns = turns;
        mark_withheld(&mut turns, &attempts);
        Ok(RunRecord {
            run,
            turns,
            attempts,
            actions,
        })
    }
}

/// A committed RETRY turn whose text is not its attempt's is her fallback line in place of a
/// line the leak review rejected (`TurnFlags::withheld`): the store keeps no column for it, the
/// two texts say it.
fn mark_withheld(turns: &mut [TurnRow], attempts: &[AttemptRow]) {
    for t in turns.iter_mut().filter(|t| t.status == Status::Retry) {
        let Some(id) = t.attempt_id else { continue };
        if let Some(a) = attempts.iter().find(|a| a.id == id) {
            t.flags.withheld = a.text.as_deref().is_some_and(|x| x != t.text);
        }
    }
}

/// What the run list shows as a run's sample mark: SQLite computes it in SQL
/// ([`super::SAMPLE_SQL`]); PostgreSQL (15 has no `IS JSON` to guard a cast) returns the
/// options and [`sample`] reads them as `SAMPLE_SQL` does (`pg::read::sample_of`).
pub(super) fn sample_column(kind: Kind) -> &'static str {
    match kind {
        Kind::Sqlite => super::SAMPLE_SQL,
        Kind::Postgres => "r.options",
    }
}

/// Reads the column [`sample_column`] selected.
pub(super) fn sample(kind: Kind, r: &Row, idx: usize) -> Result<Option<String>, DbError> {
    match kind {
        Kind::Sqlite => r.get(idx),
        Kind::Postgres => Ok(r
            .get::<Option<String>>(idx)?
            .and_then(|o| super::pg::read::sample_of(&o))),
    }
}

fn bad_text(idx: usize, what: String) -> DbError {
    DbError::Column(format!("column {idx}: {what}"))
}

fn parse_col<T>(r: &Row, idx: usize, parse: fn(&str) -> Option<T>) -> Result<T, DbError> {
    let s: String = r.get(idx)?;
    parse(&s).ok_or_else(|| bad_text(idx, format!("unknown value {s:?}")))
}

fn run_status(r: &Row, idx: usize) -> Result<RunStatus, DbError> {
    parse_col(r, idx, RunStatus::parse)
}

fn status(r: &Row, idx: usize) -> Result<Option<Status>, DbError> {
    let s: Option<String> = r.get(idx)?;
    s.map(|s| Status::parse(&s).ok_or_else(|| bad_text(idx, format!("unknown status {s:?}"))))
        .transpose()
}

fn json(r: &Row, idx: usize) -> Result<Option<serde_json::Value>, DbError> {
    let s: Option<String> = r.get(idx)?;
    s.map(|s| serde_json::from_str(&s).map_err(|e| bad_text(idx, e.to_string())))
        .transpose()
}

fn non_negative(r: &Row, idx: usize) -> Result<Option<u64>, DbError> {
    let v: Option<i64> = r.get(idx)?;
    Ok(v.map(|v| u64::try_from(v).unwrap_or(0)))
}
