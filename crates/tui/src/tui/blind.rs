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

/// What the agreement tables may count in blind mode: only the turns this reviewer judged
/// herself, and only her own marks — others' marks and the verdicts of turns she has not judged
/// reveal what she must not see. Outside blind mode, everything.
pub fn agreement_inputs<'t>(
    b: &Blind<'t>,
    turns: &'t [TurnView],
) -> (
    std::borrow::Cow<'t, [TurnView]>,
    std::borrow::Cow<'t, [LogEntry]>,
) {
    use std::borrow::Cow;
    if !b.on {
        return (Cow::Borrowed(turns), Cow::Borrowed(b.log));
    }
    let mine = judged_turns(b, turns);
    (
        Cow::Owned(
            turns
                .iter()
                .filter(|t| mine.contains(&t.turn))
                .cloned()
                .collect(),
        ),
        Cow::Owned(
            b.log
                .iter()
                .filter(|e| e.3.as_deref() == b.me)
                .cloned()
                .collect(),
        ),
    )
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
    t.review
        .keep_only_own(own.thumb, own.override_to, own.notes);
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

#[cfg(test)]
mod agreement_tests {
    use super::*;
    use crate::store::ActionKind;
    use crate::tui::view::RunView;
    use serde_json::json;

    fn turns(n: usize) -> Vec<TurnView> {
        let mut v = RunView::default();
        for t in 1..=n {
            v.apply(&crate::duo::Effect::TurnStarted {
                turn: t,
                speaker: if t % 2 == 1 {
                    "yana".into()
                } else {
                    "ayu".into()
                },
            });
        }
        v.turns
    }

    /// Blind: the agreement tables see only her own judged turns and her own marks, whoever
    /// else marked what; not blind: everything. Generated over who marked which turn.
    #[test]
    fn blind_agreement_counts_only_her_own_judged_turns() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..50 {
            let ts = turns(8);
            let mut log: Vec<LogEntry> = Vec::new();
            for t in 1..=8u32 {
                for who in ["hanako", "taro"] {
                    if rng.bool() {
                        log.push((
                            t,
                            ActionKind::Thumb,
                            json!({"up": rng.bool()}),
                            Some(who.into()),
                            String::new(),
                        ));
                    }
                }
            }
            let b = Blind {
                on: true,
                log: &log,
                me: Some("hanako"),
            };
            let (seen, marks) = agreement_inputs(&b, &ts);
            let mine: Vec<usize> = log
                .iter()
                .filter(|e| e.3.as_deref() == Some("hanako"))
                .map(|e| e.0 as usize)
                .collect();
            assert!(seen.iter().all(|t| mine.contains(&t.turn)));
            assert_eq!(seen.len(), mine.len());
            assert!(marks.iter().all(|e| e.3.as_deref() == Some("hanako")));
            let open = Blind { on: false, ..b };
            let (all, every) = agreement_inputs(&open, &ts);
            assert_eq!((all.len(), every.len()), (8, log.len()));
        }
    }

    /// A turn only someone else marked shows no ✓ in blind mode; her own mark does.
    #[test]
    fn a_turn_only_others_marked_shows_no_save_mark() {
        let mut ts = turns(2);
        for t in &mut ts {
            t.review.thumb = Some(true);
            t.review.settle_stored();
        }
        let log: Vec<LogEntry> = vec![
            (
                1,
                ActionKind::Thumb,
                json!({"up": true}),
                Some("taro".into()),
                String::new(),
            ),
            (
                2,
                ActionKind::Thumb,
                json!({"up": true}),
                Some("hanako".into()),
                String::new(),
            ),
        ];
        let b = Blind {
            on: true,
            log: &log,
            me: Some("hanako"),
        };
        use crate::tui::ack::SaveMark;
        assert!(matches!(
            shown_turn(&b, &ts[0]).review.mark(),
            SaveMark::Nothing
        ));
        assert!(matches!(
            shown_turn(&b, &ts[1]).review.mark(),
            SaveMark::Saved
        ));
    }
}
