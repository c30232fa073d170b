//! Regenerate as a branch, on screen: the turns a regeneration rewinds are kept as a branch
//! (the store keeps them too, `store::branch`); `B` swaps the next branch onto the screen and
//! back, and the conversation's title says which line is shown.

use super::view::TurnView;
use crate::duo::Effect;

/// A line set aside: the turns from `from_turn` on as they were.
#[derive(Debug, Clone)]
pub struct Branch {
    pub from_turn: usize,
    pub turns: Vec<TurnView>,
}

/// The branches of the open run and which one is on screen: a room over the conversation's
/// turns (it swaps a branch's turns in and out of them).
#[derive(Debug, Clone, Default)]
pub struct Branches {
    list: Vec<Branch>,
    /// The branch on screen; None is the main line.
    on: Option<usize>,
}

impl Branches {
    /// The branches a reopened run had; the main line on screen.
    pub fn from(list: Vec<Branch>) -> Branches {
        Branches { list, on: None }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The branches set aside, oldest first.
    pub fn list(&self) -> &[Branch] {
        &self.list
    }

    /// Before a truncation is applied to `turns`: keep what it drops as a branch.
    pub fn keep(&mut self, turns: &mut Vec<TurnView>, e: &Effect) {
        let Effect::Truncated { from_turn } = e else {
            return;
        };
        // The live line is the one that continues: put it back on screen first.
        self.restore_main(turns);
        let at = turns.partition_point(|t| t.turn < *from_turn);
        // The turn being regenerated stays on screen (its earlier attempts are kept there).
        let keep = turns
            .get(at)
            .is_some_and(|t| t.turn == *from_turn && t.committed.is_none());
        let tail: Vec<TurnView> = turns[at + usize::from(keep)..].to_vec();
        if !tail.is_empty() {
            self.list.push(Branch {
                from_turn: *from_turn,
                turns: tail,
            });
        }
    }

    fn swap(&mut self, turns: &mut Vec<TurnView>, k: usize) {
        let Some(b) = self.list.get_mut(k) else {
            return;
        };
        let at = turns.partition_point(|t| t.turn < b.from_turn);
        let tail = turns.split_off(at);
        turns.append(&mut b.turns);
        b.turns = tail;
    }

    fn restore_main(&mut self, turns: &mut Vec<TurnView>) {
        if let Some(k) = self.on.take() {
            self.swap(turns, k);
        }
    }

    /// `B`: the next branch onto `turns` (after the last, the main line again).
    pub fn next(&mut self, turns: &mut Vec<TurnView>) {
        let next = match self.on {
            None => Some(0),
            Some(k) if k + 1 < self.list.len() => Some(k + 1),
            Some(_) => None,
        };
        self.restore_main(turns);
        if let Some(k) = next {
            self.swap(turns, k);
            self.on = Some(k);
        }
    }

    /// "main line" or "branch 2/3 (from turn 5)".
    pub fn label(&self) -> String {
        match self.on {
            None => "main line".into(),
            Some(k) => format!(
                "branch {}/{} (from turn {})",
                k + 1,
                self.list.len(),
                self.list[k].from_turn
            ),
        }
    }
}
