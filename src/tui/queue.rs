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
    matches!(
        t.status(),
        Some(Status::Retry | Status::Warn | Status::Modify | Status::Unscored)
    ) || t.attempts.iter().any(|a| {
        a.verdict
            .as_ref()
            .is_some_and(|v| v.status == Status::Retry)
    })
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
