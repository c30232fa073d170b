//! What is drawn over the panes: dialogs (framed, titled with the turn and sister they act on,
//! with their whole key bar, wrapped rather than cut), the help screen (descriptions wrapped;
//! it scrolls a row or a page), the error box and the status line (cut with `…` only). An overlay first clears the cells it covers — including
//! a wide character that straddles its left edge, whose first half lies outside: ratatui's diff
//! skips the cell after a wide character, so without this the dialog's left border was never
//! sent to the terminal and the character under it was half drawn (`…どうしよっharacters/あゆ/…`).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::text::width::width;
use crate::tui::app::App;
use crate::tui::app::commands::{footer_items, footer_text, help_rows};
use crate::tui::theme::Theme;
use crate::tui::wrap::wrap;

pub use crate::tui::cells::clear;

/// A dialog's key bar: `(key, what)` pairs in the accent colour, as many to a row as fit in
/// `cols`; a pair never splits across rows, and one wider than a row ends in `…`.
pub fn key_bar(items: &[(String, String)], t: &Theme, cols: u16) -> Vec<Line<'static>> {
    let room = usize::from(cols);
    let mut rows: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    for (k, what) in items {
        let item = width(k) + 1 + width(what);
        if used > 0 && used + 3 + item > room {
            rows.push(Vec::new());
            used = 0;
        }
        let Some(row) = rows.last_mut() else { break };
        if used > 0 {
            row.push(Span::styled(" · ", Style::new().fg(t.dim)));
            used += 3;
        }
        row.push(Span::styled(k.clone(), Style::new().fg(t.accent)));
        row.push(Span::styled(format!(" {what}"), Style::new().fg(t.dim)));
        used += item;
    }
    rows.into_iter()
        .map(|r| crate::tui::fit::line(Line::from(r), cols))
        .collect()
}

/// The status line, or the pane's keys; cut with `…` when longer than the screen is wide.
pub fn footer(f: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let text = if app.status.is_empty() {
        footer_text(&footer_items(app), area.width as usize)
    } else {
        app.status.clone()
    };
    let line = crate::tui::fit::line(Line::styled(text, Style::new().fg(t.dim)), area.width);
    f.render_widget(Paragraph::new(line), area);
}

/// The oldest unacknowledged error, whole (wrapped), in a box above the command bar.
pub fn errors(f: &mut Frame, body: Rect, app: &App, t: &Theme) {
    let Some(e) = app.errors.first() else {
        return;
    };
    let inner_w = body.width.saturating_sub(2).max(2) as usize;
    let rows = wrap(e, inner_w);
    let h = (rows.len() as u16 + 2).min(body.height.max(3));
    let area = Rect::new(body.x, body.bottom().saturating_sub(h), body.width, h);
    clear(f, area);
    let more = app.errors.len() - 1;
    let title = if more > 0 {
        format!(" error · Esc dismisses · {more} more ")
    } else {
        " error · Esc dismisses ".to_string()
    };
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|r| Line::styled(r, Style::new().fg(t.retry)))
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(title)
                .border_style(Style::new().fg(t.retry)),
        ),
        area,
    );
}

pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Width of the help screen's key column, and of the gap after it.
const KEY_COL: usize = 18;
const GAP: usize = 2;

/// The help screen: every binding grouped by pane, then the dialogs' keys; descriptions wrap
/// beside the key column; it scrolls a row or a page at a time.
pub fn help(f: &mut Frame, app: &App, t: &Theme) {
    let w = f.area().width.min(84);
    let lines = help_lines(app, t, w.saturating_sub(2) as usize);
    let area = centered(f.area(), w, lines.len() as u16 + 2);
    clear(f, area);
    let visible = area.height.saturating_sub(2) as usize;
    app.help_view.set((lines.len(), visible));
    let top = app.help_scroll.min(lines.len().saturating_sub(visible));
    let title = format!(
        " help · rows {}–{} of {} · ↑/↓ PgUp/PgDn scroll · any other key closes ",
        top + 1,
        (top + visible).min(lines.len()),
        lines.len()
    );
    let title = crate::tui::fit::line(Line::raw(title), area.width.saturating_sub(2));
    let shown: Vec<Line> = lines.into_iter().skip(top).take(visible).collect();
    f.render_widget(
        Paragraph::new(shown).block(Block::bordered().title(title)),
        area,
    );
}

/// The help screen's rows at `inner` columns: headings, then keys with their descriptions
/// wrapped (a continuation starts under the description); nothing is cut without `…`.
fn help_lines(app: &App, t: &Theme, inner: usize) -> Vec<Line<'static>> {
    let desc_w = inner.saturating_sub(KEY_COL + GAP).max(10);
    let mut lines = Vec::new();
    for (keys, what) in help_rows(app) {
        if what.is_empty() {
            let head = Line::styled(keys, Style::new().fg(t.dim).add_modifier(Modifier::BOLD));
            lines.push(crate::tui::fit::line(head, inner as u16));
            continue;
        }
        let k = crate::tui::fit::line(Line::raw(keys), KEY_COL as u16);
        let k: String = k.spans.iter().map(|s| s.content.as_ref()).collect();
        for (i, row) in wrap(&what, desc_w).into_iter().enumerate() {
            // A continuation starts at the description's left edge (no space carried over).
            let row = if i == 0 {
                row
            } else {
                row.trim_start().to_string()
            };
            let key = if i == 0 {
                pad_left(&k, KEY_COL)
            } else {
                " ".repeat(KEY_COL)
            };
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{key}{}", " ".repeat(GAP)),
                    Style::new().fg(t.accent),
                ),
                Span::styled(row, Style::new().fg(t.text)),
            ]));
        }
    }
    lines
}

fn pad_left(s: &str, cols: usize) -> String {
    let w = width(s);
    if w >= cols {
        s.to_string()
    } else {
        format!("{}{s}", " ".repeat(cols - w))
    }
}

impl App {
    /// Keys while the help screen is open: arrows scroll a row, PgUp/PgDn a page (the rows on
    /// screen), Home/End to either end; anything else closes. The scroll stops at the last
    /// full page, so PgUp after End moves at once.
    pub(crate) fn help_key(&mut self, key: KeyEvent) {
        let (rows, page) = match self.help_view.get() {
            // Not drawn yet: every row, one at a time.
            (0, _) => (help_rows(self).len(), 1),
            (rows, page) => (rows, page.max(1)),
        };
        let last = rows.saturating_sub(page);
        let s = &mut self.help_scroll;
        *s = (*s).min(last);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => *s = s.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *s = (*s + 1).min(last),
            KeyCode::PageUp => *s = s.saturating_sub(page),
            KeyCode::PageDown => *s = (*s + page).min(last),
            KeyCode::Home => *s = 0,
            KeyCode::End => *s = last,
            _ => self.help = false,
        }
    }
}

/// A dialog: a frame titled with what it acts on (turn and sister), a label line, the text
/// field, and its whole key bar at the bottom (wrapped to more rows rather than cut).
pub fn dialog(
    f: &mut Frame,
    area: Rect,
    title: String,
    label: Line<'static>,
    ta: &ratatui_textarea::TextArea<'static>,
    keys: &[(String, String)],
    t: &Theme,
) {
    clear(f, area);
    let title = crate::tui::fit::line(Line::raw(title), area.width.saturating_sub(2));
    let frame = Block::bordered()
        .title(title)
        .border_style(Style::new().fg(t.accent));
    let inner = frame.inner(area);
    f.render_widget(frame, area);
    let bar = key_bar(keys, t, inner.width);
    let [top, rest, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(bar.len() as u16),
    ])
    .areas(inner);
    f.render_widget(
        Paragraph::new(crate::tui::fit::line(label, inner.width)),
        top,
    );
    f.render_widget(ta, rest);
    f.render_widget(Paragraph::new(bar), bottom);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At any width every pair of the longest key bar shows whole on some row (or, wider than
    /// a row, ends in …), and no row is wider than the width.
    #[test]
    fn a_key_bar_wraps_whole_pairs_within_the_width() {
        let t = &crate::tui::theme::load_all().0[0];
        let keys = crate::tui::app::commands::data()
            .dialogs
            .get("feedback")
            .cloned()
            .unwrap_or_default();
        for cols in 8..=100u16 {
            let rows = key_bar(&keys, t, cols);
            let texts: Vec<String> = rows
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            for r in &texts {
                assert!(width(r) <= usize::from(cols), "{cols}: {r}");
            }
            for (k, what) in &keys {
                let pair = format!("{k} {what}");
                let whole = texts.iter().any(|r| r.contains(&pair));
                let cut =
                    width(&pair) > usize::from(cols) && texts.iter().any(|r| r.ends_with('…'));
                assert!(whole || cut, "{cols}: {pair} missing from {texts:?}");
            }
        }
    }
}
