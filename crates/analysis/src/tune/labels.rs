//! The labels in force on a turn: gold (adjudicated) first, then the majority of k reviewers,
//! then a single reviewer's mark. A tie among reviewers is no label (fail closed).

use crate::director::Status;
use crate::store::review::Marks;

/// Where a label comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    Gold,
    /// `agree` of `k` reviewers gave this label.
    Majority {
        k: usize,
        agree: usize,
    },
    Single {
        reviewer: Option<String>,
    },
}

/// usable / unusable, and why we believe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub usable: bool,
    pub provenance: Provenance,
}

/// One reviewer's judgement of one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewerMark {
    pub reviewer: Option<String>,
    pub usable: bool,
}

/// A source of adjudicated labels (a gold table, when the store has one).
pub trait LabelSource {
    fn gold(&self, run: &str, turn: u32) -> Option<bool>;
}

/// No gold table: every label comes from reviewers' marks.
pub struct NoGold;

impl LabelSource for NoGold {
    fn gold(&self, _run: &str, _turn: u32) -> Option<bool> {
        None
    }
}

/// A reviewer's marks as usable/unusable: an override says it by its target verdict (RETRY →
/// unusable; PASS/WARN → usable) and wins over a thumb; 👍 usable, 👎 unusable; notes alone say
/// nothing.
pub fn mark_usable(m: &Marks) -> Option<bool> {
    match m.override_to {
        Some(Status::Retry) => Some(false),
        Some(Status::Pass | Status::Warn) => Some(true),
        Some(_) => None,
        None => m.thumb,
    }
}

/// The label in force: gold, else the strict majority of the reviewers' marks, else none.
pub fn in_force(gold: Option<bool>, marks: &[ReviewerMark]) -> Option<Label> {
    if let Some(usable) = gold {
        return Some(Label {
            usable,
            provenance: Provenance::Gold,
        });
    }
    match marks {
        [] => None,
        [m] => Some(Label {
            usable: m.usable,
            provenance: Provenance::Single {
                reviewer: m.reviewer.clone(),
            },
        }),
        _ => {
            let k = marks.len();
            let yes = marks.iter().filter(|m| m.usable).count();
            let no = k - yes;
            (yes != no).then(|| Label {
                usable: yes > no,
                provenance: Provenance::Majority {
                    k,
                    agree: yes.max(no),
                },
            })
        }
    }
}
