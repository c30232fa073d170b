//! Interview rows in the run store (migration 010): every write goes through
//! `Store::write` (BEGIN IMMEDIATE, busy retry), so a line is shown only after it is saved.

use crate::p;
use crate::store::sql::Optional;
use serde::Serialize;

use crate::store::{Store, StoreError, time};

#[derive(Debug, Clone)]
pub struct NewMessage {
    pub interview_id: i64,
    pub seq: i64,
    pub role: &'static str,
    pub state: String,
    pub content: String,
    pub original_content_hash: Option<String>,
    pub pii_kinds: Vec<String>,
    pub source: &'static str,
    pub verdict: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InterviewRow {
    pub id: i64,
    pub name: String,
    pub state: String,
    pub fallback: bool,
    pub finish: Option<String>,
    pub user_turns: i64,
    pub analysis: String,
}

pub fn create(
    s: &mut Store,
    name: &str,
    sister: &str,
    model: &str,
    endpoint: &str,
    state: &str,
) -> Result<i64, StoreError> {
    s.transact(|tx| {
        Ok(tx.one::<i64>(
            "INSERT INTO interviews (name, sister, model, endpoint, started_at, state)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
            p![name, sister, model, endpoint, time::now_iso(), state],
        )?)
    })
}

/// Saves one message and the interview's state after it, in one transaction.
pub fn add_message(
    s: &mut Store,
    m: &NewMessage,
    fallback: bool,
    user_turns: usize,
) -> Result<(), StoreError> {
    let kinds = serde_json::to_string(&m.pii_kinds).unwrap_or_else(|_| "[]".into());
    let verdict = m.verdict.as_ref().map(|v| v.to_string());
    s.transact(|tx| {
        tx.execute(
            "INSERT INTO interview_messages (interview_id, seq, role, state, content,
                 original_content_hash, pii_kinds, source, verdict, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            p![
                m.interview_id,
                m.seq,
                m.role,
                m.state,
                m.content,
                m.original_content_hash,
                kinds,
                m.source,
                verdict,
                time::now_iso()
            ],
        )?;
        tx.execute(
            "UPDATE interviews SET state = ?2, fallback = ?3, user_turns = ?4 WHERE id = ?1",
            p![m.interview_id, m.state, fallback, user_turns as i64],
        )?;
        Ok(())
    })
}

/// Marks the interview finished and queues its analysis.
pub fn finish(s: &mut Store, id: i64, finish: &str) -> Result<(), StoreError> {
    s.transact(|tx| {
        tx.execute(
            "UPDATE interviews SET state = 'done', finish = ?2, ended_at = ?3,
                 analysis = 'queued' WHERE id = ?1",
            p![id, finish, time::now_iso()],
        )?;
        Ok(())
    })
}

/// Finished interviews (all, or one name's), oldest first.
pub fn finished(s: &Store, name: Option<&str>) -> Result<Vec<InterviewRow>, StoreError> {
    let rows = s.db().query_map(
        "SELECT id, name, state, fallback, finish, user_turns, analysis FROM interviews
         WHERE ended_at IS NOT NULL AND (CAST(?1 AS TEXT) IS NULL OR name = ?1) ORDER BY id",
        p![name],
        |r| {
            Ok(InterviewRow {
                id: r.get(0)?,
                name: r.get(1)?,
                state: r.get(2)?,
                fallback: r.get(3)?,
                finish: r.get(4)?,
                user_turns: r.get(5)?,
                analysis: r.get(6)?,
            })
        },
    )?;
    Ok(rows)
}

/// The user's messages of one interview, oldest first, without `[スキップ]`.
pub fn user_messages(s: &Store, id: i64) -> Result<Vec<String>, StoreError> {
    let rows = s.db().query_map(
        "SELECT content FROM interview_messages WHERE interview_id = ?1 AND role = 'user'
         ORDER BY seq",
        p![id],
        |r| r.get::<String>(0),
    )?;
    Ok(rows
        .into_iter()
        .filter(|m| m.trim() != super::state::SKIP)
        .collect())
}

pub fn set_analysis(
    s: &mut Store,
    id: i64,
    status: &str,
    error: Option<&str>,
    keywords: &serde_json::Value,
) -> Result<(), StoreError> {
    s.transact(|tx| {
        tx.execute(
            "UPDATE interviews SET analysis = ?2, analysis_error = ?3, keywords = ?4 WHERE id = ?1",
            p![id, status, error, keywords.to_string()],
        )?;
        Ok(())
    })
}

/// The interview's name, when it exists.
pub fn name_of(s: &Store, id: i64) -> Result<Option<String>, StoreError> {
    Ok(s.db()
        .one("SELECT name FROM interviews WHERE id = ?1", p![id])
        .optional()?)
}
