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

const DATA: &str = include_str!("../../../../../assets/tui/commands.toml");

#[derive(Deserialize, Default)]
pub struct Commands {
    /// Short footer labels by name: a global action's or a pane verb's.
    labels: BTreeMap<String, String>,
    /// Per keymap section: global actions and that pane's own verbs, by name.
    pub(crate) footer: BTreeMap<String, Vec<String>>,
    /// The conversation's and the run's groups of global actions (a pane's group is its own
    /// verbs, listed by the pane).
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

/// (keys, label) for the footer: the key bar of whatever has the keyboard (`App::focus`: a
/// dialog, the help, the runs browser, the search box, the compare view, insights, an
/// interview, a confirmation), else the focused pane's actions in the data's order (an action
/// with no key is left out).
pub fn footer_items(app: &App) -> Vec<(String, String)> {
    let d = data();
    let bar = |name: &str| d.dialogs.get(name).cloned().unwrap_or_default();
    match app.focus() {
        Focus::Dialog(d) => return bar(d.name()),
        Focus::Help => return bar("help"),
        Focus::Runs => return bar("runs"),
        Focus::Search => return bar("search"),
        Focus::Compare => return bar("compare"),
        Focus::Insights => return bar("insights"),
        Focus::Interview => return bar("interview"),
        Focus::Confirm => return bar("confirm"),
        Focus::Pane(_) | Focus::Chat | Focus::Errors => {}
    }
    let pane = focus(app);
    let mut out: Vec<(String, String)> = Vec::new();
    if !app.errors.is_empty() {
        out.extend(d.dialogs.get("error").cloned().unwrap_or_default());
    }
    for name in d.footer.get(pane).into_iter().flatten() {
        let keys = match Action::parse(name) {
            Some(a) => app.keymap.keys_for(pane, a),
            None => app.keymap.keys_for_verb(pane, name),
        };
        let Some(k) = keys.first() else { continue };
        let label = d.labels.get(name).cloned().unwrap_or_else(|| name.clone());
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

/// The help screen's rows: (heading or keys, description): the global keys, the
/// conversation's and the run's, each pane's own verbs (in `Pane::ALL`'s order), then dialogs.
pub fn help_rows(app: &App) -> Vec<(String, String)> {
    let d = data();
    let mut rows = Vec::new();
    let groups: Vec<(&str, Vec<Action>)> = ["conversation", "run"]
        .into_iter()
        .filter_map(|g| Some((g, d.help.get(g)?.clone())))
        .collect();
    let grouped: Vec<Action> = groups.iter().flat_map(|(_, l)| l.clone()).collect();
    let global: Vec<Action> = app
        .keymap
        .help()
        .into_iter()
        .map(|(_, a)| a)
        .filter(|a| !grouped.contains(a))
        .collect();
    for (name, list) in std::iter::once(("global", global)).chain(groups) {
        let body = list.into_iter().filter_map(|a| {
            let keys = app.keymap.keys_for("detail", a);
            Some((shown(&keys)?, a.describe().to_string()))
        });
        section(&mut rows, name, body.collect());
    }
    for pane in crate::tui::focus::Pane::ALL {
        let body = pane.verbs().into_iter().filter_map(|(verb, what)| {
            let keys = app.keymap.keys_for_verb(pane.name(), verb);
            Some((shown(&keys)?, what.to_string()))
        });
        section(&mut rows, pane.name(), body.collect());
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

/// Keys as the help shows them ("j / ↓"); None when there are none.
fn shown(keys: &[String]) -> Option<String> {
    (!keys.is_empty()).then(|| {
        keys.iter()
            .map(|k| show_key(k))
            .collect::<Vec<_>>()
            .join(" / ")
    })
}

/// A heading and its rows, when it has any.
fn section(rows: &mut Vec<(String, String)>, name: &str, body: Vec<(String, String)>) {
    if !body.is_empty() {
        rows.push((format!("── {name} ──"), String::new()));
        rows.extend(body);
    }
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
        assert!(names.len() > 30, "{names:?}");
        // The keymap's action list covers the whole enum (each variant by its Debug name).
        for n in &names {
            assert!(
                bound.iter().any(|a| format!("{a:?}") == *n),
                "{n} has no default key"
            );
        }
        assert_eq!(bound.len(), names.len());
        for a in &bound {
            let l = d.labels.get(&crate::tui::keymap::serde_name(*a));
            assert!(
                l.is_some_and(|l| !l.trim().is_empty()),
                "{a:?} has no label"
            );
        }
        // Every action the help groups name is bound.
        for a in d.help.values().flatten() {
            assert!(bound.contains(a), "{a:?} listed but not bound");
        }
        assert!(d.help["conversation"].contains(&Action::ShowRequest));
    }

    /// Every name a pane's footer lists is a bound global action or one of that pane's own
    /// verbs with a key in its `[pane.NAME]` section and a label; every verb of every pane has
    /// a default key.
    #[test]
    fn every_footer_name_is_a_bound_action_or_the_panes_verb() {
        use crate::tui::focus::Pane;
        let d: Commands = toml::from_str(DATA).unwrap();
        let k = crate::tui::keymap::Keymap::builtin();
        for (section, names) in &d.footer {
            let pane = Pane::from_name(section);
            for name in names {
                assert!(d.labels.contains_key(name), "{name} has no label");
                match Action::parse(name) {
                    Some(a) => assert!(!k.keys_for(section, a).is_empty(), "{name} unbound"),
                    None => {
                        let verbs = pane.map(|p| p.verbs()).unwrap_or_default();
                        assert!(
                            verbs.iter().any(|(v, _)| v == name),
                            "{name} in [footer] {section} is neither an action nor its verb"
                        );
                    }
                }
            }
        }
        for pane in Pane::ALL {
            for (verb, _) in pane.verbs() {
                assert!(
                    !k.keys_for_verb(pane.name(), verb).is_empty(),
                    "{verb} of {} has no default key",
                    pane.name()
                );
                assert!(d.labels.contains_key(verb), "{verb} has no label");
            }
        }
        assert!(d.footer["detail"].contains(&"show_request".to_string()));
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

    /// Every pane has a footer and every dialog and overlay a key bar in commands.toml.
    #[test]
    fn every_pane_and_dialog_has_its_commands() {
        let d = data();
        for s in crate::tui::focus::Focus::keymap_sections() {
            assert!(d.footer.contains_key(s), "no [footer] {s}");
        }
        for o in [
            "runs",
            "search",
            "compare",
            "insights",
            "interview",
            "confirm",
            "help",
        ] {
            assert!(
                d.dialogs.get(o).is_some_and(|b| !b.is_empty()),
                "no [dialogs] {o}"
            );
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
