//! The conversations view (issue 11 §3): LINE conversations from the store, newest first, each
//! bot reply with its verdict (or the reviewer's override), pattern and outcome; 👍/👎 on a
//! reply (a pattern reply's 👍/👎 is the pattern's like_rate), an override with its reason as
//! the note; and seed 002's judgment-cache state per scope. Data from `serve::review`.

use super::command::{Command, Modal, Target, textarea};
use super::error::{Notice, UiError};
use super::panes::{Ask, Pane, RoomMsg};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::keymap::Action;
use super::theme::Theme;
use super::verbs::Input;
use super::wrap::wrap;
use crate::serve::judgment::JudgmentCache;
use crate::serve::review::{self, Conversation};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationsPane {
    pub conversations: Vec<Conversation>,
    pub caches: Vec<JudgmentCache>,
    /// Index into the flattened replies (newest conversation first).
    pub row: usize,
    pub loaded: bool,
}

impl ConversationsPane {
    /// (conversation index, reply index) of every reply, in display order.
    fn flat(&self) -> Vec<(usize, usize)> {
        self.conversations
            .iter()
            .enumerate()
            .flat_map(|(c, conv)| (0..conv.replies.len()).map(move |r| (c, r)))
            .collect()
    }

    /// Selects reply `id` where it now is; without it (gone, or none before) the row is kept
    /// within the list.
    pub fn reselect(&mut self, id: Option<i64>) {
        let flat = self.flat();
        let found = id.and_then(|id| {
            flat.iter()
                .position(|(c, r)| self.conversations[*c].replies[*r].id == id)
        });
        self.row = match found {
            Some(i) => i,
            None => self.row.min(flat.len().saturating_sub(1)),
        };
    }

    /// The selected reply's id.
    pub fn selected(&self) -> Option<i64> {
        let (c, r) = *self.flat().get(self.row)?;
        Some(self.conversations[c].replies[r].id)
    }
}

pub type Loaded = (Vec<Conversation>, Vec<JudgmentCache>);

/// What a key in the conversations pane asks of the workbench.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConversationsAsk {
    /// Not this pane's key.
    NotMine,
    /// Handled here (the selection moved), or nothing selected to act on.
    Done,
    /// 👍/👎 on the selected bot reply.
    Thumb { id: i64, up: bool },
    /// Override reply `id`'s verdict (the workbench opens its dialog).
    Override { id: i64 },
    /// Read the conversations again.
    Reload,
}

/// The conversations pane's own verbs, bound in `[pane.conversations]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversationsVerb {
    Reload,
}

impl super::verbs::Verbs for ConversationsVerb {
    const ALL: &'static [(&'static str, Self, &'static str)] = &[(
        "reload",
        ConversationsVerb::Reload,
        "read the bot's conversations again",
    )];
}

impl ConversationsPane {
    /// The pane's own verb (reload) and the conversation's moves, 👍/👎 and override applied
    /// to the selected reply.
    pub fn action(&mut self, input: Input<ConversationsVerb>) -> ConversationsAsk {
        let n = self.flat().len();
        let action = match input {
            Input::Verb(ConversationsVerb::Reload) => return ConversationsAsk::Reload,
            Input::Global(a) => a,
        };
        match action {
            Action::NextTurn => self.row = (self.row + 1).min(n.saturating_sub(1)),
            Action::PrevTurn => self.row = self.row.saturating_sub(1),
            Action::ThumbUp | Action::ThumbDown => {
                return self.selected().map_or(ConversationsAsk::Done, |id| {
                    ConversationsAsk::Thumb {
                        id,
                        up: action == Action::ThumbUp,
                    }
                });
            }
            Action::Override => {
                if let Some(id) = self.selected() {
                    return ConversationsAsk::Override { id };
                }
            }
            _ => return ConversationsAsk::NotMine,
        }
        ConversationsAsk::Done
    }
}

impl ConversationsAsk {
    /// The answer as the workbench carries it out.
    pub fn into_ask(self) -> Ask {
        match self {
            ConversationsAsk::NotMine => Ask::NotMine,
            ConversationsAsk::Done => Ask::Done(None),
            ConversationsAsk::Thumb { id, up } => {
                Ask::Run(None, vec![Command::LineThumb { id, up }])
            }
            ConversationsAsk::Override { id } => Ask::Dialog(Box::new(Modal::Override {
                target: Target::Reply(id),
                status: crate::director::Status::Pass,
                reason: textarea("override: ←/→ verdict, the note, Enter to save"),
            })),
            ConversationsAsk::Reload => {
                Ask::Run(None, vec![Command::LoadRoom(Pane::Conversations)])
            }
        }
    }
}

impl ConversationsPane {
    /// The conversations read from the store; the same reply stays selected across a reload
    /// (new lines above it move its row, never the selection).
    pub fn loaded(&mut self, r: Result<Loaded, UiError>) -> Option<Notice> {
        match r {
            Ok((conversations, caches)) => {
                let keep = self.selected();
                self.conversations = conversations;
                self.caches = caches;
                self.loaded = true;
                self.reselect(keep);
                None
            }
            Err(e) => Some(Notice::failed("conversations", e)),
        }
    }
}

/// The pane's read of the store: the bot's conversations of the last 200 exchanges and the
/// judgment caches (the runtime runs it on the store's thread).
pub fn load(s: &mut crate::store::Store) -> RoomMsg {
    let now = crate::patterns::stamp::now_ms();
    let window = crate::serve::pipeline::WINDOW_SECS * 1000;
    let read = || -> Result<Loaded, crate::store::StoreError> {
        Ok((
            crate::serve::review::conversations(s, now, window, 200)?,
            crate::serve::store::all_caches(s)?,
        ))
    };
    RoomMsg::Conversations(read().map_err(UiError::from))
}

pub fn render(f: &mut Frame, area: Rect, p: &ConversationsPane, t: &Theme) {
    let dim = Style::new().fg(t.dim);
    let mut lines: Vec<Line> = vec![Line::styled(
        "LINE conversations (kakeai serve), newest first",
        Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
    )];
    if !p.loaded {
        lines.push(Line::styled("loading LINE conversations…", dim));
    } else if p.conversations.is_empty() {
        lines.push(Line::styled(
            "no LINE conversations yet — `kakeai serve --line` stores them here",
            dim,
        ));
    }
    let mut flat = 0usize;
    let mut selected_line = 0usize;
    for c in &p.conversations {
        lines.push(Line::from(vec![
            Span::styled(
                format!("● {} ", c.source_type),
                Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
            ),
            Span::styled(short(&c.channel_id), Style::new().fg(t.text)),
            Span::styled(
                format!(
                    " · {} replies · last {}",
                    c.replies.len(),
                    crate::patterns::stamp::iso(c.last_at)
                ),
                dim,
            ),
        ]));
        for r in &c.replies {
            let sel = flat == p.row;
            if sel {
                selected_line = lines.len();
            }
            flat += 1;
            lines.extend(reply_lines(r, sel, area.width, t));
        }
    }
    lines.extend(cache_lines(p, t));
    show(f, area, lines, selected_line);
}

/// One reply: its verdict, source and outcome, then the user's line, hers (or why it was not
/// sent), the findings and the note, wrapped under their labels.
fn reply_lines(r: &review::Reply, sel: bool, area_width: u16, t: &Theme) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let mut lines: Vec<Line> = Vec::new();
    let colour = match r.verdict.as_str() {
        "PASS" => t.pass,
        "WARN" => t.warn,
        "RETRY" => t.retry,
        _ => t.unscored,
    };
    let base = if sel {
        Style::new().bg(t.selected_bg)
    } else {
        Style::new()
    };
    let thumb = match r.thumb {
        Some(1) => " 👍",
        Some(_) => " 👎",
        None => "",
    };
    let source = match r.pattern_id {
        Some(id) => format!("pattern #{id}"),
        None => r.source.clone(),
    };
    lines.push(Line::from(vec![
        Span::styled(
            format!("  [{}{}] ", r.verdict, if r.overridden { "*" } else { "" }),
            base.fg(colour),
        ),
        Span::styled(
            format!(
                "{source} · {}{}{}",
                r.outcome.as_str(),
                thumb,
                if r.review { " · review" } else { "" }
            ),
            base.fg(t.dim),
        ),
    ]));
    let width = usize::from(area_width).max(20);
    let mut text = |label: &str, body: &str, style: Style| {
        for (i, part) in wrap(body, width.saturating_sub(10)).into_iter().enumerate() {
            let head = if i == 0 { label } else { "          " };
            lines.push(Line::from(vec![
                Span::styled(head.to_string(), dim),
                Span::styled(part, style),
            ]));
        }
    };
    text("    user: ", &r.user_text, base.fg(t.text));
    match r.state.as_str() {
        "blocked" => {}
        "sent" => text("    her:  ", &r.text, base.fg(t.accent)),
        other => text(
            &format!("    {other:<6}"),
            &format!("NOT SENT — {}", r.text),
            base.fg(t.retry),
        ),
    }
    if let Some(e) = &r.error {
        text("    why:  ", e, base.fg(t.retry));
    }
    for finding in &r.findings {
        text("    ·     ", finding, base.fg(t.dim));
    }
    if let Some(n) = &r.note {
        text("    note: ", n, dim);
    }
    lines
}

/// Seed 002's judgment cache per scope, and the pane's keys.
fn cache_lines(p: &ConversationsPane, t: &Theme) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let mut lines: Vec<Line> = Vec::new();
    lines.push(Line::styled(
        "judgment cache (seed 002) — scope · next check · confidence · respond · reason",
        Style::new().fg(t.accent),
    ));
    if p.caches.is_empty() {
        lines.push(Line::styled("  (no scope judged yet)", dim));
    }
    for c in &p.caches {
        lines.push(Line::styled(
            format!(
                "  {} · {} · {:.2} · {} · {}",
                short(&c.scope_key()),
                crate::patterns::stamp::iso(c.next_check_at),
                c.confidence,
                if c.should_respond { "yes" } else { "no" },
                c.reason
            ),
            Style::new().fg(t.text),
        ));
    }
    lines.push(Line::styled(
        "j/k select · +/- 👍/👎 · o override + note · R reload",
        dim,
    ));
    lines
}

/// Draws `lines` pre-wrapped to the width, scrolled so the selected reply stays on screen.
fn show(f: &mut Frame, area: Rect, lines: Vec<Line<'static>>, selected_line: usize) {
    // Every line is pre-wrapped to the width (no Paragraph wrap), so line indices are screen
    // rows and the selected reply stays on screen.
    let mut rows: Vec<Line> = Vec::with_capacity(lines.len());
    let mut selected_row = 0;
    for (i, l) in lines.into_iter().enumerate() {
        if i == selected_line {
            selected_row = rows.len();
        }
        rows.extend(fit(l, area.width));
    }
    let height = area.height as usize;
    let scroll = selected_row
        .saturating_sub(height / 3)
        .min(rows.len().saturating_sub(height));
    let lines = rows;
    f.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), area);
}

/// A line broken into screen rows of `width` columns (its spans' styles kept, by character
/// display width), so one line of the result is one screen row.
fn fit(line: Line<'static>, width: u16) -> Vec<Line<'static>> {
    let max = usize::from(width).max(1);
    if line.width() <= max {
        return vec![line];
    }
    let mut rows: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    for sp in line.spans {
        let mut kept = String::new();
        for ch in sp.content.chars() {
            let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + w > max {
                if let Some(row) = rows.last_mut() {
                    row.push(Span::styled(std::mem::take(&mut kept), sp.style));
                }
                rows.push(Vec::new());
                used = 0;
            }
            used += w;
            kept.push(ch);
        }
        if let Some(row) = rows.last_mut() {
            row.push(Span::styled(kept, sp.style));
        }
    }
    rows.into_iter().map(Line::from).collect()
}

/// Ids are long: the first 10 characters and the scope tail.
fn short(id: &str) -> String {
    let (head, tail) = id.split_once(':').unwrap_or((id, ""));
    let h: String = head.chars().take(10).collect();
    let h = if head.chars().count() > 10 {
        format!("{h}…")
    } else {
        h
    };
    if tail.is_empty() {
        h
    } else {
        format!("{h}:{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(ids: &[&[i64]]) -> ConversationsPane {
        let reply = |id: i64| crate::serve::review::Reply {
            id,
            user_text: String::new(),
            text: String::new(),
            verdict: "PASS".into(),
            overridden: false,
            source: "llm".into(),
            pattern_id: None,
            outcome: crate::serve::review::Outcome::Pending,
            review: false,
            thumb: None,
            note: None,
            delivery: "reply".into(),
            at: 0,
            state: "sent".into(),
            error: None,
            findings: Vec::new(),
        };
        ConversationsPane {
            conversations: ids
                .iter()
                .map(|c| Conversation {
                    channel_id: "U".into(),
                    source_type: "user".into(),
                    last_at: 0,
                    replies: c.iter().map(|i| reply(*i)).collect(),
                })
                .collect(),
            caches: Vec::new(),
            row: 0,
            loaded: true,
        }
    }

    #[test]
    fn a_reload_keeps_the_selected_reply_and_never_leaves_the_list() {
        let mut p = pane(&[&[5, 4], &[2]]);
        p.row = 1;
        let keep = p.selected();
        // New replies arrive above it: the same reply stays selected.
        let mut q = pane(&[&[9, 8], &[5, 4], &[2]]);
        q.row = p.row;
        q.reselect(keep);
        assert_eq!(q.selected(), Some(4));
        // It is gone and the list shrank: the row stays inside the list.
        let mut r = pane(&[&[7]]);
        r.row = 3;
        r.reselect(Some(4));
        assert_eq!(r.selected(), Some(7));
        let mut e = pane(&[]);
        e.reselect(Some(1));
        assert_eq!(e.selected(), None);
    }
}
