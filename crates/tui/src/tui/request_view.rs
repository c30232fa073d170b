//! What the model saw (issue 14 §4): the detail pane's second view of an attempt — the exact
//! request it sent (messages with their roles, then the options) as the store kept it, with
//! each vault section of the system message marked by its level (`[L3]`, `[L2]`, `[L1]`,
//! `[L?]` on every line, so the level shows without colour). The request is read lazily, for
//! the selected attempt only, when the view is on; a live run's attempt is found as soon as
//! the driver stored it with the attempt.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::theme::Theme;
use super::view::RunView;
use super::wrap::wrap;
use crate::vault::marks::{Source, mark_system};
use crate::vault::template::Templates;

/// An attempt: (run id, turn, attempt number).
pub type Key = (i64, usize, usize);

/// The view's state: on or off, and the request of the attempt last asked for.
#[derive(Debug, Clone, Default)]
pub struct RequestPane {
    pub shown: bool,
    /// The attempt whose request is loaded or on its way.
    pub key: Option<Key>,
    /// None: still loading. Ok(None): the store kept no request for it.
    pub result: Option<Result<Option<Value>, crate::tui::error::UiError>>,
}

impl RequestPane {
    /// A read came back; one for an attempt no longer selected is dropped.
    pub fn loaded(&mut self, key: Key, r: Result<Option<Value>, crate::tui::error::UiError>) {
        if self.key == Some(key) {
            self.result = Some(r);
        }
    }
}

/// The attempt the detail pane shows, as a key (None: no stored run or no attempt):
/// `selected` turn, `attempt` chosen in the timeline (else the committed or last one).
pub fn selected_key(run: &RunView, selected: usize, attempt: Option<usize>) -> Option<Key> {
    let id = run.run_id?;
    let turn = run.turns.get(selected)?;
    let idx = attempt
        .or(turn.committed)
        .unwrap_or(turn.attempts.len().saturating_sub(1));
    Some((id, turn.turn, turn.attempts.get(idx)?.attempt))
}

impl RequestPane {
    /// `x`: findings ↔ request; the status line to show.
    pub fn toggle(&mut self) -> &'static str {
        self.shown = !self.shown;
        self.key = None;
        if self.shown {
            "detail: the request the model saw ([L3]/[L2]/[L1] mark the vault) · x: findings"
        } else {
            "detail: findings · x: the request"
        }
    }

    /// The read the view needs now that `selected` is the attempt on screen (the selection
    /// moved, or the view was just turned on): the key to load, if any.
    pub fn sync(&mut self, selected: Option<Key>) -> Option<Key> {
        if !self.shown {
            return None;
        }
        let key = selected?;
        if self.key == Some(key) {
            return None;
        }
        self.key = Some(key);
        self.result = None;
        Some(key)
    }
}

/// The lines of the request view for attempt `key` (the one selected), `width` columns wide;
/// `templates` mark the vault's sections (the visibility pane's, when it is loaded).
pub fn lines(
    pane: &RequestPane,
    key: Option<Key>,
    templates: Option<&Templates>,
    hidden: bool,
    width: usize,
    t: &Theme,
) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let say = |s: &str, st: Style| -> Vec<Line<'static>> {
        wrap(s, width)
            .into_iter()
            .map(|r| Line::styled(r, st))
            .collect()
    };
    if hidden {
        // The request carries the Director's guidance: blind until she judged the turn.
        return say(
            "request hidden (blind): it carries the Director's guidance — 👍/👎 or override this turn first · x: back",
            dim,
        );
    }
    let Some(key) = key else {
        return say("no stored run: nothing was kept to show · x: back", dim);
    };
    let head = format!("request of turn {} attempt #{} · x: findings", key.1, key.2);
    let mut out = vec![Line::styled(head, Style::new().fg(t.accent))];
    match (&pane.result, pane.key == Some(key)) {
        (None, _) | (_, false) => out.extend(say("loading the stored request …", dim)),
        (Some(Err(e)), _) => out.extend(say(
            &format!("store: the request could not be read: {e}"),
            Style::new().fg(t.retry),
        )),
        (Some(Ok(None)), _) => out.extend(say(
            "no request stored for this attempt (runs before schema 007 keep only its hash; a live attempt shows once stored — x x reads again)",
            dim,
        )),
        (Some(Ok(Some(v))), _) => out.extend(request_lines(templates, v, width, t)),
    }
    out
}

/// Messages (role, then the content with vault sections marked) and options.
fn request_lines(
    templates: Option<&Templates>,
    v: &Value,
    width: usize,
    t: &Theme,
) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let mut out = Vec::new();
    let Some(messages) = v.get("messages").and_then(Value::as_array) else {
        // Fail closed: say so and show the JSON as it is.
        out.push(Line::styled(
            "request unreadable: no `messages` list — the JSON as stored:",
            Style::new().fg(t.retry),
        ));
        for r in wrap(&v.to_string(), width) {
            out.push(Line::styled(r, dim));
        }
        return out;
    };
    let default_templates;
    let templates = match templates {
        Some(t) => t,
        None => {
            default_templates = Templates::new(Vec::new()).unwrap_or_default();
            &default_templates
        }
    };
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
        let content = m.get("content").and_then(Value::as_str).unwrap_or("");
        out.push(Line::styled(
            format!("── {} {role} ──", i + 1),
            Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
        for part in mark_system(content, templates) {
            let marker = part.source.marker();
            let st = match part.source {
                Source::Prompt => Style::new().fg(t.text),
                Source::Level(3) => Style::new().fg(t.pass),
                Source::Level(2) => Style::new().fg(t.warn),
                Source::Level(_) => Style::new().fg(t.retry),
                Source::Unknown => dim,
            };
            let text = part.text.trim_end_matches('\n');
            let inner = width.saturating_sub(marker.as_ref().map_or(0, |m| m.len() + 1));
            for line in text.split('\n') {
                if line.is_empty() {
                    out.push(Line::styled(marker.clone().unwrap_or_default(), st));
                    continue;
                }
                for r in wrap(line, inner.max(1)) {
                    out.push(match &marker {
                        Some(mk) => Line::from(vec![
                            Span::styled(format!("{mk} "), st.add_modifier(Modifier::BOLD)),
                            Span::styled(r, st),
                        ]),
                        None => Line::styled(r, st),
                    });
                }
            }
        }
    }
    out.push(Line::styled(
        "── options ──",
        Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
    ));
    match v.get("options").and_then(Value::as_object) {
        Some(o) => {
            for (k, val) in o {
                for r in wrap(&format!("{k}: {val}"), width) {
                    out.push(Line::styled(r, dim));
                }
            }
        }
        None => out.push(Line::styled("(no options stored)", dim)),
    }
    out
}
