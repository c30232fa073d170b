//! Key bindings as data: the embedded assets/keymap.toml merged with the user's keymap.toml.
//! Every action has a description, so the help screen is generated from the keymap.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

use crate::config::ConfigError;

const DEFAULT: &str = include_str!("../../../../assets/keymap.toml");
const DEFAULT_PATH: &str = "assets/keymap.toml";

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Quit,
    Help,
    NextTurn,
    PrevTurn,
    PageDown,
    PageUp,
    FirstTurn,
    Follow,
    NextAttempt,
    PrevAttempt,
    NewRun,
    Demo,
    PauseResume,
    Stop,
    Inject,
    Regenerate,
    ThumbUp,
    ThumbDown,
    Override,
    Feedback,
    ChooseAttempt,
    NextTheme,
    NextPane,
    Chat,
    Promote,
    Probe,
    Runs,
    Search,
    SearchNext,
    SearchPrev,
    NextUnreviewed,
    NextFlagged,
    NextFlipped,
    Undo,
    ReplayToEnd,
    FocusRight,
    NextBranch,
    ShowRequest,
    /// Unbinds a key.
    None,
}

impl Action {
    /// The action a keymap value names (None: not a global action).
    pub fn parse(name: &str) -> Option<Action> {
        use serde::de::IntoDeserializer;
        let d: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
            name.into_deserializer();
        Action::deserialize(d).ok()
    }

    pub fn describe(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "show / hide this help",
            Action::NextTurn => "select the next turn",
            Action::PrevTurn => "select the previous turn (stops following the stream)",
            Action::PageDown => "scroll down a page",
            Action::PageUp => "scroll up a page",
            Action::FirstTurn => "select the first turn",
            Action::Follow => "follow the stream again (select the newest turn)",
            Action::NextAttempt => "show the next attempt of the turn",
            Action::PrevAttempt => "show the previous attempt of the turn",
            Action::NewRun => "start a new run with a topic",
            Action::Demo => "play the bundled demo run",
            Action::PauseResume => "pause / resume the run (after the current line)",
            Action::Stop => "stop the run",
            Action::Inject => "give an owner instruction for the next turn",
            Action::Regenerate => {
                "regenerate the selected turn (asks; later turns kept as a branch)"
            }
            Action::ThumbUp => "👍 the selected turn",
            Action::ThumbDown => "👎 the selected turn",
            Action::Override => "override the verdict of the selected turn, with a reason",
            Action::Feedback => "feedback note with a category and a suggested fix",
            Action::ChooseAttempt => "while held: commit the shown attempt",
            Action::NextTheme => "switch theme",
            Action::NextPane => "right pane: the next tab (in the tab strip's order)",
            Action::Chat => "chat with one sister as a user (Esc: keys, Esc again: back)",
            Action::Promote => "make the selected reviewed line a pattern",
            Action::Probe => "probe the endpoint again (model list, short timeout)",
            Action::Runs => "the runs browser: every stored run, filter as you type",
            Action::Search => "search the run's text (Tab in the bar: every run)",
            Action::SearchNext => "jump to the next search match",
            Action::SearchPrev => "jump to the previous search match",
            Action::NextUnreviewed => "jump to the next turn without 👍/👎, override or note",
            Action::NextFlagged => "jump to the next RETRY / WARN / UNSCORED turn",
            Action::NextFlipped => {
                "jump to the next turn whose verdict flipped in the last rule edit"
            }
            Action::Undo => "undo the latest 👍/👎, override or feedback (stored as an undo)",
            Action::ReplayToEnd => "replay: show the rest of the recording at once",
            Action::FocusRight => "focus the right pane (j/k scroll it) / give the focus back",
            Action::NextBranch => "show the next branch a regeneration kept (then the main line)",
            Action::ShowRequest => {
                "detail pane: the attempt's findings ↔ the exact request the model saw"
            }
            Action::None => "(unbound)",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Keymap {
    /// `[keys]`: global bindings.
    keys: BTreeMap<String, Action>,
    /// `[pane.NAME]`: bindings that apply only while that pane has focus, ahead of the global
    /// ones: the pane's own verbs (`tui::verbs`), or a global action rebound for that pane.
    panes: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct KeymapFile {
    keys: BTreeMap<String, String>,
    #[serde(default)]
    pane: BTreeMap<String, BTreeMap<String, String>>,
}

impl Keymap {
    pub fn builtin() -> Keymap {
        Keymap::from_text(None).unwrap_or(Keymap {
            keys: BTreeMap::new(),
            panes: BTreeMap::new(),
        })
    }

    /// Parses, merges and checks: every key name known, a quit key left (file:line:col).
    pub fn from_text(user: Option<(&std::path::Path, &str)>) -> Result<Keymap, ConfigError> {
        let f: KeymapFile = crate::config::layered_from_str(DEFAULT_PATH, DEFAULT, user)?;
        let (path, text) = user.unwrap_or((std::path::Path::new(DEFAULT_PATH), DEFAULT));
        let keys = super::keymap_check::check(&f.keys, &f.pane, path, text)?;
        Ok(Keymap {
            keys,
            panes: f.pane,
        })
    }

    pub fn action(&self, key: &KeyEvent) -> Option<Action> {
        let name = key_name(key)?;
        self.keys.get(&name).copied().filter(|a| *a != Action::None)
    }

    /// The global action of `key` while `pane` has focus: the pane's binding when it names a
    /// global action, none when it names one of the pane's verbs (the room takes the key),
    /// else the global binding.
    pub fn action_in(&self, pane: &str, key: &KeyEvent) -> Option<Action> {
        let name = key_name(key)?;
        match self.panes.get(pane).and_then(|m| m.get(&name)) {
            Some(v) => Action::parse(v).filter(|a| *a != Action::None),
            None => self.action(key),
        }
    }

    /// The verb of `pane`'s own that `key` is bound to in `[pane.NAME]`, if any.
    pub fn verb<V: super::verbs::Verbs>(&self, pane: &str, key: &KeyEvent) -> Option<V> {
        let name = key_name(key)?;
        V::parse(self.panes.get(pane)?.get(&name)?)
    }

    /// The keys that trigger `action` while `pane` has focus, pane bindings first.
    pub fn keys_for(&self, pane: &str, action: Action) -> Vec<String> {
        let name = serde_name(action);
        let local = self.panes.get(pane);
        let mut out: Vec<String> = local
            .into_iter()
            .flatten()
            .filter(|(_, a)| **a == name)
            .map(|(k, _)| k.clone())
            .collect();
        out.extend(
            self.keys
                .iter()
                .filter(|(k, a)| **a == action && !local.is_some_and(|m| m.contains_key(*k)))
                .map(|(k, _)| k.clone()),
        );
        sort_keys(&mut out);
        out
    }

    /// The keys bound to `pane`'s own verb `name` in `[pane.NAME]`.
    pub fn keys_for_verb(&self, pane: &str, name: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .panes
            .get(pane)
            .into_iter()
            .flatten()
            .filter(|(_, v)| *v == name)
            .map(|(k, _)| k.clone())
            .collect();
        sort_keys(&mut out);
        out
    }

    /// (keys, action) pairs for the help screen, grouped by action in a stable order.
    pub fn help(&self) -> Vec<(String, Action)> {
        let mut by: BTreeMap<Action, Vec<&str>> = BTreeMap::new();
        for (k, a) in &self.keys {
            if *a != Action::None {
                by.entry(*a).or_default().push(k);
            }
        }
        by.into_iter().map(|(a, ks)| (ks.join(" / "), a)).collect()
    }

    /// Global actions rebound in a pane section: (pane, key, action).
    pub fn pane_bindings(&self) -> impl Iterator<Item = (&str, &str, Action)> {
        self.panes.iter().flat_map(|(p, m)| {
            m.iter()
                .filter_map(|(k, v)| Some((k, Action::parse(v)?)))
                .filter(|(_, a)| *a != Action::None)
                .map(move |(k, a)| (p.as_str(), k.as_str(), a))
        })
    }
}

/// An action's name as the keymap writes it (`next_turn`).
pub fn serde_name(action: Action) -> String {
    serde_json::to_value(action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Single characters first ("q" before "ctrl-c", "j" before "down"), order kept otherwise.
fn sort_keys(keys: &mut [String]) {
    keys.sort_by_key(|k| k.chars().count() > 1);
}

pub fn key_name(key: &KeyEvent) -> Option<String> {
    let base = match key.code {
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Up => "up".into(),
        KeyCode::Left => "left".into(),
        KeyCode::Right => "right".into(),
        KeyCode::Backspace => "backspace".into(),
        KeyCode::Delete => "delete".into(),
        KeyCode::Down => "down".into(),
        KeyCode::PageUp => "pageup".into(),
        KeyCode::PageDown => "pagedown".into(),
        KeyCode::Home => "home".into(),
        KeyCode::End => "end".into(),
        KeyCode::Tab => "tab".into(),
        KeyCode::BackTab => "backtab".into(),
        KeyCode::Enter => "enter".into(),
        KeyCode::Esc => "esc".into(),
        KeyCode::F(n) => format!("f{n}"),
        _ => return None,
    };
    Some(if key.modifiers.contains(KeyModifiers::CONTROL) {
        format!("ctrl-{base}")
    } else {
        base
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_bind_every_action_and_users_can_rebind() {
        let k = Keymap::builtin();
        let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(k.action(&q), Some(Action::Quit));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(k.action(&ctrl_c), Some(Action::Quit));
        let help = k.help();
        assert!(
            help.iter()
                .any(|(keys, a)| *a == Action::PrevTurn && keys.contains("up"))
        );
        let user = "[keys]\nq = \"none\"\nx = \"quit\"\n";
        let k = Keymap::from_text(Some((std::path::Path::new("k.toml"), user))).unwrap();
        assert_eq!(k.action(&q), None);
        let x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
        assert_eq!(k.action(&x), Some(Action::Quit));
        let bad = "[keys]\nq = \"explode\"\n";
        let e = Keymap::from_text(Some((std::path::Path::new("k.toml"), bad))).unwrap_err();
        assert!(e.to_string().contains("explode"), "{e}");
    }
}
