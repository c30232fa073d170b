//! The reviewer's marks on each turn, folded from the action log: the latest 👍/👎, the latest
//! override, the number of feedback notes. An `undo` action takes back the latest mark of its
//! kind on its turn, so the log stays append-only and a reopened run shows what is in force. A
//! `regenerate` action on turn t sets that turn and every later one aside (they become a
//! branch): every mark made on them before it is void, so a 👎 given to the old line never lands
//! on the new one. [`by_reviewer`] is the one reading of a run's log per reviewer that the
//! report and the dataset export share.

use std::collections::BTreeMap;

use super::ActionKind;
use crate::director::Status;

/// What is in force on one turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marks {
    pub thumb: Option<bool>,
    pub override_to: Option<Status>,
    pub notes: usize,
    /// The reviewer of the latest mark in force (None: unnamed or imported).
    pub reviewer: Option<String>,
    /// The verdict the override in force replaced (`from` in its payload; None when not
    /// recorded — blind mode or an older log).
    pub override_from: Option<Status>,
    /// The override's reason, as written.
    pub override_reason: Option<String>,
}

impl Marks {
    /// The turn carries a mark (👍/👎, an override or a note).
    pub fn reviewed(&self) -> bool {
        self.thumb.is_some() || self.override_to.is_some() || self.notes > 0
    }

    /// The label in force: the override when there is one (fine = overridden to PASS), else
    /// the 👍/👎; None when neither is in force.
    pub fn fine(&self) -> Option<bool> {
        match (self.override_to, self.thumb) {
            (Some(s), _) => Some(s == Status::Pass),
            (None, t) => t,
        }
    }
}

/// One action as the fold needs it.
#[derive(Debug, Clone)]
pub struct Mark<'a> {
    pub turn: u32,
    pub kind: ActionKind,
    pub payload: &'a serde_json::Value,
    pub reviewer: Option<&'a str>,
}

/// The kind an undo payload names (`{"undo": "thumb"}`); None when it names no review kind.
pub fn undone_kind(payload: &serde_json::Value) -> Option<ActionKind> {
    let k = ActionKind::parse(payload.get("undo")?.as_str()?)?;
    matches!(
        k,
        ActionKind::Thumb | ActionKind::Override | ActionKind::Feedback
    )
    .then_some(k)
}

/// Folds actions (in creation order) into the marks in force per turn. A regenerate voids the
/// marks on its turn and every later one; other actions that are not review marks (pause,
/// inject …) are ignored; an undo with nothing to take back is ignored.
pub fn fold<'a>(actions: impl IntoIterator<Item = Mark<'a>>) -> BTreeMap<u32, Marks> {
    let mut live: BTreeMap<u32, Vec<Mark<'a>>> = BTreeMap::new();
    for a in actions {
        match a.kind {
            ActionKind::Thumb | ActionKind::Override | ActionKind::Feedback | ActionKind::Note => {
                live.entry(a.turn).or_default().push(a)
            }
            ActionKind::Undo => {
                let (Some(kind), Some(list)) = (undone_kind(a.payload), live.get_mut(&a.turn))
                else {
                    continue;
                };
                if let Some(i) = list.iter().rposition(|m| m.kind == kind) {
                    list.remove(i);
                }
            }
            ActionKind::Regenerate => live.retain(|turn, _| *turn < a.turn),
            _ => {}
        }
    }
    live.into_iter()
        .map(|(turn, list)| {
            let mut m = Marks::default();
            for a in list {
                match a.kind {
                    ActionKind::Thumb => {
                        m.thumb = a.payload.get("up").and_then(|v| v.as_bool());
                    }
                    ActionKind::Override => {
                        let status = |k: &str| {
                            a.payload
                                .get(k)
                                .and_then(|v| v.as_str())
                                .and_then(Status::parse)
                        };
                        m.override_to = status("to");
                        m.override_from = status("from");
                        m.override_reason = a
                            .payload
                            .get("reason")
                            .and_then(|v| v.as_str())
                            .map(str::to_string);
                    }
                    _ => m.notes += 1,
                }
                m.reviewer = a.reviewer.map(str::to_string);
            }
            (turn, m)
        })
        .filter(|(_, m)| m.reviewed())
        .collect()
}

/// Each named reviewer's marks in force, per turn then reviewer, from a run's action log (in
/// creation order). Regenerates count whoever made them: they void every reviewer's earlier
/// marks on the turns they set aside. Unnamed marks cannot be told apart from one another and
/// are not read. Pass a prefix of the log to read what was in force at that point.
pub fn by_reviewer<'a>(
    actions: impl IntoIterator<Item = &'a super::ActionRow>,
) -> BTreeMap<u32, BTreeMap<String, Marks>> {
    let log: Vec<&super::ActionRow> = actions.into_iter().collect();
    let names: std::collections::BTreeSet<&str> =
        log.iter().filter_map(|a| a.reviewer.as_deref()).collect();
    let mut out: BTreeMap<u32, BTreeMap<String, Marks>> = BTreeMap::new();
    for who in names {
        let mine = log.iter().filter_map(|a| {
            let turn = a.turn?;
            (a.reviewer.as_deref() == Some(who) || a.kind == ActionKind::Regenerate).then_some(
                Mark {
                    turn,
                    kind: a.kind,
                    payload: &a.payload,
                    reviewer: a.reviewer.as_deref(),
                },
            )
        });
        for (turn, m) in fold(mine) {
            out.entry(turn).or_default().insert(who.to_string(), m);
        }
    }
    out
}

/// The latest mark still in force (turn and kind): what an undo would take back.
pub fn last_live<'a>(
    log: impl IntoIterator<Item = (u32, ActionKind, &'a serde_json::Value)>,
) -> Option<(u32, ActionKind)> {
    let log: Vec<_> = log.into_iter().collect();
    let mut live: Vec<usize> = Vec::new();
    for (i, &(turn, kind, payload)) in log.iter().enumerate() {
        match kind {
            ActionKind::Thumb | ActionKind::Override | ActionKind::Feedback => live.push(i),
            ActionKind::Undo => {
                if let Some(k) = undone_kind(payload)
                    && let Some(p) = live
                        .iter()
                        .rposition(|&j| log[j].0 == turn && log[j].1 == k)
                {
                    live.remove(p);
                }
            }
            _ => {}
        }
    }
    live.last().map(|&i| (log[i].0, log[i].1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(log: &[(u32, ActionKind, serde_json::Value)]) -> BTreeMap<u32, Marks> {
        fold(log.iter().map(|(t, k, p)| Mark {
            turn: *t,
            kind: *k,
            payload: p,
            reviewer: Some("mika"),
        }))
    }

    #[test]
    fn undo_takes_back_only_the_latest_mark_of_its_kind() {
        use ActionKind::*;
        let up = json!({"up": true});
        let down = json!({"up": false});
        let undo = json!({"undo": "thumb"});
        // Every prefix of thumbs followed by every number of undos.
        for n in 0..5usize {
            for u in 0..=n + 1 {
                let mut log = Vec::new();
                for i in 0..n {
                    log.push((3, Thumb, if i % 2 == 0 { up.clone() } else { down.clone() }));
                }
                log.push((3, Feedback, json!({"issue_type": "other"})));
                for _ in 0..u {
                    log.push((3, Undo, undo.clone()));
                }
                let m = &run(&log)[&3];
                let left = n.saturating_sub(u);
                let want = (left > 0).then(|| (left - 1) % 2 == 0);
                assert_eq!(m.thumb, want, "n={n} u={u}");
                assert_eq!(m.notes, 1, "the feedback is not touched by a thumb undo");
            }
        }
    }

    #[test]
    fn last_live_follows_the_undos_across_turns() {
        use ActionKind::*;
        let mut log = vec![
            (1, Thumb, json!({"up": true})),
            (2, Override, json!({"to": "PASS"})),
            (3, Feedback, json!({})),
        ];
        let mut seen = Vec::new();
        while let Some((t, k)) = last_live(log.iter().map(|(t, k, p)| (*t, *k, p))) {
            seen.push(t);
            log.push((t, Undo, json!({"undo": k.as_str()})));
            // What the fold shows agrees: the undone turn has no mark left.
            assert!(!run(&log).contains_key(&t));
        }
        assert_eq!(seen, vec![3, 2, 1]);
    }

    #[test]
    fn override_undo_and_other_turns() {
        use ActionKind::*;
        let log = vec![
            (2, Override, json!({"to": "RETRY"})),
            (2, Override, json!({"to": "PASS"})),
            (4, Thumb, json!({"up": true})),
            (2, Undo, json!({"undo": "override"})),
            (4, Undo, json!({"undo": "override"})),
            (4, Pause, json!({})),
        ];
        let f = run(&log);
        assert_eq!(f[&2].override_to, Some(Status::Retry));
        assert_eq!(f[&4].thumb, Some(true));
        assert_eq!(f[&4].reviewer.as_deref(), Some("mika"));
        // A turn whose only mark was undone is not reviewed any more.
        let f = run(&[
            (5, Thumb, json!({"up": true})),
            (5, Undo, json!({"undo": "thumb"})),
        ]);
        assert!(!f.contains_key(&5));
        // An undo naming no review kind takes nothing back.
        let f = run(&[
            (5, Thumb, json!({"up": true})),
            (5, Undo, json!({"undo": "pause"})),
        ]);
        assert_eq!(f[&5].thumb, Some(true));
    }

    /// A regenerate at turn r voids every mark made before it on turns ≥ r, never one on an
    /// earlier turn nor one made after it; generated over where it falls.
    #[test]
    fn a_regenerate_voids_earlier_marks_on_its_turn_and_later() {
        use ActionKind::*;
        for r in 1..=4u32 {
            for after in [false, true] {
                let mut log: Vec<(u32, ActionKind, serde_json::Value)> =
                    (1..=4).map(|t| (t, Thumb, json!({"up": false}))).collect();
                log.push((
                    2,
                    Override,
                    json!({"from": "WARN", "to": "PASS", "reason": "ok"}),
                ));
                log.push((r, Regenerate, json!({})));
                if after {
                    log.push((r, Thumb, json!({"up": true})));
                }
                let f = run(&log);
                for t in 1..=4u32 {
                    let want = if t < r {
                        Some(false)
                    } else if after && t == r {
                        Some(true)
                    } else {
                        None
                    };
                    assert_eq!(f.get(&t).and_then(|m| m.thumb), want, "r={r} t={t}");
                }
                let over = f.get(&2).and_then(|m| m.override_to);
                assert_eq!(over, (r > 2).then_some(Status::Pass), "r={r}");
                if r > 2 {
                    assert_eq!(f[&2].override_from, Some(Status::Warn));
                    assert_eq!(f[&2].override_reason.as_deref(), Some("ok"));
                    assert_eq!(f[&2].fine(), Some(true));
                }
            }
        }
    }
}
