//! Seed 002's `JudgmentCacheRepository` on `judgment_caches`: save (upsert on channel + thread),
//! find_by_scope, delete_expired (next_check_at before a time), delete_by_scope.

use crate::p;
use crate::store::sql::{DbError, Optional, Row};

use super::judgment::JudgmentCache;
use crate::patterns::stamp::{self, Millis};
use crate::store::{Store, StoreError};

fn cache_row(r: &Row) -> Result<JudgmentCache, DbError> {
    let t = |i: usize| -> Result<Millis, DbError> {
        let s: String = r.get(i)?;
        Ok(stamp::from_db(&s).unwrap_or(0))
    };
    let thread: String = r.get(1)?;
    Ok(JudgmentCache {
        channel_id: r.get(0)?,
        thread_ts: (!thread.is_empty()).then_some(thread),
        should_respond: r.get(2)?,
        confidence: r.get(3)?,
        reason: r.get(4)?,
        latest_message_ts: r.get(5)?,
        next_check_at: t(6)?,
        created_at: t(7)?,
        updated_at: t(8)?,
    })
}

/// Upsert: the same channel + thread updates the one row (created_at kept).
pub fn save_cache(store: &mut Store, c: &JudgmentCache) -> Result<(), StoreError> {
    store.transact(|tx| {
        tx.execute(
            "INSERT INTO judgment_caches (channel_id, thread_ts, should_respond, confidence, reason,
               latest_message_ts, next_check_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (channel_id, thread_ts) DO UPDATE SET
               should_respond = excluded.should_respond, confidence = excluded.confidence,
               reason = excluded.reason, latest_message_ts = excluded.latest_message_ts,
               next_check_at = excluded.next_check_at, updated_at = excluded.updated_at",
            p![
                c.channel_id,
                c.thread_ts.as_deref().unwrap_or(""),
                c.should_respond,
                c.confidence,
                c.reason,
                c.latest_message_ts,
                stamp::iso(c.next_check_at),
                stamp::iso(c.created_at),
                stamp::iso(c.updated_at)
            ],
        )?;
        Ok(())
    })
}

const CACHE_COLS: &str = "channel_id, thread_ts, should_respond, confidence, reason, latest_message_ts, next_check_at, created_at, updated_at";

pub fn find_cache(
    store: &Store,
    channel: &str,
    thread: Option<&str>,
) -> Result<Option<JudgmentCache>, StoreError> {
    Ok(store
        .db()
        .query_row(
            &format!(
                "SELECT {CACHE_COLS} FROM judgment_caches WHERE channel_id = ?1 AND thread_ts = ?2"
            ),
            p![channel, thread.unwrap_or("")],
            cache_row,
        )
        .optional()?)
}

/// Every cache row, newest update first (the workbench's view).
pub fn all_caches(store: &Store) -> Result<Vec<JudgmentCache>, StoreError> {
    Ok(store.db().query_map(
        &format!("SELECT {CACHE_COLS} FROM judgment_caches ORDER BY updated_at DESC, id DESC"),
        p![],
        cache_row,
    )?)
}

/// Deletes rows whose next_check_at is before `before`; returns how many.
pub fn delete_expired(store: &mut Store, before: Millis) -> Result<usize, StoreError> {
    let b = stamp::iso(before);
    store.transact(|tx| {
        Ok(tx.execute(
            "DELETE FROM judgment_caches WHERE next_check_at < ?1",
            p![&b],
        )?)
    })
}

pub fn delete_cache(
    store: &mut Store,
    channel: &str,
    thread: Option<&str>,
) -> Result<(), StoreError> {
    store.transact(|tx| {
        tx.execute(
            "DELETE FROM judgment_caches WHERE channel_id = ?1 AND thread_ts = ?2",
            p![channel, thread.unwrap_or("")],
        )?;
        Ok(())
    })
}
