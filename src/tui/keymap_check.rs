//! Checks a merged keymap before it is used: every key name must be one the workbench can
//! receive, every `[pane.NAME]` a pane that exists, and at least one global key must still quit.
//! A failure is a `ConfigError` at the user file's line and column, and the defaults are used.

use std::collections::BTreeMap;
use std::path::Path;

use super::keymap::Action;
use crate::config::{ConfigError, locate_key};

/// Named keys (besides single characters); any of them may take a `ctrl-` prefix.
pub const NAMED: [&str; 14] = [
    "up",
    "down",
    "left",
    "right",
    "pageup",
    "pagedown",
    "home",
    "end",
    "tab",
    "backtab",
    "enter",
    "esc",
    "backspace",
    "delete",
];

/// Whether `name` is a key the workbench can receive ("q", "ctrl-c", "f5", "pageup" …).
pub fn known_key(name: &str) -> bool {
    let base = name.strip_prefix("ctrl-").unwrap_or(name);
    if base.chars().count() == 1 {
        return true;
    }
    if let Some(n) = base.strip_prefix('f') {
        return n.parse::<u8>().is_ok_and(|n| (1..=12).contains(&n));
    }
    NAMED.contains(&base)
}

fn invalid(path: &Path, text: &str, key: String, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_path_buf(),
        at: locate_key(text, &key).or(Some((1, 1))),
        key: Some(key),
        message,
    }
}

pub fn check(
    keys: &BTreeMap<String, Action>,
    panes: &BTreeMap<String, BTreeMap<String, Action>>,
    path: &Path,
    text: &str,
) -> Result<(), ConfigError> {
    for k in keys.keys() {
        if !known_key(k) {
            return Err(invalid(
                path,
                text,
                format!("keys.{k}"),
                format!(
                    "unknown key `{k}` (a character, f1–f12, or one of {}; prefix ctrl- for Control)",
                    NAMED.join(", ")
                ),
            ));
        }
    }
    for (pane, map) in panes {
        let panes = super::focus::Focus::keymap_sections();
        if !panes.contains(&pane.as_str()) {
            return Err(invalid(
                path,
                text,
                format!("pane.{pane}"),
                format!("unknown pane `{pane}` (one of {})", panes.join(", ")),
            ));
        }
        for k in map.keys() {
            if !known_key(k) {
                return Err(invalid(
                    path,
                    text,
                    format!("pane.{pane}.{k}"),
                    format!("unknown key `{k}` in [pane.{pane}]"),
                ));
            }
        }
    }
    if !keys.values().any(|a| *a == Action::Quit) {
        // Point at the line that took the last quit key away, when there is one.
        let at = ["q", "ctrl-c"]
            .iter()
            .find_map(|k| locate_key(text, &format!("keys.{k}")));
        return Err(ConfigError::Invalid {
            path: path.to_path_buf(),
            at: at.or(Some((1, 1))),
            key: None,
            message: "no key quits any more: bind one to \"quit\" in [keys]".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::keymap::Keymap;
    use super::*;

    fn load(text: &str) -> Result<Keymap, ConfigError> {
        Keymap::from_text(Some((Path::new("keymap.toml"), text)))
    }

    #[test]
    fn key_names() {
        for k in ["q", "?", "ctrl-c", "f1", "f12", "pageup", "ctrl-left", "+"] {
            assert!(known_key(k), "{k}");
        }
        for k in ["f13", "pgup", "ctrl-", "alt-x", "escape", "qq"] {
            assert!(!known_key(k), "{k}");
        }
    }

    #[test]
    fn unbinding_every_quit_key_is_an_error_at_its_line() {
        let e = load("# mine\n[keys]\n\"q\" = \"none\"\n\"ctrl-c\" = \"none\"\n").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("keymap.toml:3:"), "{s}");
        assert!(s.contains("quit"), "{s}");
        // Rebinding quit elsewhere is fine.
        let k =
            load("[keys]\n\"q\" = \"none\"\n\"ctrl-c\" = \"none\"\n\"x\" = \"quit\"\n").unwrap();
        assert_eq!(k.keys_for("detail", Action::Quit), ["x"]);
    }

    #[test]
    fn unknown_key_or_pane_is_an_error_with_file_line_col() {
        let e = load("[keys]\n\"q\" = \"quit\"\n\"pgup\" = \"page_up\"\n").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("keymap.toml:3:1"), "{s}");
        assert!(s.contains("pgup"), "{s}");
        let e = load("[pane.rulez]\n\"x\" = \"increase\"\n").unwrap_err();
        assert!(e.to_string().starts_with("keymap.toml:1:"), "{e}");
        assert!(e.to_string().contains("rulez"), "{e}");
        let e = load("[pane.rules]\n\"shift-x\" = \"increase\"\n").unwrap_err();
        assert!(e.to_string().starts_with("keymap.toml:2:1"), "{e}");
        let e = load("[keys]\n\"x\" = \"explode\"\n").unwrap_err();
        assert!(e.to_string().starts_with("keymap.toml:2:"), "{e}");
    }

    #[test]
    fn pane_sections_come_before_the_global_keys() {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let k = load("[pane.rules]\n\"+\" = \"increase\"\n\"j\" = \"next_field\"\n").unwrap();
        let plus = KeyEvent::new(KeyCode::Char('+'), KeyModifiers::NONE);
        assert_eq!(k.action_in("rules", &plus), Some(Action::Increase));
        assert_eq!(k.action_in("detail", &plus), Some(Action::ThumbUp));
        assert_eq!(k.keys_for("rules", Action::NextField)[0], "j");
        // The flat [keys] table still works alone (backward compatible).
        let k = load("[keys]\n\"x\" = \"help\"\n").unwrap();
        let x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
        assert_eq!(k.action_in("rules", &x), Some(Action::Help));
    }
}
