//! Shared review queues (issue 24 §2; anchors: Langfuse/LangSmith annotation queues, Opik's
//! annotators per item and lock timeout, Prodigy's overlap). A queue is a named filter over
//! committed turns ("RETRY or UNSCORED in runs since Monday, あゆ only") with `k` reviewers per
//! item and a lease: [`db::claim`] gives a reviewer the next item she has not judged and that is
//! not already held by enough others; an item is done when `k` reviewers judged it (a 👍/👎 or an
//! override in force, read from the action log, so marks made anywhere count). With `overlap`,
//! every reviewer judges every item (progress is per reviewer).
//!
//! Pure parts here (the spec, its validation, the choice of the next item); SQL in [`db`].

pub mod adjudicate;
pub mod alpha;
pub mod db;
pub mod pairwise;
pub mod team;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::director::Status;

/// Which committed turns a queue holds. Empty lists mean "any".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Filter {
    /// The Director's verdict on the committed turn.
    #[serde(default)]
    pub statuses: Vec<Status>,
    /// `yana` or `ayu`.
    #[serde(default)]
    pub sister: Option<String>,
    /// Runs started at or after (ISO 8601, UTC).
    #[serde(default)]
    pub since: Option<String>,
    /// Runs started before (ISO 8601, UTC).
    #[serde(default)]
    pub until: Option<String>,
    /// Only these runs.
    #[serde(default)]
    pub runs: Vec<i64>,
}

/// A queue as created.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSpec {
    pub name: String,
    pub filter: Filter,
    /// Reviewers per item.
    pub k: u32,
    /// How long a claim holds an item for its reviewer.
    pub lease_ms: i64,
    /// Every reviewer judges every item (k only decides when the item counts as done).
    pub overlap: bool,
    /// A pairwise queue over this paired comparison's turns (A better / B better / tie).
    pub comparison: Option<i64>,
}

impl Filter {
    /// The filter in a few words ("RETRY|UNSCORED · ayu · since 2026-11-23").
    pub fn describe(&self) -> String {
        let f = self;
        let mut parts = Vec::new();
        if !f.statuses.is_empty() {
            let s: Vec<&str> = f.statuses.iter().map(|s| s.as_str()).collect();
            parts.push(s.join("|"));
        }
        if let Some(s) = &f.sister {
            parts.push(s.clone());
        }
        if let Some(s) = &f.since {
            parts.push(format!("since {}", &s[..s.len().min(10)]));
        }
        if let Some(s) = &f.until {
            parts.push(format!("until {}", &s[..s.len().min(10)]));
        }
        if !f.runs.is_empty() {
            let ids: Vec<String> = f.runs.iter().map(i64::to_string).collect();
            parts.push(format!("runs {}", ids.join(",")));
        }
        if parts.is_empty() {
            "every committed turn".into()
        } else {
            parts.join(" · ")
        }
    }
}

/// A queue read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    pub id: i64,
    pub spec: QueueSpec,
    pub created_at: String,
    pub created_by: Option<String>,
}

/// Why a queue cannot be created or used.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("{0}")]
    Invalid(String),
    #[error("no queue named `{0}` (see `kakeai queue list`)")]
    NoSuchQueue(String),
    #[error("a queue named `{0}` already exists")]
    Exists(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl From<rusqlite::Error> for QueueError {
    fn from(e: rusqlite::Error) -> Self {
        QueueError::Store(e.into())
    }
}

impl From<crate::store::sql::DbError> for QueueError {
    fn from(e: crate::store::sql::DbError) -> Self {
        QueueError::Store(e.into())
    }
}

impl crate::store::write::BusyCheck for QueueError {
    fn is_busy(&self) -> bool {
        match self {
            QueueError::Store(e) => crate::store::write::BusyCheck::is_busy(e),
            _ => false,
        }
    }
}

/// The longest reviewer name accepted, in characters.
pub const REVIEWER_MAX_CHARS: usize = 64;

/// A reviewer name as typed (`--reviewer`, `KAKEAI_REVIEWER`), checked before anything is
/// stored under it: trimmed, not empty, at most [`REVIEWER_MAX_CHARS`] characters, and
/// printable — no control character (escape sequences, newlines that would forge lines in
/// another reviewer's output) and no bidirectional override. The one error names what is wrong.
pub fn reviewer_name(name: &str) -> Result<String, QueueError> {
    let n = name.trim();
    if n.is_empty() {
        return Err(QueueError::Invalid(
            "a queue needs your name: --reviewer NAME (or KAKEAI_REVIEWER)".into(),
        ));
    }
    let chars = n.chars().count();
    if chars > REVIEWER_MAX_CHARS {
        return Err(QueueError::Invalid(format!(
            "--reviewer: a name of {chars} characters; at most {REVIEWER_MAX_CHARS}"
        )));
    }
    if let Some((i, c)) = n.chars().enumerate().find(|(_, c)| {
        c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }) {
        return Err(QueueError::Invalid(format!(
            "--reviewer: character {} is U+{:04X}, which cannot be printed; a name is printable \
             text",
            i + 1,
            c as u32
        )));
    }
    Ok(n.to_string())
}

/// The shortest and longest lease accepted.
pub const LEASE_MIN_MS: i64 = 10_000;
pub const LEASE_MAX_MS: i64 = 24 * 3_600_000;

impl QueueSpec {
    /// Checks what a user typed; every problem is named.
    pub fn validate(&self) -> Result<(), QueueError> {
        let bad = |m: String| Err(QueueError::Invalid(m));
        let n = self.name.chars().count();
        if n == 0
            || n > 64
            || self
                .name
                .chars()
                .any(|c| c.is_control() || c.is_whitespace())
        {
            return bad(format!(
                "queue name `{}`: 1–64 characters, no spaces or control characters",
                crate::text::sanitize::for_terminal(&self.name)
            ));
        }
        if !(1..=50).contains(&self.k) {
            return bad(format!("--k {}: reviewers per item must be 1–50", self.k));
        }
        if !(LEASE_MIN_MS..=LEASE_MAX_MS).contains(&self.lease_ms) {
            return bad(format!(
                "--lease {} s: a lease must be between 10 s and 24 h",
                self.lease_ms / 1000
            ));
        }
        if let Some(s) = &self.filter.sister
            && s != "yana"
            && s != "ayu"
        {
            return bad(format!("--sister {s}: yana or ayu (やな, あゆ)"));
        }
        if self.comparison.is_some()
            && (!self.filter.statuses.is_empty()
                || self.filter.since.is_some()
                || self.filter.until.is_some()
                || !self.filter.runs.is_empty())
        {
            return bad(
                "a pairwise queue holds every turn of its comparison: only --sister narrows it"
                    .into(),
            );
        }
        if let (Some(a), Some(b)) = (&self.filter.since, &self.filter.until)
            && a >= b
        {
            return bad(format!("--since {a} is not before --until {b}"));
        }
        Ok(())
    }
}

/// `2026-11-23` or an ISO 8601 time → the store's ISO text (UTC), or a named error.
/// A `--since`/`--until` value as an ISO time: a date alone is its midnight (UTC) for
/// `--since` and the next midnight for `--until`, so `--until D` includes day D.
pub fn parse_when(flag: &str, s: &str) -> Result<String, QueueError> {
    let full = if s.len() == 10 {
        format!("{s}T00:00:00.000Z")
    } else {
        s.to_string()
    };
    // `--until 2026-11-23` means through that day: the bound (exclusive) is the next midnight.
    let day = if flag == "--until" && s.len() == 10 {
        86_400_000
    } else {
        0
    };
    match crate::store::time::parse_iso_ms(&full) {
        Some(ms) => Ok(crate::store::time::iso_utc(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis((ms + day).max(0) as u64),
        )),
        None => Err(QueueError::Invalid(format!(
            "{flag} {s}: expected a date (2026-11-23) or a time (2026-11-23T09:00:00Z)"
        ))),
    }
}

/// `90s`, `10m`, `2h` (or plain seconds) → milliseconds.
pub fn parse_lease(s: &str) -> Result<i64, QueueError> {
    let (num, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, "s"),
    };
    let n: i64 = num
        .parse()
        .map_err(|_| QueueError::Invalid(format!("--lease {s}: expected e.g. 90s, 10m, 2h")))?;
    let per = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => {
            return Err(QueueError::Invalid(format!(
                "--lease {s}: units are s, m, h"
            )));
        }
    };
    Ok(n.saturating_mul(per))
}

/// One item's state at the moment of a claim.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemState {
    /// Reviewers whose 👍/👎 or override is in force on the turn.
    pub judged_by: BTreeSet<String>,
    /// Live leases: reviewer → until (ms).
    pub held_by: BTreeMap<String, i64>,
}

/// What a reviewer may do with one item now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// She already judged it.
    Judged,
    /// She holds a live lease on it (a claim resumes it).
    Mine,
    /// k reviewers judged it.
    Done,
    /// Others judging it now fill the k places.
    Held,
    Open,
}

/// The rule of the queue for one item and one reviewer.
pub fn availability(spec: &QueueSpec, item: &ItemState, me: &str, now_ms: i64) -> Availability {
    if item.judged_by.contains(me) {
        return Availability::Judged;
    }
    if item.held_by.get(me).is_some_and(|&until| until > now_ms) {
        return Availability::Mine;
    }
    if spec.overlap {
        return Availability::Open;
    }
    let judged = item.judged_by.len();
    if judged >= spec.k as usize {
        return Availability::Done;
    }
    let holding = item
        .held_by
        .iter()
        .filter(|(who, until)| **until > now_ms && !item.judged_by.contains(*who))
        .count();
    if judged + holding >= spec.k as usize {
        Availability::Held
    } else {
        Availability::Open
    }
}

/// The item to hand `me`: a live lease of hers first (she comes back to it), else the first open
/// item in queue order; None when nothing is left for her.
pub fn pick<K: Clone>(
    spec: &QueueSpec,
    items: &[(K, ItemState)],
    me: &str,
    now_ms: i64,
) -> Option<K> {
    let mut open = None;
    for (key, state) in items {
        match availability(spec, state, me, now_ms) {
            Availability::Mine => return Some(key.clone()),
            Availability::Open if open.is_none() => open = Some(key.clone()),
            _ => {}
        }
    }
    open
}

#[cfg(test)]
mod tests;
