//! Multi-line dialogs. Enter submits, so a newline needs a key of its own that every terminal
//! delivers: ctrl-j (a line feed, in every terminal) and alt-enter (where the terminal reports
//! it). ratatui-textarea's own ctrl-j deletes to the line's start — the reason the feedback's fix
//! line could not be entered — so the dialogs take those keys first. Single-line dialogs (topic,
//! promote) ignore them.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::Modal;

/// ctrl-j, or alt-enter.
pub fn is_newline(key: &KeyEvent) -> bool {
    match key.code {
        KeyCode::Char('j') => key.modifiers.contains(KeyModifiers::CONTROL),
        KeyCode::Enter => key.modifiers.contains(KeyModifiers::ALT),
        _ => false,
    }
}

/// Starts a new line in a dialog that takes several.
pub fn newline(m: &mut Modal) {
    match m {
        Modal::Inject(t)
        | Modal::Override { reason: t, .. }
        | Modal::Feedback { text: t, .. }
        | Modal::Draft { text: t, .. }
        | Modal::Secret { text: t, .. } => t.insert_newline(),
        Modal::Topic(_) | Modal::Promote { .. } => {}
    }
}
