//! The command bar and the help screen, generated from the keymap and assets/tui/commands.toml:
//! the footer lists the keys that work in the focused pane (or the open dialog), the help screen
//! groups every binding by pane and lists the dialogs' keys. Rebinding a key changes both.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::text::width::width;
use crate::tui::app::{App, Modal};
use crate::tui::focus::Focus;
use crate::tui::keymap::Action;

const DATA: &str = include_str!("../../../assets/tui/commands.toml");

#[derive(Deserialize, Default)]
pub struct Commands {
    labels: BTreeMap<Action, String>,
    pub(crate) footer: BTreeMap<String, Vec<Action>>,
    help: BTreeMap<String, Vec<Action>>,
    pub dialogs: BTreeMap<String, Vec<(String, String)>>,
    #[serde(default)]
    status: StatusData,
}

#[derive(Deserialize, Default)]
pub struct StatusData {
    /// Seconds an ordinary status message stays.
    #[serde(default)]
    pub seconds: f64,
}

pub fn data() -> &'static Commands {
    static D: OnceLock<Commands> = OnceLock::new();
    // Embedded and tested; an empty table only empties the footer.
    D.get_or_init(|| toml::from_str(DATA).unwrap_or_default())
}

pub fn status_data() -> &'static StatusData {
    &data().status
}

/// The keymap section that applies beneath whatever overlay is open: chat mode's, or the
/// pane's.
pub fn focus(app: &App) -> &'static str {
    let beneath = if app.chat.is_some() && app.pane == crate::tui::focus::Pane::Detail {
        Focus::Chat
    } else {
        Focus::Pane(app.pane)
    };
    beneath.keymap_section(app.pane)
}

/// A key name as shown ("ctrl-c" stays, single characters stay, "pagedown" → "PgDn" …).
fn show_key(k: &str) -> String {
    match k {
        "pagedown" => "PgDn".into(),
        "pageup" => "PgUp".into(),
        "up" => "↑".into(),
        "down" => "↓".into(),
        "left" => "←".into(),
        "right" => "→".into(),
        "backtab" => "shift-tab".into(),
        _ => k.to_string(),
    }
}

/// The dialog's name in commands.toml.
pub fn dialog_name(m: &Modal) -> &'static str {
    m.dialog().name()
}

/// (keys, label) for the footer, in the data's order; an action with no key is left out.
pub fn footer_items(app: &App) -> Vec<(String, String)> {
    let d = data();
    if let Some(m) = &app.modal {
        return d.dialogs.get(dialog_name(m)).cloned().unwrap_or_default();
    }
    if app.help {
        return d.dialogs.get("help").cloned().unwrap_or_default();
    }
    let pane = focus(app);
    let mut out: Vec<(String, String)> = Vec::new();
    if !app.errors.is_empty() {
        out.extend(d.dialogs.get("error").cloned().unwrap_or_default());
    }
    for a in d.footer.get(pane).into_iter().flatten() {
        let keys = app.keymap.keys_for(pane, *a);
        let Some(k) = keys.first() else { continue };
        let label = d
            .labels
            .get(a)
            .cloned()
            .unwrap_or_else(|| a.describe().into());
        out.push((show_key(k), label));
    }
    out
}

/// The footer's text for `cols` columns: as many items as fit, then `…` when some did not.
pub fn footer_text(items: &[(String, String)], cols: usize) -> String {
    let mut s = String::new();
    for (i, (k, label)) in items.iter().enumerate() {
        let item = format!("{}{k}:{label}", if i == 0 { "" } else { " " });
        let more = if i + 1 < items.len() { 2 } else { 0 };
        if width(&s) + width(&item) + more > cols {
            s.push_str(" …");
            break;
        }
        s.push_str(&item);
    }
    s
}

/// The help screen's rows: (heading or keys, description), grouped by pane, then dialogs.
pub fn help_rows(app: &App) -> Vec<(String, String)> {
    let d = data();
    let mut rows = Vec::new();
    let mut grouped: Vec<Action> = Vec::new();
    // The conversation's and the run's keys, then each pane's own group (from `Pane::ALL`).
    let groups = ["conversation", "run"]
        .into_iter()
        .chain(crate::tui::focus::Pane::ALL.iter().map(|p| p.name()));
    let mut sections: Vec<(&str, Vec<Action>)> = Vec::new();
    for g in groups {
        let Some(list) = d.help.get(g).cloned() else {
            continue;
        };
        grouped.extend(&list);
        sections.push((g, list));
    }
    let global: Vec<Action> = app
        .keymap
        .help()
        .into_iter()
        .map(|(_, a)| a)
        .filter(|a| !grouped.contains(a))
        .collect();
    sections.insert(0, ("global", global));
    for (name, list) in sections {
        // A pane's group shows that pane's keys; the others (conversation, run) the detail's.
        let pane = crate::tui::focus::Pane::from_name(name).map_or("detail", |p| p.name());
        let mut body = Vec::new();
        for a in list {
            let keys: Vec<String> = app
                .keymap
                .keys_for(pane, a)
                .iter()
                .map(|k| show_key(k))
                .collect();
            if !keys.is_empty() {
                body.push((keys.join(" / "), a.describe().to_string()));
            }
        }
        if !body.is_empty() {
            rows.push((format!("── {name} ──"), String::new()));
            rows.extend(body);
        }
    }
    for (pane, key, a) in app.keymap.pane_bindings() {
        rows.push((
            format!("{} ({pane})", show_key(key)),
            a.describe().to_string(),
        ));
    }
    rows.push(("── dialogs ──".into(), String::new()));
    for (name, keys) in &d.dialogs {
        for (k, what) in keys {
            rows.push((k.clone(), format!("{name}: {what}")));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_parses_and_every_pane_has_a_footer() {
        let d: Commands = toml::from_str(DATA).unwrap();
        for p in crate::tui::focus::Focus::keymap_sections() {
            assert!(d.footer.get(p).is_some_and(|l| !l.is_empty()), "{p}");
        }
        for m in [
            "topic", "inject", "override", "feedback", "promote", "draft", "secret",
        ] {
            assert!(d.dialogs.contains_key(m), "{m}");
        }
        assert!(d.status.seconds > 0.0);
    }

    /// Every `Action` variant, read from keymap.rs itself (so a new one cannot be missed).
    fn variants() -> Vec<String> {
        let src = include_str!("../keymap.rs");
        let body = src.split("pub enum Action {").nth(1).unwrap();
        let body = &body[..body.find('}').unwrap()];
        body.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .map(|l| l.trim_end_matches(',').to_string())
            .filter(|l| l != "None")
            .collect()
    }

    #[test]
    fn every_action_is_bound_and_has_a_label() {
        let d: Commands = toml::from_str(DATA).unwrap();
        let bound: Vec<Action> = crate::tui::keymap::Keymap::builtin()
            .help()
            .into_iter()
            .map(|(_, a)| a)
            .collect();
        let names = variants();
        assert!(names.len() > 40, "{names:?}");
        // The keymap's action list covers the whole enum (each variant by its Debug name).
        for n in &names {
            assert!(
                bound.iter().any(|a| format!("{a:?}") == *n),
                "{n} has no default key"
            );
        }
        assert_eq!(bound.len(), names.len());
        for a in &bound {
            let l = d.labels.get(a);
            assert!(
                l.is_some_and(|l| !l.trim().is_empty()),
                "{a:?} has no label"
            );
        }
        // Every action the footer or the help groups name is bound.
        for a in d.footer.values().chain(d.help.values()).flatten() {
            assert!(bound.contains(a), "{a:?} listed but not bound");
        }
        assert!(d.footer["detail"].contains(&Action::ShowRequest));
        assert!(d.help["conversation"].contains(&Action::ShowRequest));
    }

    #[test]
    fn footer_text_fits_and_says_when_it_is_cut() {
        let items: Vec<(String, String)> = (0..20)
            .map(|i| (format!("{i}"), "アクション".into()))
            .collect();
        for cols in [20, 40, 80, 140] {
            let s = footer_text(&items, cols);
            assert!(width(&s) <= cols, "{cols}: {s}");
            assert!(s.ends_with('…'), "{s}");
        }
        assert_eq!(footer_text(&items[..2], 80), "0:アクション 1:アクション");
    }

    /// Every pane has a footer and every dialog a key bar in commands.toml.
    #[test]
    fn every_pane_and_dialog_has_its_commands() {
        let d = data();
        for s in crate::tui::focus::Focus::keymap_sections() {
            assert!(d.footer.contains_key(s), "no [footer] {s}");
        }
        for dl in crate::tui::focus::Dialog::ALL {
            assert!(
                d.dialogs.contains_key(dl.name()),
                "no [dialogs] {}",
                dl.name()
            );
        }
    }
}
