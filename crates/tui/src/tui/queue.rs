//! The review queue's data and pure steps: the review log's entries, a run read back, the
//! search state, and which turn is next (unreviewed, flagged, matching). The workbench's
//! navigation verbs over them are in `app::review`.

use super::runs::PAGE;
use super::view::{RunView, TurnView};
use crate::director::Status;
use crate::store::ActionKind;
use crate::store::browse::TextHit;

/// One review action of the open run (turn, kind, payload, reviewer), as the undo log and the
/// agreement figures read it.
/// One review action: turn, kind, payload, reviewer, when (ISO 8601, UTC).
pub type LogEntry = (u32, ActionKind, serde_json::Value, Option<String>, String);

/// A stored run read back: its view, its review log, and the turn to select.
#[derive(Debug, Clone)]
pub struct Opened {
    pub view: RunView,
    pub log: Vec<LogEntry>,
    pub turn: Option<usize>,
    pub branches: Vec<super::branch::Branch>,
}

#[derive(Debug, Clone, Default)]
pub struct Search {
    /// Some while the reviewer types the search.
    pub input: Option<String>,
    /// Tab in the search bar: every stored run, not only this one.
    pub all: bool,
    pub needle: String,
    /// Matches in all runs (from the store), when the last search was over all runs.
    pub hits: Vec<TextHit>,
    pub hit: usize,
    /// The attempt to show once the run a hit is in has opened: (run, turn, attempt number).
    pub open_attempt: Option<(i64, usize, u32)>,
}

/// The index into `t.attempts` of the attempt numbered `n`.
pub fn attempt_index(t: &TurnView, n: u32) -> Option<usize> {
    t.attempts.iter().position(|a| a.attempt == n as usize)
}

/// The turn matches the search (any attempt's text; case-insensitive).
pub fn matches(t: &TurnView, needle: &str) -> bool {
    let n = needle.to_lowercase();
    !n.is_empty()
        && t.attempts
            .iter()
            .any(|a| a.text.to_lowercase().contains(&n))
}

/// The turn has no 👍/👎, override or note.
pub fn unreviewed(t: &TurnView) -> bool {
    t.review.thumb.is_none() && t.review.override_to.is_none() && t.review.notes == 0
}

/// The turn needs a look: RETRY/WARN/MODIFY/UNSCORED, or one of its attempts was RETRY.
pub fn flagged(t: &TurnView) -> bool {
    flag_reason(t).is_some()
}

/// Why the turn needs a look, in the words the status line uses ("RETRY", "attempt #1 RETRY
/// before PASS", "attempt #2 RETRY, overridden to PASS"); None: it does not.
pub fn flag_reason(t: &TurnView) -> Option<String> {
    let status = t.status();
    let by_hand = t.review.override_to.is_some();
    if let Some(s @ (Status::Retry | Status::Warn | Status::Modify | Status::Unscored)) = status {
        return Some(if by_hand {
            format!("overridden to {}", s.as_str())
        } else {
            s.as_str().to_string()
        });
    }
    let retried: Vec<String> = t
        .attempts
        .iter()
        .filter(|a| {
            a.verdict
                .as_ref()
                .is_some_and(|v| v.status == Status::Retry)
        })
        .map(|a| format!("#{}", a.attempt))
        .collect();
    if retried.is_empty() {
        return None;
    }
    let after = match status {
        Some(s) if by_hand => format!(", overridden to {}", s.as_str()),
        Some(s) => format!(" before {}", s.as_str()),
        None => ", no verdict yet".into(),
    };
    let noun = if retried.len() == 1 {
        "attempt"
    } else {
        "attempts"
    };
    Some(format!("{noun} {} RETRY{after}", retried.join(", ")))
}

/// The attempt a search for `needle` opens in `t` (an index into its attempts): the committed
/// one when its text matches, else the first other attempt that does; None: none matches.
pub fn match_attempt(t: &TurnView, needle: &str) -> Option<usize> {
    let n = needle.to_lowercase();
    let hit = |i: usize| {
        t.attempts
            .get(i)
            .is_some_and(|a| !n.is_empty() && a.text.to_lowercase().contains(&n))
    };
    t.committed
        .filter(|&c| hit(c))
        .or_else(|| (0..t.attempts.len()).find(|&i| hit(i)))
}

/// The next index after `from` (wrapping, `from` itself last) whose turn satisfies `pred`;
/// backwards when `back`.
pub fn next_index(
    turns: &[TurnView],
    from: usize,
    back: bool,
    pred: impl Fn(&TurnView) -> bool,
) -> Option<usize> {
    let n = turns.len();
    (1..=n)
        .map(|k| {
            if back {
                (from + n * 2 - k) % n
            } else {
                (from + k) % n
            }
        })
        .find(|&i| pred(&turns[i]))
}

/// Rows the runs browser reads at a time (re-exported for the runtime).
pub const BROWSE_PAGE: usize = PAGE;
