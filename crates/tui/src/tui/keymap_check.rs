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

/// Checks the merged `[keys]` and `[pane.NAME]` sections and returns the global bindings.
pub fn check(
    raw: &BTreeMap<String, String>,
    panes: &BTreeMap<String, BTreeMap<String, String>>,
    path: &Path,
    text: &str,
) -> Result<BTreeMap<String, Action>, ConfigError> {
    let mut keys = BTreeMap::new();
    for (k, v) in raw {
        let Some(a) = Action::parse(v) else {
            return Err(invalid(path, text, format!("keys.{k}"), unknown_action(v)));
        };
        keys.insert(k.clone(), a);
    }
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
        let verbs = super::focus::Pane::from_name(pane)
            .map(|p| p.verbs())
            .unwrap_or_default();
        for (k, v) in map {
            if !known_key(k) {
                return Err(invalid(
                    path,
                    text,
                    format!("pane.{pane}.{k}"),
                    format!("unknown key `{k}` in [pane.{pane}]"),
                ));
            }
            if Action::parse(v).is_none() && !verbs.iter().any(|(n, _)| n == v) {
                let names: Vec<&str> = verbs.iter().map(|(n, _)| *n).collect();
                let own = if names.is_empty() {
                    "it has no verbs of its own".to_string()
                } else {
                    format!("its own verbs: {}", names.join(", "))
                };
                return Err(invalid(
                    path,
                    text,
                    format!("pane.{pane}.{k}"),
                    format!("`{v}` is not a verb of the {pane} pane nor a global action ({own})"),
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
    Ok(keys)
}

/// Why `name` is no global action: unknown, or now a pane's own verb (with its section).
fn unknown_action(name: &str) -> String {
    let owner = super::focus::Pane::ALL
        .into_iter()
        .find(|p| p.verbs().iter().any(|(n, _)| *n == name) || p.formerly().contains(&name));
    match owner {
        Some(p) => format!(
            "`{name}` is the {} pane's own verb: bind it under [pane.{}] (its verbs: {})",
            p.name(),
            p.name(),
            p.verbs()
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!("unknown action `{name}` (the help screen, ?, lists them)"),
    }
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
        let e = load("[pane.rulez]\n\"x\" = \"raise\"\n").unwrap_err();
        assert!(e.to_string().starts_with("keymap.toml:1:"), "{e}");
        assert!(e.to_string().contains("rulez"), "{e}");
        let e = load("[pane.rules]\n\"shift-x\" = \"raise\"\n").unwrap_err();
        assert!(e.to_string().starts_with("keymap.toml:2:1"), "{e}");
        let e = load("[keys]\n\"x\" = \"explode\"\n").unwrap_err();
        assert!(e.to_string().starts_with("keymap.toml:2:"), "{e}");
    }

    #[test]
    fn pane_sections_bind_the_panes_own_verbs_before_the_global_keys() {
        use crate::tui::tuning::RulesVerb;
        use crate::tui::vis::VisVerb;
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let k = load("[pane.rules]\n\"+\" = \"raise\"\n\"j\" = \"next_field\"\n").unwrap();
        let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        // In the rules pane + is its own verb (no global action); elsewhere still 👍.
        assert_eq!(
            k.verb::<RulesVerb>("rules", &key('+')),
            Some(RulesVerb::Raise)
        );
        assert_eq!(k.action_in("rules", &key('+')), None);
        assert_eq!(k.action_in("detail", &key('+')), Some(Action::ThumbUp));
        assert!(
            k.keys_for_verb("rules", "next_field")
                .contains(&"j".to_string())
        );
        // The defaults keep the rules pane's keys; another pane's section is not read.
        assert_eq!(
            k.verb::<RulesVerb>("rules", &key('>')),
            Some(RulesVerb::Raise)
        );
        assert_eq!(
            k.verb::<VisVerb>("visibility", &key('0')),
            Some(VisVerb::Level0)
        );
        assert_eq!(k.verb::<VisVerb>("rules", &key('0')), None);
        // A global action rebound in a pane section, and the flat [keys] table alone.
        let k = load("[pane.rules]\n\"x\" = \"help\"\n").unwrap();
        assert_eq!(k.action_in("rules", &key('x')), Some(Action::Help));
        let k = load("[keys]\n\"x\" = \"help\"\n").unwrap();
        assert_eq!(k.action_in("rules", &key('x')), Some(Action::Help));
    }

    /// A verb bound where it does not belong is an error at its line naming the pane's verbs;
    /// a keymap from before the panes had verbs is pointed at the section to move a binding to.
    #[test]
    fn a_verb_in_the_wrong_place_is_an_error_that_says_where_it_goes() {
        let e = load("[pane.rules]\n\"x\" = \"level0\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("keymap.toml:2:"), "{e}");
        assert!(
            e.contains("next_field, prev_field, raise, lower, save"),
            "{e}"
        );
        for (old, pane) in [
            ("increase", "rules"),
            ("save_rules", "rules"),
            ("next_field", "rules"),
            ("set_level0", "visibility"),
            ("edit_secret", "visibility"),
            ("dropouts", "patterns"),
        ] {
            let e = load(&format!("# mine\n[keys]\n\"x\" = \"{old}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("keymap.toml:3:"), "{old}: {e}");
            assert!(e.contains(&format!("[pane.{pane}]")), "{old}: {e}");
        }
        let e = load("[keys]\n\"x\" = \"explode\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown action `explode`"), "{e}");
    }
}
