//! Best match (seed 000 §6.3): the character's patterns with success_rate ≥ threshold, in the
//! seed's order `success_rate·0.6 + like_rate·0.4` DESC — plus a cheap look at the message.
//!
//! Relevance: the seed ignores the user's message. Here the key is read in buckets of 0.01
//! (0.864 and 0.869 tie); within the top bucket the pattern whose `user_message_example` shares
//! the most character bigrams with the message (Dice coefficient) wins, then the higher exact
//! key, then the lower pattern_id. Outside that bucket the seed's order stands, so relevance can
//! only choose among patterns the seed's order rates as equally good. A caller that knows the
//! message's type (Layer 4, a classifier) may pass it: patterns of that `user_message_type` are
//! preferred, and the others are used only when none of that type qualifies.
//!
//! (At most 64 patterns of the top bucket are compared, in the seed's order.)
//!
//! Speed: the character's qualifying patterns are walked in the seed's order on
//! `idx_pattern_best` (character, key DESC, pattern_id, success_rate) — the threshold is checked
//! inside the index and nothing is sorted — until the top bucket is complete; only those few
//! candidates' rows are read (for their examples). When fewer than
//! 256 patterns qualify (a probe of the success_rate index says so), the seed's plan is used
//! instead: find them through `idx_character_success_rate` and sort them.

use crate::p;
use crate::store::sql::{Db, Kind};
use serde::Serialize;

use super::db::{COLUMNS, from_row};
use super::{Character, Pattern, PatternError};

/// Below this many qualifying patterns the seed's plan (find them, sort them) is cheapest.
const FEW: i64 = 256;
/// Candidates of the top bucket compared with the message, at most.
const BUCKET_CAP: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub struct BestQuery<'a> {
    pub character: Character,
    /// The user's message (masked or not: it is only compared, never stored).
    pub message: &'a str,
    /// Seed default 0.7.
    pub min_success: f64,
    /// Prefer patterns of this `user_message_type`.
    pub message_type: Option<&'a str>,
}

impl<'a> BestQuery<'a> {
    pub fn new(character: Character, message: &'a str) -> BestQuery<'a> {
        BestQuery {
            character,
            message,
            min_success: 0.7,
            message_type: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestMatch {
    #[serde(flatten)]
    pub pattern: Pattern,
    /// success_rate·0.6 + like_rate·0.4.
    pub match_key: f64,
    /// Bigram Dice of the message and the pattern's example, 0–1.
    pub relevance: f64,
    /// Whether the pattern is of the preferred `message_type` (always false without one).
    pub type_matched: bool,
}

/// The best qualifying pattern, or `None` when none reaches the threshold.
pub fn best_match(conn: Db<'_>, q: &BestQuery) -> Result<Option<BestMatch>, PatternError> {
    if !(0.0..=1.0).contains(&q.min_success) {
        return Err(PatternError::invalid(
            "min_success",
            format!("{} is not between 0 and 1", q.min_success),
        ));
    }
    let grams = bigrams(q.message);
    if let Some(t) = q.message_type
        && let Some(m) = pick(conn, q, Some(t), &grams)?
    {
        return Ok(Some(m));
    }
    pick(conn, q, None, &grams)
}

fn pick(
    conn: Db<'_>,
    q: &BestQuery,
    message_type: Option<&str>,
    grams: &[(char, char)],
) -> Result<Option<BestMatch>, PatternError> {
    let Some(cands) = top_bucket(conn, q, message_type)? else {
        return Ok(None);
    };
    // (relevance, key, id) of the best so far.
    let mut best: Option<(f64, f64, i64)> = None;
    for (id, key, example) in cands {
        let rel = dice(grams, &bigrams(&example));
        let better = best.is_none_or(|(br, bk, bid)| {
            rel.total_cmp(&br)
                .then(key.total_cmp(&bk))
                .then(bid.cmp(&id))
                .is_gt()
        });
        if better {
            best = Some((rel, key, id));
        }
    }
    let Some((relevance, match_key, id)) = best else {
        return Ok(None);
    };
    let pattern = conn.query_row(
        &format!("SELECT {COLUMNS} FROM prowrestling_patterns WHERE pattern_id = ?1"),
        p![id],
        from_row,
    )?;
    Ok(Some(BestMatch {
        pattern,
        match_key,
        relevance,
        type_matched: message_type.is_some(),
    }))
}

fn bucket(key: f64) -> i64 {
    ((key + 1e-9) * 100.0).floor() as i64
}

/// A candidate: pattern_id, key, user_message_example.
type Cand = (i64, f64, String);

/// Keeps the leading rows of one key bucket, at most `BUCKET_CAP`.
fn first_bucket(rows: Vec<Cand>) -> Result<Option<Vec<Cand>>, PatternError> {
    let mut out = Vec::new();
    let mut top = None;
    for cand in rows {
        let b = bucket(cand.1);
        if top.is_some_and(|t| t != b) || out.len() >= BUCKET_CAP {
            break;
        }
        top = Some(b);
        out.push(cand);
    }
    Ok(top.map(|_| out))
}

/// The qualifying patterns in the highest key bucket, or `None` when no pattern
/// qualifies.
fn top_bucket(
    conn: Db<'_>,
    q: &BestQuery,
    message_type: Option<&str>,
) -> Result<Option<Vec<Cand>>, PatternError> {
    let min = q.min_success - 1e-12;
    if message_type.is_none() && qualifying_at_most(conn, q.character, min, FEW)? < FEW {
        return few_qualifying(conn, q.character, min);
    }
    let (index, type_filter) = match message_type {
        Some(_) => ("idx_pattern_best_by_type", "user_message_type = ?2"),
        None => ("idx_pattern_best", "CAST(?2 AS TEXT) IS NULL"),
    };
    // At most BUCKET_CAP rows are ever kept, so no more are read.
    let rows = conn.query_map(
        &format!(
            "SELECT pattern_id, success_rate * 0.6 + like_rate * 0.4, user_message_example
             FROM prowrestling_patterns {}
             WHERE character = ?1 AND {type_filter} AND success_rate >= ?3
             ORDER BY success_rate * 0.6 + like_rate * 0.4 DESC, pattern_id LIMIT ?4",
            indexed_by(conn.kind(), index)
        ),
        p![q.character.as_str(), message_type, min, BUCKET_CAP],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    first_bucket(rows)
}

/// SQLite's `INDEXED BY` (the plan is part of the contract there, see the tests); PostgreSQL's
/// planner chooses the same indexes by itself.
fn indexed_by(kind: Kind, index: &str) -> String {
    match kind {
        Kind::Sqlite => format!("INDEXED BY {index}"),
        Kind::Postgres => String::new(),
    }
}

/// How many of the character's patterns reach `min`, counting no further than `cap`.
fn qualifying_at_most(
    conn: Db<'_>,
    character: Character,
    min: f64,
    cap: i64,
) -> Result<i64, PatternError> {
    Ok(conn.one(
        &format!(
            "SELECT COUNT(*) FROM (SELECT 1 FROM prowrestling_patterns {}
                 WHERE character = ?1 AND success_rate >= ?2 LIMIT ?3) AS qualifying",
            indexed_by(conn.kind(), "idx_character_success_rate")
        ),
        p![character.as_str(), min, cap],
    )?)
}

/// The seed's own plan, for when few patterns qualify: find them all through the success_rate
/// index and sort them.
fn few_qualifying(
    conn: Db<'_>,
    character: Character,
    min: f64,
) -> Result<Option<Vec<Cand>>, PatternError> {
    let rows = conn.query_map(
        &format!(
            "SELECT pattern_id, success_rate * 0.6 + like_rate * 0.4, user_message_example
             FROM prowrestling_patterns {}
             WHERE character = ?1 AND success_rate >= ?2
             ORDER BY success_rate * 0.6 + like_rate * 0.4 DESC, pattern_id LIMIT ?3",
            indexed_by(conn.kind(), "idx_character_success_rate")
        ),
        p![character.as_str(), min, BUCKET_CAP],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    first_bucket(rows)
}

/// Character bigrams of the text's letters and digits, sorted and distinct (NFKC,
/// lower-cased; spaces, punctuation and symbols dropped, so 「バカ!!」 and 「バカ」 match).
/// A one-letter text yields its single letter paired with itself.
pub fn bigrams(text: &str) -> Vec<(char, char)> {
    use unicode_normalization::UnicodeNormalization;
    let chars: Vec<char> = text
        .nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect();
    let mut grams: Vec<(char, char)> = match chars.as_slice() {
        [] => Vec::new(),
        [c] => vec![(*c, *c)],
        _ => chars.windows(2).map(|w| (w[0], w[1])).collect(),
    };
    grams.sort_unstable();
    grams.dedup();
    grams
}

/// Dice coefficient of two sorted, distinct bigram lists.
fn dice(a: &[(char, char)], b: &[(char, char)]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * shared as f64 / (a.len() + b.len()) as f64
}

/// Bigram Dice coefficient of two texts, 0–1.
pub fn relevance(a: &str, b: &str) -> f64 {
    dice(&bigrams(a), &bigrams(b))
}
