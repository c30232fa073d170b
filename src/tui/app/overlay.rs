//! What is drawn over the panes: dialogs (with their own key bar), the scrolling help screen,
//! the error box and the command bar. An overlay first clears the cells it covers — including
//! a wide character that straddles its left edge, whose first half lies outside: ratatui's diff
//! skips the cell after a wide character, so without this the dialog's left border was never
//! sent to the terminal and the character under it was half drawn (`…どうしよっharacters/あゆ/…`).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::text::width::width;
use crate::tui::app::App;
use crate::tui::app::commands::{footer_items, footer_text, help_rows};
use crate::tui::theme::Theme;
use crate::tui::wrap::wrap;

/// Clears `area` for an overlay, and blanks a wide character whose right half is under it.
pub fn clear(f: &mut Frame, area: Rect) {
    f.render_widget(Clear, area);
    let buf = f.buffer_mut();
    if area.x == 0 {
        return;
    }
    for y in area.top()..area.bottom() {
        let Some(cell) = buf.cell_mut((area.x - 1, y)) else {
            continue;
        };
        if width(cell.symbol()) > 1 {
            cell.set_symbol(" ");
        }
    }
}

/// One line of `(key, what)` pairs in the accent colour, for a dialog's key bar.
pub fn key_bar(items: &[(String, String)], t: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (i, (k, what)) in items.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", Style::new().fg(t.dim)));
        }
        spans.push(Span::styled(k.clone(), Style::new().fg(t.accent)));
        spans.push(Span::styled(format!(" {what}"), Style::new().fg(t.dim)));
    }
    Line::from(spans)
}

pub fn footer(f: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let text = if app.status.is_empty() {
        footer_text(&footer_items(app), area.width as usize)
    } else {
        crate::text::width::truncate(&app.status, area.width as usize).to_string()
    };
    f.render_widget(
        Paragraph::new(Line::styled(text, Style::new().fg(t.dim))),
        area,
    );
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

/// The help screen: every binding grouped by pane, then the dialogs' keys; it scrolls.
pub fn help(f: &mut Frame, app: &App, t: &Theme) {
    let rows = help_rows(app);
    let area = centered(f.area(), 84, rows.len() as u16 + 2);
    clear(f, area);
    let visible = area.height.saturating_sub(2) as usize;
    let top = app.help_scroll.min(rows.len().saturating_sub(visible));
    let desc_w = area.width.saturating_sub(2 + 20) as usize;
    let lines: Vec<Line> = rows
        .iter()
        .skip(top)
        .take(visible)
        .map(|(keys, what)| {
            if what.is_empty() {
                return Line::styled(
                    keys.clone(),
                    Style::new().fg(t.dim).add_modifier(Modifier::BOLD),
                );
            }
            let k = crate::text::width::truncate(keys, 18);
            Line::from(vec![
                Span::styled(format!("{}  ", pad_left(k, 18)), Style::new().fg(t.accent)),
                Span::styled(
                    crate::text::width::truncate(what, desc_w).to_string(),
                    Style::new().fg(t.text),
                ),
            ])
        })
        .collect();
    let title = format!(
        " keys {}–{} of {} · ↑/↓ PgUp/PgDn scroll · any other key closes ",
        top + 1,
        (top + visible).min(rows.len()),
        rows.len()
    );
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        area,
    );
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
    /// Keys while the help screen is open: arrows and pages scroll, anything else closes.
    pub(crate) fn help_key(&mut self, key: KeyEvent) {
        let n = help_rows(self).len();
        let s = &mut self.help_scroll;
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => *s = s.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *s = (*s + 1).min(n.saturating_sub(1)),
            KeyCode::PageUp => *s = s.saturating_sub(10),
            KeyCode::PageDown => *s = (*s + 10).min(n.saturating_sub(1)),
            KeyCode::Home => *s = 0,
            KeyCode::End => *s = n.saturating_sub(1),
            _ => self.help = false,
        }
    }
}

/// A dialog: label line, the text field, and its own key bar at the bottom.
pub fn dialog(
    f: &mut Frame,
    area: Rect,
    label: Line<'static>,
    ta: &ratatui_textarea::TextArea<'static>,
    keys: &[(String, String)],
    t: &Theme,
) {
    clear(f, area);
    let [top, rest, bar] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(label), top);
    f.render_widget(ta, rest);
    f.render_widget(Paragraph::new(key_bar(keys, t)), bar);
}
