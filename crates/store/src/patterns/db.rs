//! Pattern rows: insert (with the seed's UNIQUE rule as a named error), read, and list with
//! each pattern's score and rank computed from its usage log.

use std::collections::HashMap;

use crate::p;
use crate::store::sql::{Db, DbError, Optional, Row};
use serde::Serialize;

use super::score::{self, Rank, ScoreInputs};
use super::stamp;
use super::{Character, NewPattern, Pattern, PatternError, ResponseType, atomic};

pub(crate) const COLUMNS: &str = "pattern_id, character, user_message_type, user_message_example, \
     bot_response, bot_response_type, used_count, success_count, failure_count, like_count, \
     dislike_count, is_counterfactual, success_rate, like_rate, created_at, last_used_at, \
     updated_at";

pub(crate) fn from_row(r: &Row) -> Result<Pattern, DbError> {
    let text = |idx: usize, what: String| DbError::Column(format!("column {idx}: {what}"));
    let c: String = r.get(1)?;
    let t: String = r.get(5)?;
    let count = |idx: usize| -> Result<u32, DbError> {
        let v: Option<i64> = r.get(idx)?;
        Ok(u32::try_from(v.unwrap_or(0).max(0)).unwrap_or(u32::MAX))
    };
    Ok(Pattern {
        pattern_id: r.get(0)?,
        character: Character::parse(&c).ok_or_else(|| text(1, format!("character {c:?}")))?,
        user_message_type: r.get(2)?,
        user_message_example: r.get(3)?,
        bot_response: r.get(4)?,
        bot_response_type: ResponseType::parse(&t)
            .ok_or_else(|| text(5, format!("bot_response_type {t:?}")))?,
        used_count: count(6)?,
        success_count: count(7)?,
        failure_count: count(8)?,
        like_count: count(9)?,
        dislike_count: count(10)?,
        is_counterfactual: r.get::<Option<bool>>(11)?.unwrap_or(false),
        success_rate: r.get(12)?,
        like_rate: r.get(13)?,
        created_at: r.get(14)?,
        last_used_at: r.get(15)?,
        updated_at: r.get(16)?,
    })
}

/// Inserts one pattern; a pattern with the same (user_message_type, bot_response, character)
/// is refused as [`PatternError::Duplicate`] naming the one already there.
pub fn add(db: Db<'_>, p: &NewPattern) -> Result<Pattern, PatternError> {
    let v = p.validate()?;
    atomic(db, |db| {
        let existing: Option<i64> = db
            .query_row(
                "SELECT pattern_id FROM prowrestling_patterns
                 WHERE user_message_type = ?1 AND bot_response = ?2 AND character = ?3",
                p![v.user_message_type, v.bot_response, v.character.as_str()],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(existing) = existing {
            return Err(PatternError::Duplicate { existing });
        }
        let now = stamp::iso(stamp::now_ms());
        let c = v.counts;
        let id: i64 = db.one(
            "INSERT INTO prowrestling_patterns (user_message_type, user_message_example,
                 bot_response, bot_response_type, character, used_count, success_count,
                 failure_count, like_count, dislike_count, is_counterfactual, created_at,
                 updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12)
             RETURNING pattern_id",
            p![
                v.user_message_type,
                v.user_message_example,
                v.bot_response,
                v.bot_response_type.as_str(),
                v.character.as_str(),
                c.used_count,
                c.success_count,
                c.failure_count,
                c.like_count,
                c.dislike_count,
                v.is_counterfactual,
                now
            ],
        )?;
        get(db, id)
    })
}

pub fn get(db: Db<'_>, pattern_id: i64) -> Result<Pattern, PatternError> {
    db.query_row(
        &format!("SELECT {COLUMNS} FROM prowrestling_patterns WHERE pattern_id = ?1"),
        p![pattern_id],
        from_row,
    )
    .optional()?
    .ok_or(PatternError::NoSuchPattern(pattern_id))
}

/// Every pattern (of one character, or all), by id.
pub fn list(db: Db<'_>, character: Option<Character>) -> Result<Vec<Pattern>, PatternError> {
    // The CAST gives PostgreSQL the parameter's type, which `?1 IS NULL` alone does not.
    Ok(db.query_map(
        &format!(
            "SELECT {COLUMNS} FROM prowrestling_patterns
             WHERE CAST(?1 AS TEXT) IS NULL OR character = ?1 ORDER BY pattern_id"
        ),
        p![character.map(Character::as_str)],
        from_row,
    )?)
}

/// A pattern with what the usage log says about it, its score and rank.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredPattern {
    #[serde(flatten)]
    pub pattern: Pattern,
    pub prowrestling_rate: f64,
    pub avg_reaction_time: Option<f64>,
    pub confidence: f64,
    pub score: f64,
    pub rank: Rank,
}

/// What the usage log says about one pattern: the part of its score the pattern row lacks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LogStats {
    pub resolved: u32,
    pub continued: u32,
    pub avg_reaction: Option<f64>,
}

pub(crate) fn log_stats(
    db: Db<'_>,
    only: Option<i64>,
) -> Result<HashMap<i64, LogStats>, PatternError> {
    let rows = db.query_map(
        "SELECT pattern_id,
                COUNT(user_reaction),
                COUNT(*) FILTER (WHERE user_reaction = 'continued'),
                AVG(CASE WHEN user_reaction IN ('replied', 'continued')
                         THEN reaction_time_seconds END)
         FROM prowrestling_usage_log
         WHERE pattern_id IS NOT NULL AND (CAST(?1 AS BIGINT) IS NULL OR pattern_id = ?1)
         GROUP BY pattern_id",
        p![only],
        |r| {
            let n = |v: Option<i64>| u32::try_from(v.unwrap_or(0).max(0)).unwrap_or(u32::MAX);
            Ok((
                r.get::<i64>(0)?,
                LogStats {
                    resolved: n(r.get(1)?),
                    continued: n(r.get(2)?),
                    avg_reaction: r.get(3)?,
                },
            ))
        },
    )?;
    Ok(rows.into_iter().collect())
}

fn with_stats(p: Pattern, s: LogStats) -> ScoredPattern {
    let prowrestling_rate = if s.resolved > 0 {
        f64::from(s.continued) / f64::from(s.resolved)
    } else {
        0.0
    };
    let inputs = ScoreInputs {
        success_rate: p.success_rate,
        prowrestling_rate,
        like_rate: p.like_rate,
        avg_reaction_time: s.avg_reaction,
        observed: p.success_count.saturating_add(p.failure_count),
    };
    let score = score::score(&inputs);
    ScoredPattern {
        prowrestling_rate,
        avg_reaction_time: s.avg_reaction,
        confidence: score::confidence(inputs.observed),
        score,
        rank: score::rank(score),
        pattern: p,
    }
}

/// One pattern, scored.
pub fn scored(db: Db<'_>, pattern_id: i64) -> Result<ScoredPattern, PatternError> {
    let p = get(db, pattern_id)?;
    let stats = log_stats(db, Some(pattern_id))?;
    Ok(with_stats(
        p,
        stats.get(&pattern_id).copied().unwrap_or_default(),
    ))
}

/// How `list` orders patterns; ties always fall back to pattern_id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SortKey {
    /// Highest score first.
    #[default]
    Score,
    /// S first, D last; within a rank the most used first.
    Rank,
    /// Highest success_rate first, then the most outcomes.
    Success,
    /// Highest like_rate first, then the most 👍.
    Likes,
}

/// Every pattern (of one character, or all), scored and sorted.
pub fn list_scored(
    db: Db<'_>,
    character: Option<Character>,
    sort: SortKey,
) -> Result<Vec<ScoredPattern>, PatternError> {
    let stats = log_stats(db, None)?;
    let mut out: Vec<ScoredPattern> = list(db, character)?
        .into_iter()
        .map(|p| {
            let s = stats.get(&p.pattern_id).copied().unwrap_or_default();
            with_stats(p, s)
        })
        .collect();
    let desc = |a: f64, b: f64| b.total_cmp(&a);
    out.sort_by(|a, b| {
        let (pa, pb) = (&a.pattern, &b.pattern);
        let key = match sort {
            SortKey::Score => desc(a.score, b.score),
            SortKey::Rank => a.rank.cmp(&b.rank).then(pb.used_count.cmp(&pa.used_count)),
            SortKey::Success => desc(pa.success_rate, pb.success_rate).then(
                (pb.success_count + pb.failure_count).cmp(&(pa.success_count + pa.failure_count)),
            ),
            SortKey::Likes => {
                desc(pa.like_rate, pb.like_rate).then(pb.like_count.cmp(&pa.like_count))
            }
        };
        key.then(pa.pattern_id.cmp(&pb.pattern_id))
    });
    Ok(out)
}
