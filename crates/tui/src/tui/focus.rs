//! What has the keyboard (issue 23): one `Focus` that names every pane (listed once, in
//! `panes`), overlay and dialog. The workbench finds the topmost focus and gives it the key;
//! the tab strip, `next_pane`/`prev_pane`, the keymap's `[pane.NAME]` sections, the footer and
//! help groups and the dialogs' key bars all derive from these enums.

pub use super::panes::Pane;

/// The dialogs (each carries its own target in [`Modal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialog {
    Topic,
    Inject,
    Override,
    Feedback,
    Promote,
    Draft,
    Secret,
}

impl Dialog {
    pub const ALL: [Dialog; 7] = [
        Dialog::Topic,
        Dialog::Inject,
        Dialog::Override,
        Dialog::Feedback,
        Dialog::Promote,
        Dialog::Draft,
        Dialog::Secret,
    ];

    /// Its name in commands.toml's `[dialogs]`.
    pub fn name(self) -> &'static str {
        match self {
            Dialog::Topic => "topic",
            Dialog::Inject => "inject",
            Dialog::Override => "override",
            Dialog::Feedback => "feedback",
            Dialog::Promote => "promote",
            Dialog::Draft => "draft",
            Dialog::Secret => "secret",
        }
    }
}

/// Everything that can have the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Focus {
    Pane(Pane),
    /// Chat mode's conversation (the detail pane's place while chatting).
    Chat,
    Dialog(Dialog),
    Help,
    /// Errors wait for Esc.
    Errors,
    Runs,
    /// The search box (`/`) while it is typed in.
    Search,
    Compare,
    /// The insights view (`/insights` in chat).
    Insights,
    /// An interview running over the chat.
    Interview,
    /// A destructive key waiting for its confirmation.
    Confirm,
}

impl Focus {
    /// The keymap section whose `[pane.NAME]` bindings apply: a pane's own, or chat's; the
    /// others use the panes' (they take their fixed keys before the keymap is asked).
    pub fn keymap_section(self, pane: Pane) -> &'static str {
        match self {
            Focus::Pane(p) => p.name(),
            Focus::Chat => "chat",
            _ => pane.name(),
        }
    }

    /// Whether an error box (drawn over this) takes Esc before it does: over the compare
    /// view, the chat, an interview and the panes — not over a dialog, the help, the runs
    /// browser, the search box or a confirmation, which are drawn above it.
    pub fn under_errors(self) -> bool {
        matches!(
            self,
            Focus::Pane(_) | Focus::Chat | Focus::Compare | Focus::Insights | Focus::Interview
        )
    }

    /// The `[pane.NAME]` sections a keymap may hold: every pane and chat.
    pub fn keymap_sections() -> Vec<&'static str> {
        let mut v: Vec<&'static str> = Pane::ALL.iter().map(|p| p.name()).collect();
        v.push("chat");
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_and_prev_visit_every_pane_once_and_come_back() {
        for start in Pane::ALL {
            let mut seen = vec![start];
            let mut p = start.next();
            while p != start {
                seen.push(p);
                p = p.next();
            }
            assert_eq!(seen.len(), Pane::ALL.len());
            assert_eq!(start.next().prev(), start);
        }
    }

    #[test]
    fn names_are_distinct_and_round_trip() {
        for p in Pane::ALL {
            assert_eq!(Pane::from_name(p.name()), Some(p));
        }
        let mut names: Vec<&str> = Focus::keymap_sections();
        names.extend(Dialog::ALL.iter().map(|d| d.name()));
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
