//! The read-only context a pane draws from (issue 23): the open run, what is selected in it,
//! the ruleset, blind mode, and the right pane's scroll. The workbench builds one per frame
//! (`App::ctx`); panes never see the `App` itself.

use std::cell::Cell;

use super::blind::Blind;
use super::view::{RunView, TurnView};
use crate::director::RuleSet;

/// What every pane may read.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub run: &'a RunView,
    /// The selected turn's index in `run.turns`.
    pub selected: usize,
    /// The attempt picked in the timeline (None: the committed or the last one).
    pub attempt: Option<usize>,
    pub rules: &'a RuleSet,
    pub blind: Blind<'a>,
    /// The right pane's scroll position; the drawing records the largest useful value in
    /// `right_max` so the keys stop there.
    pub right_scroll: u16,
    pub right_max: &'a Cell<u16>,
    /// Chat mode's conversation, while it is on (the detail pane shows its exchange).
    pub chat: Option<&'a super::chat::ChatView>,
}

impl Ctx<'_> {
    /// The selected turn.
    pub fn turn(&self) -> Option<&TurnView> {
        self.run.turns.get(self.selected)
    }

    /// The scroll for `rows` lines in a pane `height` rows high, recording the largest.
    pub fn scroll_for(&self, rows: usize, height: u16) -> u16 {
        let max = rows.saturating_sub(height as usize).min(u16::MAX as usize) as u16;
        self.right_max.set(max);
        self.right_scroll.min(max)
    }
}
