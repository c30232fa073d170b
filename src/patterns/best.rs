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
//! Speed: the rows come from `idx_pattern_best` (character, key DESC, pattern_id, success_rate),
//! walked in order without touching the table until the top bucket is known, so the cost does
//! not grow with the number of patterns unless many high-key patterns miss the threshold; after
//! `SCAN_CAP` such rows it falls back to the seed's own plan (the success_rate index plus a sort).

use std::collections::HashSet;

use rusqlite::{Connection, params};
use serde::Serialize;

use super::db::{COLUMNS, from_row};
use super::{Character, Pattern, PatternError};

/// Index rows read before giving up on the ordered walk.
const SCAN_CAP: usize = 2048;
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
pub fn best_match(conn: &Connection, q: &BestQuery) -> Result<Option<BestMatch>, PatternError> {
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
    conn: &Connection,
    q: &BestQuery,
    message_type: Option<&str>,
    grams: &HashSet<(char, char)>,
) -> Result<Option<BestMatch>, PatternError> {
    let Some(ids) = top_bucket(conn, q, message_type)? else {
        return Ok(None);
    };
    let mut best: Option<BestMatch> = None;
    let mut st = conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, success_rate * 0.6 + like_rate * 0.4
         FROM prowrestling_patterns WHERE pattern_id = ?1"
    ))?;
    for id in ids {
        let (pattern, match_key) = st.query_row([id], |r| Ok((from_row(r)?, r.get(17)?)))?;
        let relevance = dice(grams, &bigrams(&pattern.user_message_example));
        let cand = BestMatch {
            type_matched: message_type.is_some(),
            pattern,
            match_key,
            relevance,
        };
        let better = match &best {
            None => true,
            Some(b) => cand
                .relevance
                .total_cmp(&b.relevance)
                .then(cand.match_key.total_cmp(&b.match_key))
                .then(b.pattern.pattern_id.cmp(&cand.pattern.pattern_id))
                .is_gt(),
        };
        if better {
            best = Some(cand);
        }
    }
    Ok(best)
}

fn bucket(key: f64) -> i64 {
    ((key + 1e-9) * 100.0).floor() as i64
}

/// The ids of the qualifying patterns in the highest key bucket (at most `BUCKET_CAP`), or
/// `None` when no pattern qualifies.
fn top_bucket(
    conn: &Connection,
    q: &BestQuery,
    message_type: Option<&str>,
) -> Result<Option<Vec<i64>>, PatternError> {
    let (index, type_filter) = match message_type {
        Some(_) => ("idx_pattern_best_by_type", "AND user_message_type = ?2"),
        None => ("idx_pattern_best", "AND ?2 IS NULL"),
    };
    let mut st = conn.prepare_cached(&format!(
        "SELECT pattern_id, success_rate, success_rate * 0.6 + like_rate * 0.4
         FROM prowrestling_patterns INDEXED BY {index}
         WHERE character = ?1 {type_filter}
         ORDER BY success_rate * 0.6 + like_rate * 0.4 DESC, pattern_id"
    ))?;
    let mut rows = st.query(params![q.character.as_str(), message_type])?;
    let mut ids = Vec::new();
    let mut top: Option<i64> = None;
    let mut scanned = 0usize;
    while let Some(r) = rows.next()? {
        let (id, success, key): (i64, f64, f64) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let b = bucket(key);
        // Keys only go down: once below the top bucket, nothing later can join it.
        if top.is_some_and(|t| t != b) {
            break;
        }
        scanned += 1;
        if success + 1e-12 >= q.min_success {
            top.get_or_insert(b);
            ids.push(id);
            if ids.len() >= BUCKET_CAP {
                break;
            }
        } else if top.is_none() && scanned >= SCAN_CAP {
            drop(rows);
            return fallback(conn, q, message_type);
        }
    }
    Ok(top.map(|_| ids))
}

/// The seed's plan: every qualifying pattern through the success_rate index, then a sort.
fn fallback(
    conn: &Connection,
    q: &BestQuery,
    message_type: Option<&str>,
) -> Result<Option<Vec<i64>>, PatternError> {
    let mut st = conn.prepare_cached(
        "SELECT pattern_id, success_rate * 0.6 + like_rate * 0.4
         FROM prowrestling_patterns INDEXED BY idx_character_success_rate
         WHERE character = ?1 AND success_rate >= ?2 - 1e-12
           AND (?3 IS NULL OR user_message_type = ?3)
         ORDER BY success_rate * 0.6 + like_rate * 0.4 DESC, pattern_id
         LIMIT ?4",
    )?;
    let rows = st.query_map(
        params![
            q.character.as_str(),
            q.min_success,
            message_type,
            BUCKET_CAP as i64
        ],
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)),
    )?;
    let mut ids = Vec::new();
    let mut top = None;
    for row in rows {
        let (id, key) = row?;
        let b = bucket(key);
        if top.is_some_and(|t| t != b) {
            break;
        }
        top = Some(b);
        ids.push(id);
    }
    Ok(top.map(|_| ids))
}

/// Character bigrams of the text's letters and digits (NFKC, lower-cased; spaces, punctuation
/// and symbols dropped, so 「バカ！」 and 「ばか」 differ but 「バカ!!」 and 「バカ」 do not).
/// A one-letter text yields its single letter paired with itself.
pub fn bigrams(text: &str) -> HashSet<(char, char)> {
    use unicode_normalization::UnicodeNormalization;
    let chars: Vec<char> = text
        .nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect();
    match chars.as_slice() {
        [] => HashSet::new(),
        [c] => HashSet::from([(*c, *c)]),
        _ => chars.windows(2).map(|w| (w[0], w[1])).collect(),
    }
}

fn dice(a: &HashSet<(char, char)>, b: &HashSet<(char, char)>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    2.0 * shared as f64 / (a.len() + b.len()) as f64
}

/// Bigram Dice coefficient of two texts, 0–1.
pub fn relevance(a: &str, b: &str) -> f64 {
    dice(&bigrams(a), &bigrams(b))
}
