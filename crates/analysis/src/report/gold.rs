//! Gold labels in the report: the lead's decisions from adjudication (`queue adjudicate`), read
//! by the same function the dataset export uses, shown on their turns and counted — how many
//! turns have one, and how many agree with the reviewers' majority. A turn two queues decided
//! differently is counted as such and never compared (no label is picked); a turn whose
//! reviewers are split evenly (or who left no label) has no majority to agree with.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::html::{esc, missing};
use super::safe_text;
use crate::annotate::adjudicate::{self, TurnGold};
use crate::store::StoreError;
use crate::store::sql::Db;

/// A lead's gold label on one turn.
pub type Gold = TurnGold;

/// Run `run`'s gold labels per turn: Ok when its queues agree, Err(()) when two disagree.
pub fn of_run(db: Db<'_>, run: i64) -> Result<BTreeMap<u32, Result<Gold, ()>>, StoreError> {
    Ok(adjudicate::of_run(db, run)?
        .into_iter()
        .map(|(turn, golds)| (turn, adjudicate::agreed(golds).ok_or(())))
        .collect())
}

/// The label most of the reviewers gave (strictly more than any other); None when they are
/// split evenly or there is none.
pub fn majority<T: PartialEq + Copy>(labels: impl IntoIterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for l in labels {
        match counts.iter_mut().find(|(k, _)| *k == l) {
            Some(c) => c.1 += 1,
            None => counts.push((l, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    match counts.as_slice() {
        [(only, _)] => Some(*only),
        [(a, n), (_, m), ..] if n > m => Some(*a),
        _ => None,
    }
}

/// What the turn row says of its gold label; `guarded`: the line touched a secret, so the
/// lead's reason (which may quote it) is not shown.
pub fn cell(g: &Result<Gold, ()>, guarded: bool) -> String {
    match g {
        Ok(g) => format!(
            "<span class=\"gold\">gold {} ({}, {}: {})</span>",
            if g.fine { "fine" } else { "not" },
            esc(&g.by),
            esc(&g.queue),
            if guarded {
                "reason not shown: the line touched a secret".to_string()
            } else {
                format!("「{}」", esc(&safe_text(&g.reason, None)))
            }
        ),
        Err(()) => "<span class=\"gold note\">gold labels of two queues disagree</span>".into(),
    }
}

/// The counts over the report's turns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    pub turns: usize,
    pub gold: usize,
    pub agree: usize,
    pub disagree: usize,
    pub no_majority: usize,
    pub conflicting: usize,
}

/// Counts the gold labels over (gold, reviewers' labels) per turn.
pub fn count<'a>(
    turns: impl IntoIterator<Item = (Option<&'a Result<Gold, ()>>, Vec<bool>)>,
) -> Counts {
    let mut c = Counts::default();
    for (g, labels) in turns {
        c.turns += 1;
        match g {
            None => {}
            Some(Err(())) => c.conflicting += 1,
            Some(Ok(g)) => {
                c.gold += 1;
                match majority(labels) {
                    Some(m) if m == g.fine => c.agree += 1,
                    Some(_) => c.disagree += 1,
                    None => c.no_majority += 1,
                }
            }
        }
    }
    c
}

/// The section: the counts, or why there is nothing to count.
pub fn section(c: &Counts) -> String {
    let mut s = String::from("<h2 id=\"gold\">リードの判定（gold）</h2>");
    if c.gold == 0 && c.conflicting == 0 {
        return s + &missing(
            "gold labels",
            "no turn of these runs has a gold label (kakeai queue adjudicate)",
        );
    }
    let _ = write!(
        s,
        "<p class=\"meta\" id=\"gold-counts\">{} of {} turns have a gold label · {} agree with \
         the reviewers' majority · {} disagree · {} without a majority (reviewers split or none)",
        c.gold, c.turns, c.agree, c.disagree, c.no_majority
    );
    if c.conflicting > 0 {
        let _ = write!(
            s,
            " · {} where two queues' gold labels disagree (not counted)",
            c.conflicting
        );
    }
    s.push_str("</p>");
    s
}

#[cfg(test)]
mod tests {
    use super::majority;

    #[test]
    fn a_majority_is_strict() {
        assert_eq!(majority([true, true, false]), Some(true));
        assert_eq!(majority([true, false]), None);
        assert_eq!(majority(Vec::<bool>::new()), None);
        assert_eq!(majority([false]), Some(false));
        assert_eq!(majority(["A", "B", "tie", "B"]), Some("B"));
        assert_eq!(majority(["A", "B", "tie"]), None);
    }
}
