//! A pane's own verbs (issue 23): each room names what it can do in an enum of its own
//! (`RulesVerb::{NextField, Raise, Save…}`), read from its `[pane.NAME]` keymap section by name.
//! A key bound there reaches that room as its verb; every other key stays a global [`Action`],
//! which a room may still take (moving a selection with the conversation's j/k, 👍 on a
//! conversation's reply).

use super::keymap::Action;

/// The verbs of one pane: every verb with its keymap name and what the help screen says of it.
pub trait Verbs: Copy + PartialEq + Sized + 'static {
    /// (name in `[pane.NAME]`, verb, description), in the help screen's order.
    const ALL: &'static [(&'static str, Self, &'static str)];

    /// The verb a keymap value names.
    fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|(_, v, _)| *v)
    }
}

/// (name, description) of every verb of `V`, for the keymap check, the footer and the help.
pub fn listing<V: Verbs>() -> Vec<(&'static str, &'static str)> {
    V::ALL.iter().map(|(n, _, d)| (*n, *d)).collect()
}

/// What reaches a room: one of its own verbs, or a global action it may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Input<V> {
    Verb(V),
    Global(Action),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::focus::Pane;

    /// Every pane's verbs have distinct names that parse back to themselves, and no verb name
    /// is also a global action's (a `[pane.NAME]` value is read as the pane's verb first).
    #[test]
    fn verb_names_are_unique_and_round_trip() {
        for pane in Pane::ALL {
            let names = pane.verbs();
            let mut sorted: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{}", pane.name());
            for (n, d) in names {
                assert!(!d.is_empty(), "{n} has no description");
                assert!(
                    Action::parse(n).is_none(),
                    "{n} of [pane.{}] is also a global action",
                    pane.name()
                );
            }
        }
        assert_eq!(
            crate::tui::tuning::RulesVerb::parse("raise"),
            Some(crate::tui::tuning::RulesVerb::Raise)
        );
    }
}
