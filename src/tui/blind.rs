//! Blind mode (`--blind`, `KAKEAI_BLIND=1`): the Director's verdict on a turn stays hidden —
//! badge, counts, findings, judge scores, guidance, the stats strip cell — until the reviewer
//! has given her own judgement on that turn (👍/👎 or an override). Blind is per reviewer: only
//! marks by this session's reviewer (`--reviewer`) reveal a turn, and other reviewers' marks stay
//! hidden too (κ between reviewers depends on it). Pure functions over the view and the review
//! log; the drawing code asks them what it may show.

use std::collections::BTreeSet;

use super::queue::LogEntry;
use super::view::TurnView;
use crate::store::review::{Mark, Marks, fold};

/// The badge a hidden turn shows instead of its verdict.
pub const HIDDEN_BADGE: &str = "[blind]";
/// The word the attempts timeline shows for a judged attempt whose verdict is hidden.
pub const HIDDEN_WORD: &str = "judged (hidden)";

/// This session's reviewer's own marks in force on `turn` (others' marks left out; an unnamed
/// session owns the unnamed marks).
pub fn own_marks(log: &[LogEntry], turn: usize, me: Option<&str>) -> Marks {
    fold(
        log.iter()
            .filter(|e| e.0 as usize == turn && e.3.as_deref() == me)
            .map(|(t, k, p, _, _)| Mark {
                turn: *t,
                kind: *k,
                payload: p,
                reviewer: None,
            }),
    )
    .remove(&(turn as u32))
    .unwrap_or_default()
}

/// What blind mode needs to know, read-only: whether it is on, the review log, and who this
/// session's reviewer is.
#[derive(Debug, Clone, Copy)]
pub struct Blind<'a> {
    pub on: bool,
    pub log: &'a [LogEntry],
    pub me: Option<&'a str>,
}

/// The reviewer has judged this turn herself (her own 👍/👎 or override is in force).
pub fn judged(b: &Blind<'_>, turn: &TurnView) -> bool {
    let m = own_marks(b.log, turn.turn, b.me);
    m.thumb.is_some() || m.override_to.is_some()
}

/// The turns of `turns` this session's reviewer has judged herself.
pub fn judged_turns(b: &Blind<'_>, turns: &[TurnView]) -> BTreeSet<usize> {
    turns
        .iter()
        .filter(|t| judged(b, t))
        .map(|t| t.turn)
        .collect()
}

/// The Director's verdict on `turn` is hidden from the screen.
pub fn hides(b: &Blind<'_>, turn: &TurnView) -> bool {
    b.on && !judged(b, turn)
}

/// A copy of the turn with everything the Director said about it removed (verdicts, judge
/// scores, the guidance a retry carried); the text and the attempts stay.
pub fn masked(turn: &TurnView) -> TurnView {
    let mut t = turn.clone();
    for a in &mut t.attempts {
        a.verdict = None;
        a.judge = None;
        a.guidance.clear();
    }
    t
}

/// The turn as the screen may show it: itself; in blind mode a copy carrying only this
/// reviewer's marks, masked while she has not judged it.
pub fn shown_turn<'a>(b: &Blind<'_>, turn: &'a TurnView) -> std::borrow::Cow<'a, TurnView> {
    if !b.on {
        return std::borrow::Cow::Borrowed(turn);
    }
    let mut t = if hides(b, turn) {
        masked(turn)
    } else {
        turn.clone()
    };
    let own = own_marks(b.log, turn.turn, b.me);
    t.review.thumb = own.thumb;
    t.review.override_to = own.override_to;
    t.review.notes = own.notes;
    t.review.only_own();
    std::borrow::Cow::Owned(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ActionKind;
    use serde_json::json;

    fn e(turn: u32, kind: ActionKind, p: serde_json::Value, who: Option<&str>) -> LogEntry {
        (turn, kind, p, who.map(str::to_string), String::new())
    }

    #[test]
    fn a_turn_only_others_judged_shows_no_save_mark() {
        use crate::tui::ack::{Review, SaveMark};
        // Read back from the store with someone else's 👍: ✓ for everyone else's view…
        let mut r = Review::default();
        r.thumb = Some(true);
        r.settle_stored();
        assert!(matches!(r.mark(), SaveMark::Saved));
        // …but in blind mode, with none of hers, nothing.
        let mut blind = r.clone();
        blind.thumb = None;
        blind.only_own();
        assert!(matches!(blind.mark(), SaveMark::Nothing));
        // Her own mark keeps its ✓.
        let mut mine = r.clone();
        mine.thumb = Some(false);
        mine.only_own();
        assert!(matches!(mine.mark(), SaveMark::Saved));
    }

    #[test]
    fn only_my_own_marks_count_as_mine() {
        let up = json!({"up": true});
        let over = json!({"to": "WARN"});
        let log = vec![
            e(1, ActionKind::Thumb, up.clone(), Some("hanako")),
            e(2, ActionKind::Override, over, Some("taro")),
            e(3, ActionKind::Thumb, up.clone(), None),
            e(4, ActionKind::Thumb, up, Some("taro")),
            e(4, ActionKind::Undo, json!({"undo": "thumb"}), Some("taro")),
        ];
        let judged = |t, me| {
            let m = own_marks(&log, t, me);
            m.thumb.is_some() || m.override_to.is_some()
        };
        assert!(!judged(1, Some("taro")));
        assert!(judged(1, Some("hanako")));
        assert!(judged(2, Some("taro")));
        assert!(!judged(3, Some("taro")));
        assert!(judged(3, None));
        assert!(!judged(4, Some("taro")));
    }
}
